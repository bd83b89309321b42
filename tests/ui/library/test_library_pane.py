"""The library as a person browses it: a tree of opened folders, each document a title over
its file name, pages and status; a filter box, a sort, memory across sessions; and asking
within a document or folder from its context menu, with a removable chip."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from desktop_app.core.types import DocStatus, DocumentInfo
from desktop_app.ui.library.pane import EMPTY_HINT, NO_MATCH_HINT
from desktop_app.ui.library.tree_model import DETAIL_ROLE, FOLDER_ROLE, PATH_ROLE, top_folders
from desktop_app.ui.window.main_window import MainWindow
from tests.ui.conftest import until
from tests.ui.fakes import saved_record
from tests.ui.window.test_window_flow import warranty_answer


def nested_library(library: dict, tmp_path: Path) -> Path:  # noqa: ANN001 (GeneratedPdf values)
    """docs/manual.pdf, docs/guide.pdf, docs/zhibao.pdf and docs/archive/old.pdf."""
    folder = library["manual"].path.parent
    (folder / "archive").mkdir()
    shutil.copy(library["guide"].path, folder / "archive" / "old.pdf")
    return folder


def test_an_opened_folder_is_a_tree_of_titles_over_file_names(window, fake_kb, library, run, tmp_path) -> None:  # noqa: ANN001
    folder = nested_library(library, tmp_path)
    run(window.open_folder(str(folder)))
    pane = window.library_pane
    top = pane.proxy.index(0, 0, QModelIndex())
    assert top.data(FOLDER_ROLE) and top.data(PATH_ROLE) == str(folder)
    assert top.data(DETAIL_ROLE) == "4 documents"
    shown = pane.visible_paths()
    # Folders first, then documents by title: Guide, Manual, Zhibao (the fake's titles).
    assert shown == [str(folder), str(folder / "archive"), str(folder / "archive" / "old.pdf"),
                     str(folder / "guide.pdf"), str(folder / "manual.pdf"), str(folder / "zhibao.pdf")]
    manual = pane.index_of(str(library["manual"].path))
    assert manual.data(Qt.ItemDataRole.DisplayRole) == "Manual"
    assert manual.data(DETAIL_ROLE) == "manual.pdf · 3 pages · indexed"
    tip = manual.data(Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[:2] == ["Manual", str(library["manual"].path)]
    # Two lines tall: the title, then the file name, pages and status.
    rect = window.library_view.visualRect(manual)
    assert rect.height() >= 2 * window.library_view.fontMetrics().lineSpacing()


def test_typing_filters_by_title_or_file_name(window, fake_kb, library, run, tmp_path) -> None:  # noqa: ANN001
    folder = nested_library(library, tmp_path)
    run(window.open_folder(str(folder)))
    pane = window.library_pane
    pane.filter_box.setText("zhibao.pdf")
    assert pane.visible_paths() == [str(folder), str(folder / "zhibao.pdf")]
    pane.filter_box.setText("old")  # a file name in a subfolder: the folders leading to it stay
    assert pane.visible_paths() == [str(folder), str(folder / "archive"), str(folder / "archive" / "old.pdf")]
    pane.filter_box.setText("MANUAL")  # the title, any case
    assert pane.visible_paths() == [str(folder), str(folder / "manual.pdf")]
    pane.filter_box.clear()
    assert len(pane.visible_paths()) == 6


def test_sort_by_status_puts_problems_first_and_by_date_newest_first(window, fake_kb, library, run) -> None:  # noqa: ANN001
    folder = library["manual"].path.parent
    fake_kb.locked = {"zhibao.pdf": "pw"}
    os.utime(library["guide"].path, (2_000_000_000, 2_000_000_000))
    run(window.open_folder(str(folder)))
    for info in list(fake_kb.documents_by_path.values()):  # the real facade reports mtimes
        fake_kb.documents_by_path[info.path] = DocumentInfo(
            info.doc_id, info.path, info.title, info.status, info.pages, info.chunks,
            mtime=Path(info.path).stat().st_mtime,
        )
    run(window.open_folder(str(folder)))
    pane = window.library_pane
    pane.sort_box.setCurrentText("Status")
    assert [Path(p).name for p in pane.visible_paths()[1:]] == ["zhibao.pdf", "guide.pdf", "manual.pdf"]
    pane.sort_box.setCurrentText("Date")
    assert Path(pane.visible_paths()[1]).name == "guide.pdf"
    pane.sort_box.setCurrentText("Name")
    assert [Path(p).name for p in pane.visible_paths()[1:]] == ["guide.pdf", "manual.pdf", "zhibao.pdf"]


def test_each_opened_folder_is_a_top_node_and_they_are_remembered(qtbot, qloop, fake_kb, library, tmp_path, run) -> None:  # noqa: ANN001
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(library["guide"].path, other / "copy.pdf")
    first = MainWindow(fake_kb)
    qtbot.addWidget(first)
    run(first.open_folder(str(library["manual"].path.parent)))
    run(first.open_folder(str(other)))
    assert first.library.folders() == [str(library["manual"].path.parent), str(other)]
    assert len(first.library.rows()) == 4
    first.library_pane.set_sort("Status")
    first.splitter.setSizes([300, 300, 300])
    width = first.splitter.sizes()[0]
    first.close()
    second = MainWindow(fake_kb)
    qtbot.addWidget(second)
    run(until(lambda: len(second.library.rows()) == 4, what="the remembered folders listed"))
    assert second.library.folders() == [str(library["manual"].path.parent), str(other)]
    assert second.library_pane.sort_name() == "Status"
    assert second.splitter.sizes()[0] == width
    assert fake_kb.index_calls == [(str(library["manual"].path.parent), None), (str(other), None)]  # listed, not re-indexed
    second.hide_folder(str(other))
    assert second.library.folders() == [str(library["manual"].path.parent)]
    second.close()


def test_ask_about_a_document_scopes_the_question_until_the_chip_is_removed(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    manual = str(library["manual"].path)
    menu = window.library_pane.menu_for(window.library_pane.index_of(manual))
    assert [a.text() for a in menu.actions()] == ["Ask about this document", "Open"]
    menu.actions()[0].trigger()
    chip = window.conversation.scope_chip
    assert chip.isVisible() and chip.label.text() == "Within: Manual"
    assert window.conversation.scope == (manual,)
    fake_kb.scripted.append(warranty_answer(library))
    turn = run(window.ask("How long is the pump warranty?"))
    assert fake_kb.scopes == [(manual,)]
    assert turn.scope == (manual,)
    assert "Asked within: Manual" in window.conversation.html()
    assert chip.isVisible()  # the scope stays for the next question
    chip.remove_button.click()
    assert not chip.isVisible() and window.conversation.scope == ()
    run(window.ask("And the filter?"))
    assert fake_kb.scopes[-1] == ()


def test_ask_about_a_folder_and_backspace_removes_the_chip(window, fake_kb, library, run) -> None:  # noqa: ANN001
    folder = str(library["manual"].path.parent)
    run(window.open_folder(folder))
    menu = window.library_pane.menu_for(window.library_pane.index_of(folder))
    assert [a.text() for a in menu.actions()] == ["Ask about this folder", "Remove from the list"]
    menu.actions()[0].trigger()
    assert window.conversation.scope == (folder,)
    assert window.conversation.scope_chip.label.text() == f"Within: {Path(folder).name} (folder)"
    box = window.conversation.question
    box.setFocus()
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent

    QApplication.sendEvent(box, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Backspace, Qt.KeyboardModifier.NoModifier))
    assert window.conversation.scope == ()


def test_a_reopened_answer_shows_its_scope(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    manual = str(library["manual"].path)
    record = saved_record("How long is the pump warranty?", warranty_answer(library), "s1")
    fake_kb.saved["s1"] = dataclasses.replace(record, scope=(manual,))
    window.history_dock.show()
    run(until(lambda: window.history.answer_ids() == ["s1"], what="history listed"))
    assert "within manual.pdf" in window.history.list.item(0).text()
    turn = run(window.history.reopen("s1"))
    assert turn.scope == (manual,)
    run(until(lambda: "Asked within: Manual" in window.conversation.html(), what="scope shown"))
    assert "asked within Manual" in window.status_label.text()


def test_a_needs_password_row_shows_its_status_in_words(window, fake_kb, library, run) -> None:  # noqa: ANN001
    fake_kb.locked = {"manual.pdf": "s3cret"}
    run(window.open_folder(str(library["manual"].path.parent)))
    index = window.library_pane.index_of(str(library["manual"].path))
    assert index.data(DETAIL_ROLE).endswith("needs password")
    assert window.library.row(str(library["manual"].path)).status is DocStatus.NEEDS_PASSWORD


def test_the_menu_key_opens_the_selected_rows_menu(window, fake_kb, library, run, monkeypatch) -> None:  # noqa: ANN001
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QMenu

    shown: list[QPoint] = []
    monkeypatch.setattr(QMenu, "popup", lambda self, point, *args: shown.append(point))  # offscreen: no grab
    run(window.open_folder(str(library["manual"].path.parent)))
    pane = window.library_pane
    pane.view.setCurrentIndex(pane.index_of(str(library["guide"].path)))
    pane.view.customContextMenuRequested.emit(QPoint(-10, -10))  # no row there: the keyboard's
    assert pane.menu is not None and pane.menu.actions()[0].text() == "Ask about this document"
    assert len(shown) == 1  # shown at the row, not at the mouse
    pane.menu.actions()[0].trigger()
    assert window.conversation.scope == (str(library["guide"].path),)


def test_a_file_indexed_through_ocr_says_how_many_pages_ocr_read(qapp) -> None:  # noqa: ANN001
    from desktop_app.core.types import FileIndexed, IndexSummary
    from desktop_app.ui.library.tree_model import LibraryModel

    model = LibraryModel()
    model.apply(FileIndexed(path="/lib/scan.pdf", status=DocStatus.INDEXED, pages=12, chunks=30, ocr_pages=12))
    row = model.row("/lib/scan.pdf")
    assert row is not None and row.words == "indexed, 12 pages by OCR"
    assert row.detail() == "scan.pdf · 12 pages · indexed, 12 pages by OCR"
    model.apply(IndexSummary(documents=1, pages=12, chunks=30, unchanged=0, failed=(), removed=()))
    assert model.row("/lib/scan.pdf").words == "indexed, 12 pages by OCR"
    model.set_documents([DocumentInfo(doc_id="d", path="/lib/part.pdf", title="Part", pages=23, chunks=9,
                                      status=DocStatus.INDEXED_PARTIALLY, ocr_pages=1)])
    assert model.row("/lib/part.pdf").words == "partially indexed, 1 page by OCR"


def test_a_window_with_no_remembered_folder_lists_the_librarys_own(qtbot, qloop, fake_kb, library, run) -> None:  # noqa: ANN001
    """`folio --db LIBRARY` (or the screenshot automation) on a library indexed elsewhere, by
    `folio index`: the pane lists its documents under their folder instead of staying empty."""
    first = MainWindow(fake_kb, remember_layout=False)
    qtbot.addWidget(first)
    run(first.open_folder(str(library["manual"].path.parent)))
    first.close()
    second = MainWindow(fake_kb, remember_layout=False)
    qtbot.addWidget(second)
    run(until(lambda: len(second.library.rows()) == 3, what="the library's documents listed"))
    assert second.library.folders() == [str(library["manual"].path.parent)]
    second.close()


def test_top_folders_are_the_outermost_folders_of_the_files() -> None:
    assert top_folders(["/a/b/x.pdf", "/a/b/c/y.pdf", "/a/z.pdf", "/d/w.pdf"]) == ["/a", "/d"]
    assert top_folders(["/a/b/x.pdf", "/a/bc/y.pdf"]) == ["/a/b", "/a/bc"]
    assert top_folders([]) == []


def test_an_empty_library_says_what_to_do_and_a_filter_that_matches_nothing_says_so(window, fake_kb, library, run, tmp_path) -> None:  # noqa: ANN001
    pane = window.library_pane
    assert pane.hint.isVisibleTo(pane) and pane.hint.text() == EMPTY_HINT
    assert "Open Folder" in pane.hint.text() and "Ctrl+O" in pane.hint.text()
    run(window.open_folder(str(nested_library(library, tmp_path))))
    assert not pane.hint.isVisibleTo(pane)
    pane.filter_box.setText("no-such-title-anywhere")
    assert pane.hint.isVisibleTo(pane) and pane.hint.text() == NO_MATCH_HINT
    pane.filter_box.clear()
    assert not pane.hint.isVisibleTo(pane) and pane.visible_paths()
