"""Folio's one logging setup: the window, the command line and the keep-alive model process
each call :func:`configure_logging` once at start. Qt-free.

A record goes to the terminal (stderr) from ``console_level`` up, and, with ``to_file``,
everything from INFO up (DEBUG when ``verbose``), tracebacks included, to ``folio.log`` in
the log folder, rotated past 2 MB (the window's and the command line's lines, one file).
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.errors import KnownError

__all__ = ["CONSOLE_FORMAT", "LINE_FORMAT", "configure_logging"]

logger = logging.getLogger(__name__)

CONSOLE_FORMAT = "%(levelname)s %(name)s: %(message)s"  # what a person reads in the terminal
LINE_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"  # a log file's line
LOG_FILE = "folio.log"
_LOG_MAX = 2_000_000
_LOG_BACKUPS = 3


def configure_logging(*, verbose: bool = False, console_level: int = logging.WARNING,
                      console_format: str = CONSOLE_FORMAT, tracebacks: bool = True,
                      to_file: bool = True, say_without_file: bool = False) -> Path | None:
    """Set up the root logger unless it has handlers already (tests, or an entry point that
    called this first). ``verbose``: DEBUG to both the terminal and the file;
    ``tracebacks=False``: one line a record on the terminal (the traceback goes to the
    file, not to the person); ``say_without_file``: a warning when the log file cannot
    be written. Returns the log file's path (None when not written)."""
    root = logging.getLogger()
    if root.handlers:
        return None
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if verbose else console_level)
    console.setFormatter(logging.Formatter(console_format) if tracebacks else _ShortFormatter(console_format))
    root.addHandler(console)
    if not to_file:
        return None
    try:
        log_path = paths.log_dir() / LOG_FILE
        log_file = logging.handlers.RotatingFileHandler(log_path, maxBytes=_LOG_MAX, backupCount=_LOG_BACKUPS,
                                                        encoding="utf-8")
    except (OSError, KnownError) as error:
        if say_without_file:
            logger.warning("no log file: %s", error)
        return None
    log_file.setFormatter(logging.Formatter(LINE_FORMAT))
    root.addHandler(log_file)
    return log_path


class _ShortFormatter(logging.Formatter):
    """One line a record: the traceback goes to the log file, not to the person."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text
        record.exc_info, record.exc_text = None, None
        try:
            return super().format(record)
        finally:
            record.exc_info, record.exc_text = saved
