"""Every command of the main window as a QAction with its shortcut, in the menu bar
(File, Edit, View, Help: menus show the shortcuts) and the most used ones in the toolbar.

Keyboard map: Ctrl+O open folder · Enter (in the question) or Ctrl+Enter ask · Esc stop ·
F8 / Shift+F8 (or Ctrl+] / Ctrl+[) next / previous citation · Ctrl+= / Ctrl+- / Ctrl+0
zoom in / out / fit width · Ctrl+F find in page, F3 / Shift+F3 next / previous match ·
Ctrl+1…4 go to library / question / answers / page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from desktop_app.ui.window_parts import install_menus, make_action

if TYPE_CHECKING:
    from desktop_app.ui.main_window import MainWindow


def _keys(action: QAction, *keys: str | QKeySequence.StandardKey) -> None:
    action.setShortcuts([QKeySequence(k) for k in keys])


def build_actions(w: MainWindow) -> None:
    """Create ``w``'s actions as attributes and install its menus and toolbar."""
    a = make_action
    viewer = w.viewer
    w.open_action = a(w, "open-folder", "&Open Folder…", w.choose_folder, QKeySequence.StandardKey.Open, "Open a folder of PDFs and index it")
    w.reindex_action = a(w, "reindex", "&Re-index", w.reindex, "F5", "Index the open folder again (only changed files are parsed)")
    w.samples_action = a(w, "", "Open &Sample Folder", w.setup.open_samples, None, "Write a few sample PDFs (English and Chinese) and open them")
    w.export_action = a(w, "export", "&Export Answer…", w.choose_export, "Ctrl+E", "Save the current answer as Markdown with footnotes")
    w.quit_action = a(w, "", "&Quit", w.close, QKeySequence.StandardKey.Quit)

    w.ask_action = a(w, "ask", "&Ask", w.ask_from_box, None, "Ask the question typed below the answers (Enter in the question box)")
    _keys(w.ask_action, "Ctrl+Return", "Ctrl+Enter")
    w.stop_action = a(w, "stop", "&Stop", w.stop, None, "Stop indexing or the answer (Esc)")
    _keys(w.stop_action, "Esc", "Ctrl+.")
    w.find_action = a(w, "", "&Find in Page…", viewer.find_bar.open_bar, QKeySequence.StandardKey.Find, "Search the document shown in the page viewer")
    w.find_next_action = a(w, "", "Find &Next", lambda: viewer.find_bar.find_step(1), QKeySequence.StandardKey.FindNext, "Go to the next match in the document")
    w.find_previous_action = a(w, "", "Find Pre&vious", lambda: viewer.find_bar.find_step(-1), QKeySequence.StandardKey.FindPrevious, "Go to the previous match in the document")
    w.settings_action = a(w, "settings", "Se&ttings…", w.show_settings, "Ctrl+,", "Models, citations, answer length, threads, data folder")

    w.next_citation_action = a(w, "next", "&Next Citation", lambda: w.step_citation(1), None, "Open the next cited passage of the answer in the page viewer")
    _keys(w.next_citation_action, "F8", "Ctrl+]")
    w.previous_citation_action = a(w, "prev", "&Previous Citation", lambda: w.step_citation(-1), None, "Open the previous cited passage of the answer")
    _keys(w.previous_citation_action, "Shift+F8", "Ctrl+[")
    w.zoom_in_action = a(w, "zoom-in", "Zoom &In", viewer.zoom_in, None, "Enlarge the page")
    _keys(w.zoom_in_action, "Ctrl+=", QKeySequence.StandardKey.ZoomIn)
    w.zoom_out_action = a(w, "zoom-out", "Zoom &Out", viewer.zoom_out, QKeySequence.StandardKey.ZoomOut, "Shrink the page")
    w.fit_width_action = a(w, "fit-width", "Fit &Width", viewer.fit_width, "Ctrl+0", "Fit the page to the viewer's width")
    w.fit_page_action = a(w, "fit-page", "Fit &Page", viewer.fit_page, "Ctrl+9", "Show the whole page")
    w.next_page_action = a(w, "", "Ne&xt Page", lambda: viewer.go_to(viewer.page() + 1), "Ctrl+PgDown", "Show the next page of the document")
    w.previous_page_action = a(w, "", "Pre&vious Page", lambda: viewer.go_to(viewer.page() - 1), "Ctrl+PgUp", "Show the previous page of the document")
    targets = (
        ("&Library", w.library_view, "Ctrl+1"),
        ("&Question", w.conversation.question, "Ctrl+2"),
        ("&Answers", w.conversation.browser, "Ctrl+3"),
        ("Pa&ge Viewer", viewer.view, "Ctrl+4"),
    )
    w.focus_actions = []
    for text, widget, key in targets:
        def focus(target=widget) -> None:  # noqa: ANN001
            target.setFocus(Qt.FocusReason.ShortcutFocusReason)

        words = text.replace("&", "")
        w.focus_actions.append(a(w, "", f"Go to {text}", focus, key, f"Move the keyboard focus to the {words.lower()}"))
    w.history_action = w.history_dock.toggleViewAction()
    w.history_action.setText("&History")
    w.history_action.setShortcut(QKeySequence("Ctrl+H"))
    w.history_action.setToolTip("Saved answers: reopen or delete them (Ctrl+H)")

    w.setup_action = a(w, "", "Set Up &Models…", w.setup.show_setup, None, "Install the models, or choose a GGUF file")
    w.about_action = a(w, "about", "&About Folio", w.show_about)
    install_menus(
        w,
        {
            "&File": [w.open_action, w.reindex_action, w.samples_action, None, w.export_action, None, w.quit_action],
            "&Edit": [w.ask_action, w.stop_action, None, w.find_action, w.find_next_action, w.find_previous_action, None, w.settings_action],
            "&View": [
                w.next_citation_action, w.previous_citation_action, None,
                w.zoom_in_action, w.zoom_out_action, w.fit_width_action, w.fit_page_action, None,
                w.next_page_action, w.previous_page_action, None,
                *w.focus_actions, None, w.history_action,
            ],
            "&Help": [w.setup_action, None, w.about_action],
        },
        [w.open_action, w.reindex_action, w.stop_action, w.export_action, None, w.settings_action, w.about_action],
    )


def set_focus_order(w: MainWindow) -> None:
    """Tab goes library → question (and its buttons) → answers → page viewer."""
    viewer, conversation = w.viewer, w.conversation
    chain = [
        w.library_view, conversation.question, conversation.ask_button, conversation.stop_button,
        conversation.browser, viewer.prev_button, viewer.page_box, viewer.next_button,
        viewer.find_button, viewer.zoom_out_button, viewer.zoom_in_button,
        viewer.fit_width_button, viewer.fit_page_button, viewer.find_bar.edit,
        viewer.find_bar.previous_button, viewer.find_bar.next_button, viewer.find_bar.close_button,
        viewer.view,
    ]  # fmt: skip
    for first, second in zip(chain, chain[1:], strict=False):
        QWidget.setTabOrder(first, second)
