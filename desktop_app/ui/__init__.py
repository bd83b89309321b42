"""Folio's window: PySide6 widgets driven by qasync, talking only to the async facade.

Importing this package first applies the PySide6 workaround in ``compat`` (it must run
before PySide6 has made a few thousand calls).
"""

from desktop_app.ui.qt.compat import keep_singletons_alive

keep_singletons_alive()
