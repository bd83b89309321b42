"""The library area of the facade: index, rebuild and repair the library, say what keeps
it from being used, and read it (search within a scope, documents, a document's parts,
a source's state, a page's OCR lines). Qt-free."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from desktop_app.core.errors import KnownError, LibraryError
from desktop_app.core.settings import Settings
from desktop_app.core.types import (
    DocumentInfo,
    DocumentPart,
    IndexEvent,
    LibraryMovedAside,
    OcrLine,
    Passage,
    SourceState,
)
from desktop_app.services.bridge import ThreadBridge
from desktop_app.services.parts import SharedParts

logger = logging.getLogger(__name__)


class LibraryService:
    def __init__(self, settings: Settings, parts: SharedParts, bridge: ThreadBridge) -> None:
        self._settings = settings
        self._parts = parts  # the library and answers files, the embedder, the retriever
        self._bridge = bridge

    async def index(
        self, folder: str | Path, passwords: dict[str, str] | None = None
    ) -> AsyncIterator[IndexEvent]:
        folder = Path(folder).expanduser()
        if not folder.is_dir():
            raise KnownError(f"{folder} is not a folder.", "Pick a folder that holds documents (PDF, HTML, EPUB, DOCX, ODT, PPTX, Markdown, text).")

        def work(emit: Callable[[IndexEvent], None], cancelled: Callable[[], bool]) -> None:
            from desktop_app.core.ingest.indexing import Indexer

            store, embedder = self._parts.store, self._parts.embedder
            self._parts.archive.remember_folder(str(folder.resolve()))  # what a repair rebuilds from
            indexer = Indexer(store, embedder, parse_timeout_s=self._settings.parse_timeout_s,
                              ocr=self._settings.ocr)
            emit(indexer.run(folder, emit, cancelled, passwords))

        async for event in self._bridge.stream(self._bridge.index_pool, work, "indexing"):
            yield event

    async def problem(self) -> KnownError | None:
        """Open the library and read it whole; what keeps it from being used (damaged, not
        a library, busy, …), or None. Reads every row: a damaged file often opens and
        fails only where its lost blocks are read."""

        def probe() -> KnownError | None:
            try:
                self._parts.store.verify()
            except KnownError as exc:
                if isinstance(exc, LibraryError):
                    self._parts.drop_store()
                return exc
            return None

        return await self._bridge.call(self._bridge.query_pool, probe)

    async def repair(self, folders: Sequence[str | Path] = ()) -> AsyncIterator[IndexEvent | LibraryMovedAside]:
        """Move a library that cannot be read aside (renamed ``<name>.damaged-<time>``, never
        deleted) and rebuild the index from the folders it was indexed from (and
        ``folders``); the saved answers, kept in their own file, stay. Yields
        LibraryMovedAside, then each folder's index events. A library that reads whole is
        left alone (a KnownError says so), as is one another process holds."""
        from desktop_app.core.library import repair

        extra = [str(Path(f).expanduser().resolve()) for f in folders]
        for folder in extra:
            if not Path(folder).is_dir():
                raise KnownError(f"{folder} is not a folder.", "Name the folders the library was indexed from.")

        def work(emit: Callable[[IndexEvent | LibraryMovedAside], None], cancelled: Callable[[], bool]) -> None:
            from desktop_app.core.ingest.indexing import Indexer

            self._parts.drop_store()
            problem = repair.check(self._parts.db_path)
            if problem is None:
                raise KnownError(f"The library {self._parts.db_path} reads whole: nothing to repair.",
                                 "Use `folio index FOLDER` to bring it up to date.")
            if not repair.needs_repair(problem):
                raise problem  # busy, a full disk, permissions: moving the file would not help
            archive = self._parts.archive
            moved = repair.move_aside(self._parts.db_path)
            repair.salvage_answers(moved, archive)
            known = archive.folders()
            todo = list(dict.fromkeys(known + extra))
            emit(LibraryMovedAside(path=str(self._parts.db_path), moved_to=str(moved), problem=str(problem),
                                   folders=tuple(todo), answers=len(archive.answers())))
            store, embedder = self._parts.store, self._parts.embedder
            for folder in todo:
                if cancelled():
                    break
                if not Path(folder).is_dir():
                    logger.warning("cannot rebuild from %s: it is gone", folder)
                    continue
                archive.remember_folder(folder)
                indexer = Indexer(store, embedder, parse_timeout_s=self._settings.parse_timeout_s,
                                  ocr=self._settings.ocr)
                emit(indexer.run(folder, emit, cancelled))

        async for event in self._bridge.stream(self._bridge.index_pool, work, "rebuilding the library"):
            yield event

    async def reindex(self) -> AsyncIterator[IndexEvent]:
        def work(emit: Callable[[IndexEvent], None], cancelled: Callable[[], bool]) -> None:
            from desktop_app.core.ingest.indexing import Indexer

            Indexer(self._parts.store, self._parts.embedder).reindex(emit, cancelled)

        async for event in self._bridge.stream(self._bridge.index_pool, work, "rebuilding the search data"):
            yield event

    def within(self, scope: Sequence[str | Path]) -> tuple[str, ...]:
        """The absolute paths of ``scope`` (files and folders); a KnownError names a path that
        holds no indexed document. Reads the library: call it on a worker thread."""
        resolved = tuple(dict.fromkeys(str(Path(p).expanduser().resolve()) for p in scope))
        for path in resolved:
            if not self._parts.store.files_within([path]):
                raise KnownError(
                    f"{path} holds no document of the library.",
                    "Ask within a PDF or a folder that was indexed (folio index FOLDER).",
                )
        return resolved

    async def search(self, query: str, k: int = 10, scope: Sequence[str | Path] = ()) -> list[Passage]:
        def find() -> list[Passage]:
            return self._parts.retriever.search(query, k, scope=self.within(scope)).passages

        return await self._bridge.call(self._bridge.query_pool, find)

    async def documents(self, folder: str | Path | None = None) -> list[DocumentInfo]:
        where = str(Path(folder).expanduser().resolve()) if folder else None
        return await self._bridge.call(self._bridge.query_pool, lambda: self._parts.store.documents(where))

    async def source_state(self, chunk_id: str, doc_id: str) -> SourceState:
        from desktop_app.core.library.history import source_state

        return await self._bridge.call(self._bridge.query_pool,
                                       lambda: source_state(self._parts.store, chunk_id, doc_id))

    async def ocr_lines(self, doc_id: str, page: int, char_start: int, char_end: int) -> list[OcrLine]:
        """The OCR lines of a page holding ``char_start:char_end`` of its text (none on a
        page with its own text layer), boxed as the viewer draws them."""
        from desktop_app.core.ingest.ocr import view_lines

        def work() -> list[OcrLine]:
            geometry = self._parts.store.page_geometry(doc_id, page)
            if geometry is None:
                return []
            lines = self._parts.store.ocr_lines(doc_id, page, char_start, char_end)
            return view_lines(lines, *geometry)

        return await self._bridge.call(self._bridge.query_pool, work)

    async def document_part(self, document: str, page: int) -> DocumentPart | None:
        """Part ``page`` of a reflowable document (by its doc_id, or the path of a file in
        the library) with its blocks, for the document view; None when not stored."""
        def work() -> DocumentPart | None:
            doc_id = document
            if "/" in document or "\\" in document:
                record = self._parts.store.file_record(str(Path(document).expanduser().resolve()))
                if record is None or record.doc_id is None:
                    return None
                doc_id = record.doc_id
            return self._parts.store.document_part(doc_id, page)

        return await self._bridge.call(self._bridge.query_pool, work)
