"""Where Folio keeps its files. ``FOLIO_HOME`` moves all of them (tests use it). Qt-free."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

logger = logging.getLogger(__name__)

APP_NAME = "folio"


def home() -> Path | None:
    value = os.environ.get("FOLIO_HOME")
    return Path(value).expanduser().resolve() if value else None


def data_dir() -> Path:
    base = home()
    if base is not None:
        path = base / "data"
    else:
        import platformdirs

        path = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir() -> Path:
    base = home()
    if base is not None:
        path = base / "config"
    else:
        import platformdirs

        path = Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def log_dir() -> Path:
    base = home()
    if base is not None:
        path = base / "logs"
    else:
        import platformdirs

        path = Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    """Installed models. ``FOLIO_MODELS_DIR`` points elsewhere (tests share one install)."""
    override = os.environ.get("FOLIO_MODELS_DIR")
    path = Path(override).expanduser().resolve() if override else data_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def library_dir(chosen: str) -> Path:
    """Where the library lives: ``chosen`` (the settings' ``data_dir``), else
    :func:`data_dir` — also when the chosen folder cannot be made. The window and the
    command line pass the same settings, so they open the same library."""
    if chosen:
        folder = Path(chosen).expanduser()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return folder
        except OSError as error:
            logger.warning("data folder %s unusable (%s); using the default", folder, error)
    return data_dir()


def db_path(chosen: str) -> Path:
    """The library's database in the data folder ``chosen`` (the settings' ``data_dir``):
    the one place its location is built."""
    return library_dir(chosen) / "library.duckdb"


def write_atomic(path: Path, data: bytes, mode: int = 0o644, sync: bool = True) -> Path:
    """Write ``data`` to ``path`` so that a crash at any moment leaves the old file or the
    new one, never a torn one: a temporary file beside it (created with ``mode``, so a
    private file is never readable by others, not even for a moment), flushed to disk,
    then renamed over ``path``, and the folder's entry flushed too. ``sync=False`` skips
    the flushes (files whose loss costs nothing). A failure removes the temporary file
    and raises the OSError."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        try:
            if not mode & 0o077 and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # private: exact even if the file was left by a crash
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    _sweep_temporaries(path)
    if sync and hasattr(os, "O_DIRECTORY"):
        try:
            folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except OSError:  # some file systems cannot sync a folder; the rename stands
            logger.debug("folder sync of %s failed", path.parent, exc_info=True)
    return path


def _sweep_temporaries(path: Path) -> None:
    """Remove the temporary files of writes to ``path`` that a killed process left."""
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            pid = int(leftover.name[len(path.name) + 2:-4])
            os.kill(pid, 0)  # alive: its write is under way
        except ProcessLookupError:
            leftover.unlink(missing_ok=True)
        except (ValueError, OSError):
            continue


def is_frozen() -> bool:
    """True inside the PyInstaller bundle (``packaging/folio.spec``)."""
    return bool(getattr(sys, "frozen", False))


def repo_root() -> Path:
    """The source checkout (or bundle) root: holds ``resources/`` and ``models/manifest.toml``.

    Frozen, that is the bundle's data folder (``sys._MEIPASS``, ``dist/folio/_internal``),
    where ``packaging/folio.spec`` puts both. Every file Folio ships is found from here.
    """
    bundle = getattr(sys, "_MEIPASS", None)
    if is_frozen() and bundle:
        return Path(bundle).resolve()
    return Path(__file__).resolve().parents[2]


def resources_dir() -> Path:
    return repo_root() / "resources"
