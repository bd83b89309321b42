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
