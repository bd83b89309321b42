"""Work around a PySide6 6.12 reference-count bug on Python 3.11. Qt-free.

PySide6 6.12's abi3 wheels hand out ``None``, ``True`` and ``False`` without taking a
reference, as if they were immortal (they are from Python 3.12, PEP 683): every void
method (``QWidget.update``, ``QScrollBar.setValue``, ``QLabel.setText``…) takes one
reference from ``None``, every ``Signal.emit`` one from ``True``. Measured here: 1,000
calls of ``QWidget.update()`` lower ``sys.getrefcount(None)`` by exactly 1,000, 500
emits lower ``True``'s by 500. After a few thousand such calls the count reaches zero and
the interpreter aborts ("none_dealloc: deallocating None", "bool_dealloc").

The fix does what 3.12 does: give these three objects a reference count so large that it
can never reach zero. They are never freed while the interpreter runs; nothing else changes.
"""

from __future__ import annotations

import sys

_LARGE = 1 << 60


def keep_singletons_alive() -> bool:
    """Make ``None``, ``True`` and ``False`` effectively immortal on CPython < 3.12;
    True if that was needed."""
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    import ctypes

    for singleton in (None, True, False):
        count = ctypes.c_ssize_t.from_address(id(singleton))
        if count.value < _LARGE // 2:
            # Runs holding the GIL, so no other Python thread changes the count meanwhile.
            count.value += _LARGE
    return True
