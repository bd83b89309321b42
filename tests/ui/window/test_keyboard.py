"""Keyboard and accessibility: shortcuts trigger their actions, F8 walks the citations,
Ctrl+F finds text in the page, Tab follows the panes, every action is in a menu and every
interactive widget has a name a screen reader can say."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAction, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFileDialog,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from desktop_app.core.samples.pdfs import write_samples
from desktop_app.ui.setup.first_run import InstallDialog
from tests.ui.conftest import until
from tests.ui.window.test_window_flow import warranty_answer


@pytest.fixture
def active(window, qtbot):  # noqa: ANN001, ANN201
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    return window


def keys(widget: QWidget, sequence: str) -> None:
    """Type a shortcut the way the keyboard does (through Qt's shortcut map)."""
    combination = QKeySequence(sequence)[0]
    QTest.keyClick(widget, combination.key(), combination.keyboardModifiers())


def answered(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    run(window.ask("How long is the pump warranty?"))


# ---------------------------------------------------------------------------- menus


def test_menus_are_file_edit_view_help_and_hold_every_action(window) -> None:  # noqa: ANN001
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert list(menus) == ["File", "Edit", "View", "Help"]
    in_menus = {id(a) for menu in menus.values() for a in menu.actions() if not a.isSeparator()}
    own = [a for a in window.findChildren(QAction) if a.parent() is window and a.text()]
    own.append(window.commands.history_action)
    missing = [a.text() for a in own if id(a) not in in_menus]
    assert not missing, f"actions not reachable from the menus: {missing}"
    shortcuts = {a.text().replace("&", ""): a.shortcut().toString() for a in own}
    assert shortcuts["Open Folder…"] == "Ctrl+O" and shortcuts["Ask"] == "Ctrl+Return"
    assert shortcuts["Stop"] == "Esc" and shortcuts["Find in Page…"] == "Ctrl+F"
    assert shortcuts["Next Citation"] == "F8" and shortcuts["Previous Citation"] == "Shift+F8"
    assert shortcuts["Zoom In"] == "Ctrl+=" and shortcuts["Zoom Out"] == "Ctrl+-"
    assert shortcuts["Fit Width"] == "Ctrl+0" and shortcuts["Settings…"] == "Ctrl+,"


# ---------------------------------------------------------------------------- shortcuts


def test_shortcuts_trigger_their_actions(active, fake_kb, library, run, qtbot) -> None:  # noqa: ANN001
    window = active
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    fake_kb.pause_at = 10
    box = window.conversation.question
    box.setFocus()
    box.setPlainText("How long is the pump warranty?")
    keys(box, "Ctrl+Return")
    assert window.conversation.turns[-1].question == "How long is the pump warranty?"
    run(fake_kb.paused.wait())
    keys(window.library_view, "Esc")  # Esc stops from anywhere in the window
    run(until(lambda: window.ask_task.done(), what="the answer to stop"))
    assert fake_kb.cancel_calls == 1

    window.viewer.open_document(str(library["manual"].path))
    run(until(lambda: window.viewer.view.effective_zoom() > 0, what="the page"))
    width = window.viewer.view.page_rect().width()
    keys(window.library_view, "Ctrl+=")
    assert window.viewer.view.page_rect().width() > width * 1.2
    keys(window.library_view, "Ctrl+-")
    keys(window.library_view, "Ctrl+-")
    assert window.viewer.view.page_rect().width() < width
    keys(window.library_view, "Ctrl+0")
    assert window.viewer.view.zoomMode() == window.viewer.view.ZoomMode.FitToWidth
    keys(window.library_view, "Ctrl+F")
    assert window.viewer.find_bar.isVisible() and window.viewer.find_bar.edit.hasFocus()
    keys(window.viewer.find_bar.edit, "Esc")  # closes the bar, does not stop anything
    assert not window.viewer.find_bar.isVisible()
    keys(window.library_view, "Ctrl+2")
    assert window.conversation.question.hasFocus()
    keys(window.library_view, "Ctrl+O")
    dialogs = [d for d in window.findChildren(QFileDialog) if d.isVisible()]
    assert dialogs and dialogs[0].windowTitle() == "Open a folder of documents"
    dialogs[0].reject()


def test_next_citation_moves_the_viewer_through_the_cited_pages(active, fake_kb, library, run) -> None:  # noqa: ANN001
    window = active
    answered(window, fake_kb, library, run)
    pages: list[tuple[str, int]] = []
    for _ in range(3):
        keys(window.conversation.browser, "F8")
        run(until(lambda: window.viewer.view.has_highlight() or window.viewer.note, what="the cited page"))
        run(until(lambda: window.viewer.view.has_highlight(), what="the highlight"))
        pages.append((Path(window.viewer.path).name, window.viewer.page()))
    assert pages == [("manual.pdf", 2), ("guide.pdf", 2), ("manual.pdf", 2)]
    assert window.status_label.text().startswith("Citation 1 of 2: [1] Pump Manual, p. 2")
    keys(window.conversation.browser, "Shift+F8")
    run(until(lambda: Path(window.viewer.path).name == "guide.pdf", what="back to the guide"))
    assert window.status_label.text().startswith("Citation 2 of 2: [2]")


def test_next_citation_without_an_answer_says_so(window) -> None:  # noqa: ANN001
    assert window.step_citation(1) is None
    assert window.status_label.text() == "No answer with citations yet."


# ---------------------------------------------------------------------------- find in page


def test_find_bar_finds_and_walks_the_matches_of_a_real_pdf(active, tmp_path, run) -> None:  # noqa: ANN001
    window = active
    manual = write_samples(tmp_path)[0]  # two pages; "seal" three times on page 1, once on page 2
    window.viewer.open_document(str(manual))
    bar = window.viewer.find_bar
    keys(window.viewer.view, "Ctrl+F")
    QTest.keyClicks(bar.edit, "seal")
    run(until(lambda: bar.count() == 4 and bar.current == 0, timeout=8, what="four matches"))
    assert bar.count_label.text() == "1 of 4" and window.viewer.view.currentSearchResultIndex() == 0
    assert window.viewer.page() == 1
    for _ in range(3):
        keys(bar.edit, "Return")
    assert bar.count_label.text() == "4 of 4" and window.viewer.page() == 2
    keys(bar.edit, "Return")  # wraps around
    assert bar.count_label.text() == "1 of 4" and window.viewer.page() == 1
    keys(window.library_view, "Shift+F3")
    assert bar.count_label.text() == "4 of 4" and window.viewer.page() == 2
    bar.find("no such words")
    run(until(lambda: bar.count_label.text() == "No matches", what="no matches"))


def test_find_bar_finds_chinese_text(window, tmp_path, run) -> None:  # noqa: ANN001
    lease = write_samples(tmp_path)[3]
    window.viewer.open_document(str(lease))
    bar = window.viewer.find_bar
    bar.open_bar()
    bar.find("押金")
    run(until(lambda: bar.count() >= 2, timeout=8, what="the deposit clauses"))
    assert bar.current == 0 and bar.count_label.text().startswith("1 of")


# ---------------------------------------------------------------------------- focus and names


def test_tab_goes_library_question_answers_viewer(active) -> None:  # noqa: ANN001
    window = active
    window.library_view.setFocus()
    order: list[QWidget] = [window.library_view]
    for _ in range(20):
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        order.append(QApplication.focusWidget())
        if order[-1] is window.viewer.view:
            break
    conversation, viewer = window.conversation, window.viewer
    positions = [order.index(w) for w in (window.library_view, conversation.question, conversation.browser, viewer.view)]
    assert positions == sorted(positions), [w.accessibleName() or type(w).__name__ for w in order]


INTERACTIVE = (QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit, QAbstractItemView)


def unnamed(top: QWidget) -> list[str]:
    """Interactive widgets whose accessible name (what a screen reader says) is empty."""
    found = []
    for widget in top.findChildren(QWidget):
        if not isinstance(widget, INTERACTIVE) or widget.objectName().startswith("qt_"):
            continue
        if _inside_combo_box(widget):  # the drop-down list: the box's name covers it
            continue
        if type(widget).__name__ in ("QHeaderView", "QScrollBar"):
            continue
        interface = QAccessible.queryAccessibleInterface(widget)
        name = interface.text(QAccessible.Text.Name) if interface is not None else ""
        if not (widget.accessibleName() or name).strip():
            found.append(f"{type(widget).__name__} {widget.toolTip() or widget.objectName()}")
    return found


def _inside_combo_box(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QComboBox):
            return True
        parent = parent.parentWidget()
    return False


def test_every_interactive_widget_has_an_accessible_name(window, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("FOLIO_MODELS_DIR", str(tmp_path / "none"))
    window.setup.check()
    window.viewer.find_bar.open_bar()
    window.history_dock.show()
    assert unnamed(window) == []
    dialog = window.show_settings()
    assert unnamed(dialog) == []
    dialog.reject()
    install = InstallDialog("default", window)
    assert unnamed(install) == []
    install.show_failure("offline", "check the network")
    install.reject()
