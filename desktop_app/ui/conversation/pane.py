"""The conversation pane: the question box and the conversation's answers, streaming.

A new question continues the conversation shown (a follow-up is searched together with
what was asked before); "New conversation" (Ctrl+N) starts a fresh one. Under each
question, "Searched for: …" shows what retrieval was asked; its "edit" opens a line to
change it and search again.

Each answer lives in an :class:`AnswerTurn`; events mark the pane dirty and a timer
re-renders at most ~30 times a second, so a marker turns into a clickable ``cite:``
chip within a frame of its citation event, while the answer is still streaming.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QKeyEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.types import AnswerEvent
from desktop_app.ui.conversation.answer_html import link_name, render_history, render_turn
from desktop_app.ui.conversation.answer_turn import AnswerTurn
from desktop_app.ui.qt.rich_text import esc
from desktop_app.ui.qt.theme import colours_for, icon

logger = logging.getLogger(__name__)

FRAME_MS = 33  # re-render at most ~30 times a second while streaming
ANSWERS_NAME = "Answers"
ANSWERS_DESCRIPTION = ("Answers with citation chips and quotes from the documents: Tab moves between them,"
                       " Enter opens one; F8 opens the next citation")
WELCOME = (
    "<p style='color:{muted};'>Open a folder of documents (<b>Ctrl+O</b>, or drop it on the window), "
    "then ask a question below. Answers cite their sources with numbered chips: click one to "
    "see the passage highlighted on its page.</p>"
)


class QuestionEdit(QPlainTextEdit):
    """Enter asks, Shift+Enter starts a new line, Esc stops the answer."""

    submitted = Signal(str)
    stop_requested = Signal()
    backspace_when_empty = Signal()  # removes the scope chip

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                text = self.toPlainText().strip()
                if text:
                    self.submitted.emit(text)
            event.accept()
            return
        if key == Qt.Key.Key_Escape:
            self.stop_requested.emit()
            event.accept()
            return
        if key == Qt.Key.Key_Backspace and not self.toPlainText():
            self.backspace_when_empty.emit()
        super().keyPressEvent(event)


class AnswerBrowser(QTextBrowser):
    """The answers' rich text; ``link_focused`` names the link Tab (Shift+Tab) moved to
    ("" when focus left the links), which QTextBrowser's ``highlighted`` only does for the mouse."""

    link_focused = Signal(str)  # the href of the link the keyboard selected

    def focusNextPrevChild(self, forward: bool) -> bool:  # noqa: N802 (Qt override)
        moved = super().focusNextPrevChild(forward)
        cursor = self.textCursor()
        self.link_focused.emit(cursor.charFormat().anchorHref() if cursor.hasSelection() else "")
        return moved


class ScopeChip(QFrame):
    """"Within: RFC 6455 – The WebSocket Protocol ×" above the question box: questions search
    only these documents until the chip is removed (× or Backspace in the empty box)."""

    removed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.paths: tuple[str, ...] = ()
        self.text = ""  # how the scope reads: a document's title, "name (folder)"
        self.setObjectName("scope-chip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#scope-chip { border: 1px solid palette(mid); border-radius: 10px;"
            " background: palette(alternate-base); }"
        )
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.remove_button = QToolButton(self)
        self.remove_button.setText("×")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip("Search every document again")
        self.remove_button.setAccessibleName("Remove the scope")
        self.remove_button.clicked.connect(self.removed)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 0, 2, 0)
        row.setSpacing(2)
        row.addWidget(self.label)
        row.addWidget(self.remove_button)
        self.setAccessibleName("Question scope")
        self.hide()

    def show_scope(self, paths: tuple[str, ...], label: str) -> None:
        self.paths = paths
        self.text = label if paths else ""
        self.label.setText(f"Within: {label}")
        self.setToolTip("Questions search only:\n" + "\n".join(paths))
        self.setAccessibleDescription(f"Questions search only {label}")
        self.setVisible(bool(paths))


