"""The document view inside the page viewer, on a part written by the real PartBuilder: the
highlight covers exactly the cited characters across a heading, a list, a table and code;
part navigation asks the facade for the neighbour; find and zoom work on the part."""

from __future__ import annotations

import asyncio
import re

from desktop_app.core.ingest.formats.parts import PartBuilder
from desktop_app.core.types import DocumentPart, SourcePayload, SourceState
from desktop_app.ui.viewer.page_viewer import PageViewer


def _parts() -> list[DocumentPart]:
    builder = PartBuilder()
    builder.heading("9.10. Backups", 2)
    builder.paragraph("Back up /etc and /home every night with rsync.")
    builder.list_item("Keep three generations.", 1)
    builder.list_item("Test a restore each month.", 2)
    builder.table_row(["tool", "what it copies"])
    builder.table_row(["rsync", "files, incrementally"])
    builder.code("rsync -a /home/ /backup/home/\nrsync -a /etc/ /backup/etc/")
    builder.paragraph("The last paragraph names the retention of 30 days.")
    builder.heading("9.11. Restores", 2)
    builder.paragraph("Restore with rsync in the other direction.")
    pages = builder.parts()
    return [DocumentPart("d" * 64, p.page, p.label, p.text, p.blocks, len(pages), "docx") for p in pages]


def _source(part: DocumentPart, start: int, end: int) -> SourcePayload:
    return SourcePayload(id="1", chunk_id=f"{part.doc_id[:16]}:{part.page}:0", doc_id=part.doc_id,
                         doc_path=__file__, doc_title="Admin guide", page=part.page,
                         page_label=part.label, section="9.10. Backups", text=part.text[start:end],
                         char_start=start, char_end=end, format="docx", locator=f"section {part.label} ¶ 2")


def test_a_reflowable_citation_is_highlighted_exactly(qtbot, qloop) -> None:  # noqa: ANN001
    parts = _parts()
    asked: list[tuple[str, int]] = []

    async def part_source(document: str, page: int) -> DocumentPart | None:
        asked.append((document, page))
        return parts[page - 1]

    viewer = PageViewer()
    viewer.part_source = part_source
    qtbot.addWidget(viewer)
    viewer.resize(600, 400)
    viewer.show()
    first = parts[0]
    start = first.text.index("Keep three")
    end = first.text.index("30 days.") + len("30 days.")
    token = viewer.show_source(_source(first, start, end), [(0, 4)])
    with qtbot.waitSignal(viewer.settled) as settled:
        assert viewer.apply_source_state(token, SourceState.CURRENT, part=first)
    assert settled.args == [True] and viewer.reflowing
    shown = viewer.document_view.highlighted_text()
    # Every cited character, in order; the newlines and cell separators between blocks are
    # layout, not characters of the view.
    assert re.sub(r"[\n|]| (?=\|)|(?<=\|) ", "", first.text[start:end]) == shown.replace("\n", "")
    assert "rsync -a /home/ /backup/home/" in shown and "files, incrementally" in shown
    assert "Admin guide" in viewer.header.text() and "section 9.10" in viewer.header.text()
    assert viewer.page() == 1 and viewer.page_count() == 2

    assert viewer.document_view.find("rsync") and len(viewer.document_view.find_hits) == 4
    size = viewer.document_view.font().pointSizeF()
    viewer.zoom_in()
    assert viewer.document_view.font().pointSizeF() > size

    viewer.go_to(2)
    qloop.run_until_complete(asyncio.wait_for(viewer._part_task, 5))  # noqa: SLF001
    assert asked == [(first.doc_id, 2)] and viewer.page() == 2
    assert "Restore with rsync" in viewer.document_view.toPlainText()


def test_a_changed_source_is_not_highlighted(qtbot) -> None:  # noqa: ANN001
    part = _parts()[0]
    viewer = PageViewer()
    qtbot.addWidget(viewer)
    token = viewer.show_source(_source(part, 0, 10))
    assert not viewer.apply_source_state(token, SourceState.CHANGED, part=part)
    assert "Source changed" in viewer.note and viewer.document_view.highlight is None
