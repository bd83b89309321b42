"""The history of saved answers, one row a conversation: list them, reopen one (every turn)
into the conversation pane, delete one after a confirmation.

A reopened answer is rendered from its saved record (text, citation markers, verdicts,
quotes, sources), never re-generated. The record says, as of now, whether each source is
current, changed or removed; the conversation shows a banner per stale citation, and
clicking a chip still goes through the viewer's own check, which never highlights a
changed file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import KnownError
from desktop_app.core.types import (
    AnswerStatus,
    HistoryEntry,
    SavedAnswer,
)
from desktop_app.services.api import KnowledgeBaseAPI
from desktop_app.ui.conversation.answer_html import scope_label
from desktop_app.ui.conversation.answer_turn import AnswerTurn, Marker, TurnState
from desktop_app.ui.qt.async_bridge import TaskSet

logger = logging.getLogger(__name__)

ID_ROLE = Qt.ItemDataRole.UserRole  # the newest answer of the row's conversation
IDS_ROLE = Qt.ItemDataRole.UserRole + 1  # every answer of it
STATUS_WORDS = {"no_basis": "no basis", "cancelled": "stopped", "failed": "failed"}
_STATES = {str(status): TurnState(str(status)) for status in AnswerStatus}  # how a saved answer ended


def turn_from_record(record: SavedAnswer) -> AnswerTurn:
    """An :class:`AnswerTurn` that renders a saved answer as it was streamed."""
    by_id = {s.id: s for s in record.sources}
    turn = AnswerTurn(
        question=record.question,
        state=_STATES.get(str(record.status), TurnState.FINISHED),
        text=record.text,
        answer_id=record.answer_id,
        style=record.style,
        sources=list(record.sources),
        cited={cid: by_id[cid] for cid in record.citations if cid in by_id},
        hallucinated=record.hallucinated,
        saved_at=record.created_at,
        scope=record.scope,
        searched=record.asked,
        conversation_id=record.conversation,
        quotes=tuple(record.quotes),
    )
    for cid, spans in record.citations.items():
        for span in spans:
            turn.markers.append(Marker(cid, span, cid in by_id and cid not in record.hallucinated))
    turn.verdicts = list(record.claims)
    if record.status == AnswerStatus.NO_BASIS:
        turn.no_basis = record.reason or "The documents hold no basis for this question."
    turn.source_states.update(record.source_states)
    turn.revision += 1
    return turn


class _List(QListWidget):
    delete_pressed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.delete_pressed.emit()
            event.accept()
            return
        super().keyPressEvent(event)


def conversations(rows: list[HistoryEntry]) -> list[list[HistoryEntry]]:
    """History rows (newest first) grouped by conversation, newest conversation first, each
    conversation's turns oldest first."""
    grouped: dict[str, list[HistoryEntry]] = {}
    for row in rows:
        grouped.setdefault(row.conversation_id or row.answer_id, []).append(row)
    return [list(reversed(turns)) for turns in grouped.values()]