class SearchedEditor(QFrame):
    """"Search again for: [the searched text] [Search again] [Cancel]" under the answers:
    the person corrects what a question was searched for. Enter searches, Esc cancels."""

    research_requested = Signal(int, str)  # turn index, the text to search for

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.turn_index = -1
        self.label = QLabel("Search again for:", self)
        self.edit = QLineEdit(self)
        self.edit.setAccessibleName("Searched for")
        self.edit.setAccessibleDescription("What the question is searched for: Enter searches again, Esc cancels")
        self.edit.returnPressed.connect(self._submit)
        self.search_button = QPushButton("Search again", self)
        self.search_button.setAccessibleName("Search again")
        self.search_button.clicked.connect(self._submit)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(self.hide)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.edit, 1)
        row.addWidget(self.search_button)
        row.addWidget(self.cancel_button)
        self.hide()

    def open_for(self, turn_index: int, searched: str) -> None:
        self.turn_index = turn_index
        self.edit.setText(searched)
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def _submit(self) -> None:
        text = self.edit.text().strip()
        if text:
            self.hide()
            self.research_requested.emit(self.turn_index, text)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
            event.accept()
            return
        super().keyPressEvent(event)


class ConversationPane(QWidget):
    ask_requested = Signal(str)
    new_conversation_requested = Signal()
    stop_requested = Signal()
    citation_clicked = Signal(int, str)  # turn index, citation id
    quote_clicked = Signal(int, int)  # turn index, quote index (the document's own words)
    source_clicked = Signal(int, str)  # turn index, source id
    suggestion_clicked = Signal(int, str)  # turn index, chunk id
    scope_changed = Signal(tuple)  # the paths questions are asked within (empty: all)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.turns: list[AnswerTurn] = []
        self._cache: dict[int, tuple[int, str]] = {}  # turn -> (revision, html)
        self.browser = AnswerBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.setOpenExternalLinks(False)
        self.browser.setAccessibleName(ANSWERS_NAME)
        self.browser.setAccessibleDescription(ANSWERS_DESCRIPTION)
        self.browser.anchorClicked.connect(self.handle_anchor)
        self.browser.link_focused.connect(self._announce_link)
        self.browser.viewport().installEventFilter(self)
        self.question = QuestionEdit(self)
        self.question.setAccessibleName("Question")
        self.question.setAccessibleDescription("Enter asks, Shift+Enter starts a new line, Esc stops the answer")
        self.question.setPlaceholderText("Ask about your documents…  (Enter asks, Shift+Enter new line, Esc stops)")
        self.question.setTabChangesFocus(True)
        self.question.submitted.connect(self._submit)
        self.question.stop_requested.connect(self.stop_requested)
        line = self.question.fontMetrics().lineSpacing()
        self.question.setFixedHeight(line * 3 + 16)
        self.ask_button = QPushButton(icon("ask"), "Ask", self)
        self.ask_button.setToolTip("Ask (Enter, or Ctrl+Enter anywhere)")
        self.ask_button.setAccessibleName("Ask")
        self.ask_button.clicked.connect(lambda: self._submit(self.question.toPlainText().strip()))
        self.stop_button = QPushButton(icon("stop"), "Stop", self)
        self.stop_button.setToolTip("Stop the answer (Esc)")
        self.stop_button.setAccessibleName("Stop the answer")
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.setEnabled(False)
        buttons = QVBoxLayout()
        buttons.addWidget(self.ask_button)
        buttons.addWidget(self.stop_button)
        row = QHBoxLayout()
        row.addWidget(self.question, 1)
        row.addLayout(buttons)
        self.scope_chip = ScopeChip(self)
        self.scope_chip.removed.connect(self.clear_scope)
        self.question.backspace_when_empty.connect(self.clear_scope)
        self.new_button = QPushButton("New conversation", self)
        self.new_button.setToolTip("Start a new conversation: the next question does not follow up the answers"
                                   " shown (Ctrl+N)")
        self.new_button.setAccessibleName("New conversation")
        self.new_button.clicked.connect(self.new_conversation_requested)
        self.searched_editor = SearchedEditor(self)
        chips = QHBoxLayout()
        chips.setContentsMargins(0, 0, 0, 0)
        chips.addWidget(self.scope_chip)
        chips.addStretch(1)
        chips.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser, 1)
        layout.addWidget(self.searched_editor)
        layout.addLayout(chips)
        layout.addLayout(row)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self.render_now)
        self.renders = 0
        self.render_now()

    # ------------------------------------------------------------------ turns

    def _submit(self, text: str) -> None:
        if text and self.ask_button.isEnabled():
            self.ask_requested.emit(text)

    # ------------------------------------------------------------------ scope

    @property
    def scope(self) -> tuple[str, ...]:
        """The paths questions are asked within (empty: every document)."""
        return self.scope_chip.paths

    @property
    def scope_label(self) -> str:
        return self.scope_chip.text

    def set_scope(self, paths: tuple[str, ...], label: str) -> None:
        self.scope_chip.show_scope(paths, label)
        self.scope_changed.emit(paths)

    def clear_scope(self) -> None:
        if self.scope_chip.paths:
            self.scope_chip.show_scope((), "")
            self.scope_changed.emit(())

    # ------------------------------------------------------------------ turns (continued)

    def start_turn(self, question: str, scope: tuple[str, ...] = (), scope_label: str = "",
                   quote_only: bool = False) -> AnswerTurn:
        turn = AnswerTurn(question=question, scope=scope, scope_label=scope_label, quote_only=quote_only)
        self.turns.append(turn)
        self.question.clear()
        self.set_busy(True)
        self.render_now()
        return turn

    def add_turn(self, turn: AnswerTurn) -> None:
        """Show a finished turn (an answer reopened from history) at the end, or just
        before the answer that is streaming (events keep going to the last turn)."""
        last = self.current_turn()
        if last is not None and last.state.running:
            self.turns.insert(len(self.turns) - 1, turn)
            self._cache.clear()  # turn numbers moved
        else:
            self.turns.append(turn)
        self.render_now()

    def current_turn(self) -> AnswerTurn | None:
        return self.turns[-1] if self.turns else None

    def clear_turns(self) -> None:
        """Start a new conversation: no turn shown, no scope, the question box ready."""
        self.turns = []
        self._cache.clear()
        self.searched_editor.hide()
        self.clear_scope()
        self.render_now()
        self.question.setFocus()

    def remove_turn(self, index: int) -> None:
        if 0 <= index < len(self.turns):
            del self.turns[index]
            self._cache.clear()
            self.render_now()

    def edit_searched(self, index: int) -> None:
        """Open the line that changes what turn ``index`` was searched for."""
        if 0 <= index < len(self.turns) and not self.turns[index].state.running:
            turn = self.turns[index]
            self.searched_editor.open_for(index, turn.searched or turn.question)

    def apply(self, event: AnswerEvent) -> None:
        turn = self.current_turn()
        if turn is None:
            return
        turn.apply(event)
        if not self._timer.isActive():
            self._timer.start()

    def end_turn(self) -> None:
        """The answer task ended (normally, failed, or stopped)."""
        turn = self.current_turn()
        if turn is not None:
            turn.cancelled_locally()
        self.set_busy(False)
        self.render_now()

    def set_busy(self, busy: bool, *, can_ask: bool | None = None) -> None:
        """Stop while a task runs; Ask when none does, or (``can_ask``) while only the
        checks of a written answer run."""
        self.ask_button.setEnabled(not busy if can_ask is None else can_ask)
        self.stop_button.setEnabled(busy)

    # ------------------------------------------------------------------ rendering

    def render_now(self) -> None:
        self._timer.stop()
        colours = colours_for(self.palette())
        parts: list[str] = []
        for number, turn in enumerate(self.turns):
            cached = self._cache.get(number)
            if cached is None or cached[0] != turn.revision or turn.state.running:
                cached = (turn.revision, render_turn(turn, number, colours))
                self._cache[number] = cached
            earlier = self.turns[number - 1].conversation_id if number else ""
            if earlier and turn.conversation_id and earlier != turn.conversation_id:
                # a conversation reopened after another one: its questions follow up its own
                parts.append(f'<p align="center" style="color:{colours.muted}; font-size:small;">'
                             "another conversation</p>")
            parts.append(cached[1])
        html = render_history(parts) if parts else WELCOME.format(muted=colours.muted)
        bar = self.browser.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 4
        position = bar.value()
        self.browser.setHtml(html)
        self._dash_suggestions()
        bar.setValue(bar.maximum() if at_bottom else position)
        self.renders += 1

    def _dash_suggestions(self) -> None:
        """Qt's HTML subset has no dashed borders: give "inferred by Folio" chips a dashed
        underline through their character format instead."""
        document = self.browser.document()
        block = document.begin()
        while block.isValid():
            iterator = block.begin()
            while not iterator.atEnd():
                fragment = iterator.fragment()
                if fragment.isValid() and fragment.charFormat().anchorHref().startswith("suggest:"):
                    cursor = QTextCursor(document)
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                    extra = QTextCharFormat()
                    extra.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DashUnderline)
                    extra.setUnderlineColor(fragment.charFormat().foreground().color())
                    cursor.mergeCharFormat(extra)
                iterator += 1
            block = block.next()

    def html(self) -> str:
        """The current rich text of the answers (what tests inspect)."""
        return self.browser.toHtml()

    # ------------------------------------------------------------------ links

    def handle_anchor(self, url: QUrl) -> None:
        scheme = url.scheme()
        target = url.path()
        query = url.query()
        turn = len(self.turns) - 1
        if query.startswith("turn="):
            try:
                turn = int(query.split("=", 1)[1])
            except ValueError:
                logger.warning("bad turn in %s", url.toString())
        if not 0 <= turn < len(self.turns):
            return
        if scheme == "cite":
            self.citation_clicked.emit(turn, target)
        elif scheme == "quote":
            if target.isdigit():
                self.quote_clicked.emit(turn, int(target))
        elif scheme == "source":
            self.source_clicked.emit(turn, target)
        elif scheme == "suggest":
            self.suggestion_clicked.emit(turn, target)
        elif scheme == "reask":  # a saved answer's source changed: ask its question again
            self.ask_requested.emit(self.turns[turn].question)
        elif scheme == "searched":  # change what the question was searched for
            self.edit_searched(turn)
        else:
            logger.info("ignored link %s", url.toString())

    def _announce_link(self, href: str) -> None:
        """Tab reached a link: the answers take its name ("Quote from Pump Manual, p. 2: …",
        "Citation 1: …") for a screen reader to say; "Answers" again once off the links."""
        url = QUrl(href)
        query = url.query()
        turn = int(query.split("=", 1)[1]) if query.startswith("turn=") and query[5:].isdigit() else -1
        name = link_name(self.turns[turn], url.scheme(), url.path()) if 0 <= turn < len(self.turns) else ""
        self.browser.setAccessibleName(name or ANSWERS_NAME)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        # Show the tooltip of the chip under the mouse (the ``title`` of a marker).
        if watched is self.browser.viewport() and event.type() == QEvent.Type.ToolTip:
            cursor = self.browser.cursorForPosition(event.pos())  # type: ignore[attr-defined]
            tip = cursor.charFormat().toolTip()
            if tip:
                QToolTip.showText(event.globalPos(), esc(tip).replace("\n", "<br/>"), self.browser)  # type: ignore[attr-defined]
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(watched, event)
