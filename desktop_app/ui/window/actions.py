"""Every command of the main window as a QAction with its shortcut, in the menu bar
(File, Edit, View, Help: menus show the shortcuts) and the most used ones in the toolbar.

Keyboard map: Ctrl+N new conversation · Ctrl+O open folder · Enter (in the question) or Ctrl+Enter ask · Esc stop ·
F8 / Shift+F8 (or Ctrl+] / Ctrl+[) next / previous citation · Ctrl+= / Ctrl+- / Ctrl+0
zoom in / out / fit width · Ctrl+F find in page, F3 / Shift+F3 next / previous match ·
Ctrl+1…4 go to library / question / answers / page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from desktop_app.ui.window.menus import install_menus, make_action


class ActionHost(Protocol):
    """What the actions of a window call: its commands and the widgets they move to."""

    viewer: Any
    setup: Any
    conversation: Any
    library_view: QWidget
    library_pane: Any
    history_dock: Any

    def choose_folder(self) -> Any: ...
    def reindex(self) -> Any: ...
    def choose_export(self) -> Any: ...
    def check_text(self) -> Any: ...
    def close(self) -> bool: ...
    def ask_from_box(self) -> Any: ...
    def new_conversation(self) -> Any: ...
    def stop(self) -> Any: ...
    def show_settings(self) -> Any: ...
    def step_citation(self, step: int) -> Any: ...
    def show_about(self) -> Any: ...


@dataclass
class WindowActions:
    """Every command of the window; the window enables and disables them."""

    open_action: QAction
    reindex_action: QAction
    samples_action: QAction
    export_action: QAction
    quit_action: QAction
    ask_action: QAction
    stop_action: QAction
    find_action: QAction
    find_next_action: QAction
    find_previous_action: QAction
    settings_action: QAction
    next_citation_action: QAction
    previous_citation_action: QAction
    zoom_in_action: QAction
    zoom_out_action: QAction
    fit_width_action: QAction
    fit_page_action: QAction
    next_page_action: QAction
    previous_page_action: QAction
    history_action: QAction
    setup_action: QAction
    about_action: QAction
    focus_actions: list[QAction] = field(default_factory=list)
    check_text_action: QAction | None = None  # File ▸ Check a Text…
    new_conversation_action: QAction | None = None  # File ▸ New Conversation (Ctrl+N)


def _keys(action: QAction, *keys: str | QKeySequence.StandardKey) -> None:
    action.setShortcuts([QKeySequence(k) for k in keys])


def build_actions(w: ActionHost) -> WindowActions:
    """Create the actions of ``w`` (a QMainWindow) and install its menus and toolbar."""
    a = make_action
    viewer = w.viewer
    new_conversation_action = a(w, "", "&New Conversation", w.new_conversation, "Ctrl+N", "Start a new conversation: the next question does not follow up the answers shown")
    open_action = a(w, "open-folder", "&Open Folder…", w.choose_folder, QKeySequence.StandardKey.Open, "Open a folder of documents and index it")
    reindex_action = a(w, "reindex", "&Re-index", w.reindex, "F5", "Index the open folder again (only changed files are parsed)")
    samples_action = a(w, "", "Open &Sample Folder", w.setup.open_samples, None, "Write a few sample PDFs (English and Chinese) and open them")
    check_text_action = a(w, "", "C&heck a Text…", w.check_text, "Ctrl+Shift+K", "Check each sentence of a text or draft against the library: its supporting page and a verdict")
    export_action = a(w, "export", "&Export Answer…", w.choose_export, "Ctrl+E", "Save the current conversation (or answer) as Markdown with footnotes")
    quit_action = a(w, "", "&Quit", w.close, QKeySequence.StandardKey.Quit)

    ask_action = a(w, "ask", "&Ask", w.ask_from_box, None, "Ask the question typed below the answers (Enter in the question box)")
    _keys(ask_action, "Ctrl+Return", "Ctrl+Enter")
    stop_action = a(w, "stop", "&Stop", w.stop, None, "Stop indexing or the answer (Esc)")
    _keys(stop_action, "Esc", "Ctrl+.")
    find_action = a(w, "", "&Find in Page…", viewer.open_find, QKeySequence.StandardKey.Find, "Search the document shown in the page viewer")
    find_next_action = a(w, "", "Find &Next", lambda: viewer.find_bar.find_step(1), QKeySequence.StandardKey.FindNext, "Go to the next match in the document")
    find_previous_action = a(w, "", "Find Pre&vious", lambda: viewer.find_bar.find_step(-1), QKeySequence.StandardKey.FindPrevious, "Go to the previous match in the document")
    settings_action = a(w, "settings", "Se&ttings…", w.show_settings, "Ctrl+,", "Models, citations, answer length, threads, data folder")

    next_citation_action = a(w, "next", "&Next Citation", lambda: w.step_citation(1), None, "Open the next cited passage of the answer in the page viewer")
    _keys(next_citation_action, "F8", "Ctrl+]")
    previous_citation_action = a(w, "prev", "&Previous Citation", lambda: w.step_citation(-1), None, "Open the previous cited passage of the answer")
    _keys(previous_citation_action, "Shift+F8", "Ctrl+[")
    zoom_in_action = a(w, "zoom-in", "Zoom &In", viewer.zoom_in, None, "Enlarge the page")
    _keys(zoom_in_action, "Ctrl+=", QKeySequence.StandardKey.ZoomIn)
    zoom_out_action = a(w, "zoom-out", "Zoom &Out", viewer.zoom_out, QKeySequence.StandardKey.ZoomOut, "Shrink the page")
    fit_width_action = a(w, "fit-width", "Fit &Width", viewer.fit_width, "Ctrl+0", "Fit the page to the viewer's width")
    fit_page_action = a(w, "fit-page", "Fit &Page", viewer.fit_page, "Ctrl+9", "Show the whole page")
    next_page_action = a(w, "", "Ne&xt Page", lambda: viewer.go_to(viewer.page() + 1), "Ctrl+PgDown", "Show the next page of the document")
    previous_page_action = a(w, "", "Pre&vious Page", lambda: viewer.go_to(viewer.page() - 1), "Ctrl+PgUp", "Show the previous page of the document")
    targets = (
        ("&Library", w.library_view, "Ctrl+1"),
        ("&Question", w.conversation.question, "Ctrl+2"),
        ("&Answers", w.conversation.browser, "Ctrl+3"),
        ("Pa&ge Viewer", viewer.view, "Ctrl+4"),
    )
    focus_actions: list[QAction] = []
    for text, widget, key in targets:
        def focus(target=widget) -> None:  # noqa: ANN001
            target.setFocus(Qt.FocusReason.ShortcutFocusReason)

        words = text.replace("&", "")
        focus_actions.append(a(w, "", f"Go to {text}", focus, key, f"Move the keyboard focus to the {words.lower()}"))
    history_action = w.history_dock.toggleViewAction()
    history_action.setText("&History")
    history_action.setShortcut(QKeySequence("Ctrl+H"))
    history_action.setToolTip("Saved answers: reopen or delete them (Ctrl+H)")

    setup_action = a(w, "", "Set Up &Models…", w.setup.show_setup, None, "Install the models, or choose a GGUF file")
    about_action = a(w, "about", "&About Folio", w.show_about)
    install_menus(
        w,  # type: ignore[arg-type]
        {
            "&File": [new_conversation_action, None, open_action, reindex_action, samples_action, None, check_text_action, export_action, None, quit_action],
            "&Edit": [ask_action, stop_action, None, find_action, find_next_action, find_previous_action, None, settings_action],
            "&View": [
                next_citation_action, previous_citation_action, None,
                zoom_in_action, zoom_out_action, fit_width_action, fit_page_action, None,
                next_page_action, previous_page_action, None,
                *focus_actions, None, history_action,
            ],
            "&Help": [setup_action, None, about_action],
        },
        [open_action, reindex_action, stop_action, export_action, None, settings_action, about_action],
    )
    return WindowActions(
        open_action, reindex_action, samples_action, export_action, quit_action, ask_action,
        stop_action, find_action, find_next_action, find_previous_action, settings_action,
        next_citation_action, previous_citation_action, zoom_in_action, zoom_out_action,
        fit_width_action, fit_page_action, next_page_action, previous_page_action,
        history_action, setup_action, about_action, focus_actions, check_text_action,
        new_conversation_action,
    )


def set_focus_order(w: ActionHost) -> None:
    """Tab goes library (filter, sort, tree) → question (and its buttons) → answers → page
    viewer."""
    viewer, conversation = w.viewer, w.conversation
    chain = [
        w.library_pane.filter_box, w.library_pane.sort_box, w.library_view, conversation.question, conversation.ask_button, conversation.stop_button, conversation.new_button,
        conversation.browser, viewer.prev_button, viewer.page_box, viewer.next_button,
        viewer.find_button, viewer.zoom_out_button, viewer.zoom_in_button,
        viewer.fit_width_button, viewer.fit_page_button, viewer.find_bar.edit,
        viewer.find_bar.previous_button, viewer.find_bar.next_button, viewer.find_bar.close_button,
        viewer.view,
    ]  # fmt: skip
    for first, second in zip(chain, chain[1:], strict=False):
        QWidget.setTabOrder(first, second)