class HistoryPanel(QWidget):
    """Saved conversations, newest first. ``reopened`` carries the rebuilt turns
    (:class:`AnswerTurn`, oldest first)."""

    reopened = Signal(object)
    deleted = Signal(str)

    def __init__(self, kb: Callable[[], KnowledgeBaseAPI], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._kb = kb  # a getter: the window may swap its facade when settings change
        self.tasks = TaskSet()
        self.rows: list[HistoryEntry] = []
        self.list = _List(self)
        self.list.setAccessibleName("Saved answers")
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.itemActivated.connect(lambda item: self.reopen_id(item.data(ID_ROLE)))
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.list.delete_pressed.connect(self.confirm_delete)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.open_button = QPushButton("Open", self)
        self.open_button.setToolTip("Show the selected answer in the conversation (Enter)")
        self.open_button.setAccessibleName("Open the selected answer")
        self.open_button.clicked.connect(self.open_selected)
        self.delete_button = QPushButton("Delete…", self)
        self.delete_button.setToolTip("Delete the selected answer from the history (Del)")
        self.delete_button.setAccessibleName("Delete the selected answer")
        self.delete_button.clicked.connect(self.confirm_delete)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setAccessibleName("Refresh the history")
        self.refresh_button.clicked.connect(self.refresh)
        buttons = QHBoxLayout()
        for button in (self.open_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self._update_buttons()

    # ------------------------------------------------------------------ listing

    def refresh(self) -> asyncio.Task[int]:
        return self.tasks.spawn(self.load(), "history")

    async def load(self) -> int:
        """Fill the list from the facade; returns the number of saved answers."""
        try:
            rows = await self._kb().answers.history()
        except KnownError as error:
            self.message.setText(f"The history could not be read: {error}")
            return 0
        selected = self.selected_id()
        self.rows = rows
        self.list.clear()
        for turns in conversations(rows):
            row, last = turns[0], turns[-1]
            status = STATUS_WORDS.get(last.status, "")
            when = last.created_at[:16]
            scope = row.scope
            within = f" · within {scope_label(scope)}" if scope else ""
            more = f"\n↳ {last.question}" if len(turns) > 1 else ""
            count = f" · {len(turns)} questions" if len(turns) > 1 else ""
            label = f"{row.question}{more}\n{when}{count}" + (f" · {status}" if status else "") + within
            item = QListWidgetItem(label)
            item.setData(ID_ROLE, last.answer_id)
            item.setData(IDS_ROLE, [t.answer_id for t in turns])
            item.setToolTip("\n".join(t.question for t in turns)
                            + f"\n{when} · {last.model_id or 'no model call'}"
                            + ("\nAsked within:\n" + "\n".join(scope) if scope else ""))
            self.list.addItem(item)
            if selected in item.data(IDS_ROLE):
                self.list.setCurrentItem(item)
        self.message.setText("" if rows else "No saved answers yet.")
        self._update_buttons()
        return len(rows)

    def answer_ids(self) -> list[str]:
        return [str(self.list.item(i).data(ID_ROLE)) for i in range(self.list.count())]

    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(ID_ROLE)) if item is not None else None

    def select(self, answer_id: str) -> bool:
        for i in range(self.list.count()):
            if answer_id in self.list.item(i).data(IDS_ROLE):
                self.list.setCurrentRow(i)
                return True
        return False

    def _update_buttons(self) -> None:
        chosen = self.list.currentItem() is not None
        self.open_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)

    # ------------------------------------------------------------------ reopening

    def open_selected(self) -> asyncio.Task[AnswerTurn | None] | None:
        answer_id = self.selected_id()
        return self.reopen_id(answer_id) if answer_id else None

    def reopen_id(self, answer_id: str) -> asyncio.Task[AnswerTurn | None]:
        return self.tasks.spawn(self.reopen(answer_id), f"reopen {answer_id}")

    async def reopen(self, answer_id: str) -> AnswerTurn | None:
        """Read the conversation of the saved answer (each turn with its sources' states
        now), emit ``reopened`` with its turns and return the last one."""
        try:
            records = await self._kb().answers.conversation(answer_id)
        except KnownError as error:
            self.message.setText(f"The answer could not be read: {error}")
            return None
        if not records:
            await self.load()
            self.message.setText("That answer is no longer saved.")
            return None
        turns = [turn_from_record(record) for record in records]
        stale = [s for turn in turns for s in turn.stale_citations()]
        self.message.setText(
            f"{len(stale)} cited source(s) changed or removed since this answer." if stale else ""
        )
        self.reopened.emit(turns)
        return turns[-1]

    # ------------------------------------------------------------------ deleting

    def confirm_delete(self) -> QMessageBox | None:
        """Ask before deleting the selected answer (window-modal, no nested loop)."""
        answer_id = self.selected_id()
        if answer_id is None:
            return None
        question = next((t[0].question for t in conversations(self.rows)
                         if answer_id in [r.answer_id for r in t]), "")
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Delete answer")
        box.setText(f"Delete the saved answer to “{question}”?")
        box.setInformativeText("Its text, citations and checks are removed from the history.")
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        yes = box.button(QMessageBox.StandardButton.Yes)
        yes.setText("Delete")
        box.finished.connect(lambda _result: self._confirmed(box, answer_id))
        box.open()
        return box

    def _confirmed(self, box: QMessageBox, answer_id: str) -> None:
        if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes:
            self.delete_id(answer_id)

    def delete_id(self, answer_id: str) -> asyncio.Task[bool]:
        return self.tasks.spawn(self.delete(answer_id), f"delete {answer_id}")

    async def delete(self, answer_id: str) -> bool:
        """Delete the conversation ``answer_id`` belongs to: each of its answers."""
        ids = next((t for t in (self.list.item(i).data(IDS_ROLE) for i in range(self.list.count()))
                    if answer_id in t), [answer_id])
        try:
            gone = False
            for one in ids:
                gone = await self._kb().answers.delete_answer(one) or gone
        except KnownError as error:
            self.message.setText(f"The answer could not be deleted: {error}")
            return False
        await self.load()
        if gone:
            self.deleted.emit(answer_id)
        return gone
