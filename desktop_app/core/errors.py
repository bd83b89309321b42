"""Two families of errors: the environment's fault (KnownError) and bugs (everything else).

Every I/O failure a person can meet is one of the KnownError family below, with its
fix in ``hint``: a full disk, a file or folder Folio may not write, a library that is
damaged, written by a newer Folio, held by another process, or no library at all.
:func:`io_error` turns an ``OSError`` (or a database's I/O error text) into one of them.

Qt-free.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path


class KnownError(Exception):
    """A failure caused by the environment, with a message meant for the user.

    Examples: an unreadable PDF, a wrong password, a missing model, a full disk.
    ``hint`` names what the user can do about it (a command, a setting).
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip() if self.hint else self.message


class ModelMissingError(KnownError):
    """A model file is not installed or failed its checksum."""


class DiskFullError(KnownError):
    """No space left where Folio writes; nothing committed before is lost."""


class NotWritableError(KnownError):
    """Permission denied, or a read-only folder or disk."""


class LibraryError(KnownError):
    """Something about the library file itself; ``path`` names it."""

    def __init__(self, message: str, hint: str = "", path: Path | str = "") -> None:
        super().__init__(message, hint)
        self.path = str(path)


class LibraryDamagedError(LibraryError):
    """The library file is a DuckDB file that cannot be read: ``folio repair`` moves it
    aside and rebuilds the index from the documents (the saved answers live apart)."""


class NotALibraryError(LibraryError):
    """The file at the library's path is not a DuckDB database at all."""


class LibraryTooNewError(LibraryError):
    """The library was written by a newer Folio (a schema this one does not know)."""


class LibraryBusyError(LibraryError):
    """Another process holds the library for writing; ``holder`` says which."""

    def __init__(self, message: str, hint: str = "", path: Path | str = "", holder: str = "") -> None:
        super().__init__(message, hint, path)
        self.holder = holder


class Cancelled(Exception):
    """Raised inside a worker when the user cancelled the operation."""


def free_space_text(path: Path | str) -> str:
    """"12 MB free on /home" for the file system holding ``path`` (its nearest existing
    parent); "" when it cannot be told."""
    where = Path(path)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        return ""
    mount = where.resolve()
    while not os.path.ismount(mount) and mount != mount.parent:
        mount = mount.parent
    megabytes = free / 1e6
    amount = f"{megabytes:.0f} MB" if megabytes >= 10 else f"{megabytes:.1f} MB"
    return f"{amount} free on {mount}"


# What databases (DuckDB, SQLite) say when the OS said one of these errors.
_DISK_FULL_WORDS = ("no space left", "disk is full", "database or disk is full", "enospc", "quota exceeded")
_READ_ONLY_WORDS = ("read-only file system", "readonly database", "attempt to write a readonly")
_PERMISSION_WORDS = ("permission denied", "operation not permitted")


def io_error(exc: BaseException, path: Path | str, doing: str) -> KnownError | None:
    """The KnownError for an I/O failure while ``doing`` something with ``path`` (e.g.
    "writing the library"); None when ``exc`` is not one Folio knows (a bug then)."""
    if isinstance(exc, KnownError):
        return exc
    code = exc.errno if isinstance(exc, OSError) else None
    text = str(exc).lower()
    if code in (errno.ENOSPC, errno.EDQUOT) or any(w in text for w in _DISK_FULL_WORDS):
        free = free_space_text(path)
        return DiskFullError(
            f"The disk is full while {doing}" + (f" ({free})." if free else "."),
            "Free some space and run it again: nothing saved or indexed so far is lost, and "
            "indexing resumes where it stopped.",
        )
    if code == errno.EROFS or any(w in text for w in _READ_ONLY_WORDS):
        return NotWritableError(
            f"{path} is on a read-only disk or folder, so Folio cannot go on {doing}.",
            "Pick a library in a folder you can write to (Settings ▸ Data folder, or --db).",
        )
    if code in (errno.EACCES, errno.EPERM) or any(w in text for w in _PERMISSION_WORDS):
        return NotWritableError(
            f"Folio may not write {path} (permission denied) while {doing}.",
            "Give your user write access to it, or pick another library folder "
            "(Settings ▸ Data folder, or --db).",
        )
    return None
