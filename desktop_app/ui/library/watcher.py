"""Watch the open folder and ask for a background re-index when its documents (PDF and
the other formats Folio reads) change.

``QFileSystemWatcher`` reports changes to the folder, its subfolders and (up to a cap)
the PDFs themselves at once; a polling timer compares a cheap snapshot (path, size,
mtime of every PDF) every few seconds, for file systems that send no events (network
shares, some containers) and for whatever lies past the cap. Both only arm a debounce
timer: a copy of 200 files, or an editor's save-by-rename, gives one re-index once
things have been quiet for :data:`DEBOUNCE_MS`. A change that arrives while an index run
is going does not interrupt it; one more run is queued for when it ends.

The re-index itself is the window's business (``reindex`` callback): it parses only
what changed, keeps the chunks of moved files and marks deleted ones removed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from desktop_app.core.types import is_document_file, is_hidden

logger = logging.getLogger(__name__)

DEBOUNCE_MS = 1500
POLL_MS = 10_000
MAX_WATCHED_FILES = 2000  # past this, changes inside files are seen by polling only
MAX_WATCHED_DIRS = 500

Snapshot = dict[str, tuple[int, int]]  # PDF path -> (size, mtime in ns)


def snapshot(folder: str) -> tuple[Snapshot, list[str]]:
    """The PDFs under ``folder`` with their size and mtime, and its subfolders; hidden
    entries are skipped as the indexer skips them."""
    pdfs: Snapshot = {}
    dirs: list[str] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        dirs.append(current)
        try:
            entries = list(os.scandir(current))
        except OSError:  # vanished or unreadable meanwhile: the next look will tell
            continue
        for entry in entries:
            if is_hidden(entry.name):
                continue
            try:
                if entry.is_dir():
                    pending.append(entry.path)
                elif is_document_file(entry.name) and entry.is_file():
                    stat = entry.stat()
                    pdfs[entry.path] = (stat.st_size, stat.st_mtime_ns)
            except OSError:
                continue
    return pdfs, dirs


class FolderWatcher(QObject):
    """Calls ``reindex()`` when the PDFs under the watched folder changed, debounced,
    and never while ``is_indexing()``; at most one run is queued behind a running one."""

    reindex_requested = Signal(str)  # the folder, when ``reindex`` has been called

    def __init__(
        self,
        reindex: Callable[[], object],
        is_indexing: Callable[[], bool],
        parent: QObject | None = None,
        *,
        debounce_ms: int = DEBOUNCE_MS,
        poll_ms: int = POLL_MS,
        use_events: bool = True,
    ) -> None:
        super().__init__(parent)
        self._reindex = reindex
        self._is_indexing = is_indexing
        self.folder = ""
        self._baseline: Snapshot = {}
        self.pending = False  # a change is waiting for the running index to end
        self._events: QFileSystemWatcher | None = None
        if use_events:
            self._events = QFileSystemWatcher(self)
            self._events.directoryChanged.connect(self._on_event)
            self._events.fileChanged.connect(self._on_event)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(debounce_ms)
        self._debounce.timeout.connect(self._settle)
        self._poll = QTimer(self)
        self._poll.setInterval(poll_ms)
        self._poll.timeout.connect(self._on_poll)

    # ------------------------------------------------------------------ control

    def watch(self, folder: str) -> None:
        """Watch ``folder`` from now on; what it holds now counts as indexed (the caller
        is starting an index run of it)."""
        folder = str(Path(folder).resolve())
        self._baseline, dirs = snapshot(folder)
        self.pending = False
        self._debounce.stop()
        if folder != self.folder:
            self.folder = folder
            self._set_watched(dirs, list(self._baseline))
        self._poll.start()

    def stop(self) -> None:
        self._debounce.stop()
        self._poll.stop()
        if self._events is not None:
            self._set_watched([], [])
        self.folder = ""
        self.pending = False

    # ------------------------------------------------------------------ internals

    def _set_watched(self, dirs: list[str], files: list[str]) -> None:
        if self._events is None:
            return
        wanted = set(dirs[:MAX_WATCHED_DIRS]) | set(sorted(files)[:MAX_WATCHED_FILES])
        current = set(self._events.directories()) | set(self._events.files())
        gone = sorted(current - wanted)
        new = sorted(p for p in wanted - current if os.path.exists(p))
        if gone:
            self._events.removePaths(gone)
        if new:
            failed = self._events.addPaths(new)
            if failed:
                logger.info("not watching %d paths (polling covers them)", len(failed))

    def _on_event(self, path: str) -> None:
        logger.debug("changed: %s", path)
        self._debounce.start()  # (re)start: wait until things are quiet

    def _on_poll(self) -> None:
        if self._debounce.isActive():
            return
        if snapshot(self.folder)[0] != self._baseline:
            self._debounce.start()

    def _settle(self) -> None:
        """Quiet for a debounce interval: re-index if the PDFs differ from the baseline."""
        if not self.folder:
            return
        now, dirs = snapshot(self.folder)
        self._set_watched(dirs, list(now))  # new subfolders and files get watched too
        if now == self._baseline:  # e.g. a file touched and put back, or not a PDF
            self.pending = False
            return
        if self._is_indexing():
            self.pending = True  # look again once that run has ended
            self._debounce.start()
            return
        logger.info("%s changed: re-indexing in the background", self.folder)
        self._baseline = now
        self.pending = False
        self._reindex()
        self.reindex_requested.emit(self.folder)
