"""``folio`` / ``python -m desktop_app``: a subcommand runs headless (cli.py); anything else
opens the window (ui/app.py). ``folio --pip ARGS`` runs pip itself: the frozen bundle has no
``python -m pip``, so the model installer starts Folio's own executable that way."""

from __future__ import annotations

import os
import sys

# Exact vector search is one matrix-vector product: one BLAS thread is fastest on a busy
# machine (DESIGN.md). Set before numpy is imported anywhere.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS_BLAS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from desktop_app.core.models.install import PIP_FLAG, run_pip_main

    if argv[:1] == [PIP_FLAG]:
        return run_pip_main(argv[1:])
    from desktop_app.cli import COMMANDS

    if argv and (argv[0] in COMMANDS or argv[0] in ("--version", "-h", "--help")):
        from desktop_app.cli import main as cli_main

        return cli_main(argv)
    from desktop_app.ui.window.app import main as gui_main

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
