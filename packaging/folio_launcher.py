"""The bundle's entry point (``packaging/folio.spec``): ``dist/folio/folio [ARGS]``.

``freeze_support()`` comes first: the PDF parse pool starts ``spawn`` workers, which in a
frozen build are this same executable with multiprocessing's arguments; it runs their
work and exits before Folio starts. ``folio --pip ARGS`` (the model installer) is handled
by ``desktop_app.__main__.main``.
"""

from __future__ import annotations

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from desktop_app.__main__ import main

    sys.exit(main())
