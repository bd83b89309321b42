"""The main window's answer flow: asking (the answer task; a question continues the
conversation shown, "New conversation" starts another, "Searched for" can be edited and
searched again), checking a text, reopening a conversation from the history, following
its citations and quotes to the page (F8), and exporting it. With "find the passage only"
(Settings.quote_only) a question runs no model: the turn shows the document's own words.

A mixin of :class:`~desktop_app.ui.window.main_window.MainWindow`, which builds the widgets
named below and provides ``show_status``, ``report`` and ``update_actions``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from desktop_app.core.errors import KnownError
from desktop_app.core.types import AnswerFailed, AnswerFinished, OcrLine, SourcePayload, SourceState
from desktop_app.services.api import KnowledgeBaseAPI
from desktop_app.ui.conversation import check_dialog
from desktop_app.ui.conversation.answer_turn import AnswerTurn, TurnState
from desktop_app.ui.conversation.check_turn import check_turn
from desktop_app.ui.conversation.citation_cursor import CitationCursor
from desktop_app.ui.conversation.history_panel import HistoryPanel
from desktop_app.ui.conversation.markdown_export import conversation_to_markdown
from desktop_app.ui.conversation.pane import ConversationPane
from desktop_app.ui.library.tree_model import LibraryModel
from desktop_app.ui.qt.async_bridge import TaskSet
from desktop_app.ui.viewer.page_viewer import PageViewer
from desktop_app.ui.window import dialogs

logger = logging.getLogger(__name__)


class AnswerMixin:
    """Questions, checked texts, reopened answers, citations and export of the main window."""

    kb: KnowledgeBaseAPI
    ask_task: asyncio.Task[AnswerTurn] | None
    asking_turn: AnswerTurn | None  # the turn the running question writes
    tasks: TaskSet
    library: LibraryModel
    conversation: ConversationPane
    viewer: PageViewer
    history: HistoryPanel
    citations: CitationCursor
    quote_only: bool  # Settings.quote_only as last saved: questions find the passage only

    def ask_from_box(self) -> asyncio.Task[AnswerTurn] | None:
        """Edit ▸ Ask (Ctrl+Enter): ask what the question box holds."""
        question = self.conversation.question.toPlainText().strip()
        if not question:
            self.conversation.question.setFocus()
            self.show_status("Type a question first.")
            return None
        return self.ask(question)

    def follow_up_id(self, before: int | None = None) -> str:
        """The saved answer a new question follows up: the last answered turn shown (before
        turn ``before``); "" when the conversation is new."""
        turns = self.conversation.turns if before is None else self.conversation.turns[:before]
        for turn in reversed(turns):
            # A passage found without a model is not saved: nothing to follow up.
            if turn.answer_id and not turn.state.running and turn.conversation_id and not turn.quote_only:
                return turn.answer_id
        return ""

    def ask(self, question: str, searched: str | None = None, follow_up: str | None = None,
            replaces: str = "") -> asyncio.Task[AnswerTurn] | None:
        """Ask ``question`` as the next turn of the conversation shown (``follow_up``: the
        answer it follows instead); ``searched`` replaces what it is searched for."""
        previous = self.ask_task if self.ask_task is not None and not self.ask_task.done() else None
        if previous is not None and not self.only_checking():
            self.show_status("An answer is still running: stop it first (Esc).")
            return None
        scope = self.conversation.scope
        context = (self.follow_up_id() if follow_up is None else follow_up, searched, replaces)
        if previous is None:
            turn = self.conversation.start_turn(question, scope, self.conversation.scope_label, self.quote_only)
            self.ask_task = asyncio.ensure_future(self._ask(question, turn, scope, context))
        else:  # the last answer is written and only its checks run: stop them, then ask
            self.show_status("Stopped checking the last answer; asking the next question.")
            self.ask_task = asyncio.ensure_future(self._ask_after(previous, question, scope, context))
        self.ask_task.add_done_callback(lambda _task: self.update_actions())
        self.update_actions()
        return self.ask_task

    def new_conversation(self) -> bool:
        """File ▸ New Conversation (Ctrl+N): clear the answers shown and the scope; the next
        question follows up nothing. Not while an answer runs."""
        if self.ask_task is not None and not self.ask_task.done():
            self.show_status("An answer is still running: stop it first (Esc).")
            return False
        self.conversation.clear_turns()
        self.update_actions()
        return True

    def search_again(self, index: int, searched: str) -> asyncio.Task[AnswerTurn] | None:
        """Ask turn ``index``'s question again, searched for ``searched`` (the person's
        correction of "Searched for"), following up the turn before it; the last turn is
        replaced, an earlier one stays and the new answer comes last."""
        turns = self.conversation.turns
        if not 0 <= index < len(turns) or (self.ask_task is not None and not self.ask_task.done()):
            return None
        question, replaces = turns[index].question, ""
        follow_up = self.follow_up_id(before=index)
        if index == len(turns) - 1:
            replaces = "" if turns[index].quote_only else turns[index].answer_id  # was it saved?
            self.conversation.remove_turn(index)
        return self.ask(question, searched=searched, follow_up=follow_up, replaces=replaces)

    def only_checking(self) -> bool:
        """True while the running question's answer is written and only the model's checks
        of its sentences (the judge) still run: a new question may stop them."""
        turn = self.asking_turn
        return (turn is not None and turn.state is TurnState.FINISHED
                and self.ask_task is not None and not self.ask_task.done())

    async def _ask_after(self, previous: asyncio.Task[AnswerTurn], question: str,
                         scope: tuple[str, ...], context: tuple[str, str | None, str] = ("", None, "")) -> AnswerTurn:
        previous.cancel()  # the facade's flag stops the judge before its next question
        with contextlib.suppress(asyncio.CancelledError):
            await previous
        turn = self.conversation.start_turn(question, scope, self.conversation.scope_label, self.quote_only)
        return await self._ask(question, turn, scope, context)

    async def _ask(self, question: str, turn: AnswerTurn, scope: tuple[str, ...] = (),
                   context: tuple[str, str | None, str] = ("", None, "")) -> AnswerTurn:
        self.asking_turn = turn
        follow_up, searched, replaces = context
        try:
            async for event in self.kb.answers.ask(question, scope=scope, follow_up=follow_up or None, searched=searched,
                                                   replaces=replaces or None, quote_only=turn.quote_only):
                self.conversation.apply(event)
                if isinstance(event, AnswerFinished):
                    self.update_actions()  # the next question may be asked while checks run
        except KnownError as error:
            self.conversation.apply(AnswerFailed(str(error), known=True))
        except asyncio.CancelledError:
            self.conversation.end_turn()
            raise
        except Exception as error:  # a bug
            logger.exception("answering %r failed", question)
            self.conversation.apply(AnswerFailed(f"{type(error).__name__}: {error}", known=False))
        self.conversation.end_turn()
        if self.history_dock.isVisible():
            self.history.refresh()
        return turn

    # ------------------------------------------------------------------ checking a text

    def check_text(self) -> check_dialog.CheckTextDialog:
        """File ▸ Check a Text…: paste or open a text; its sentences are checked."""
        return check_dialog.open_check_dialog(self, self.check_text_content)

    def check_text_content(self, text: str, name: str = "") -> asyncio.Task[AnswerTurn] | None:
        """Check each sentence of ``text`` against the library, shown as a turn whose chips
        open the supporting pages; runs as the answer task (Stop and Esc end it)."""
        if self.ask_task is not None and not self.ask_task.done():
            self.show_status("An answer is still running: stop it first (Esc).")
            return None
        turn = check_turn(name)
        self.conversation.add_turn(turn)
        self.asking_turn = None  # a check is no answer whose checks a question may stop
        self.ask_task = asyncio.ensure_future(check_dialog.run_check(self, turn, text, name))
        self.ask_task.add_done_callback(lambda _task: self.update_actions())
        self.update_actions()
        return self.ask_task

    # ------------------------------------------------------------------ history

    def _on_history_visible(self, visible: bool) -> None:
        if visible:
            self.history.refresh()

    def _on_reopened(self, turns: list[AnswerTurn]) -> None:
        """A conversation reopened from the history: its turns come after those shown, and
        the next question continues it."""
        for turn in turns:
            if turn.scope and not turn.scope_label:
                rows = [self.library.row(path) for path in turn.scope]
                if len(rows) == 1 and rows[0] is not None:
                    turn.scope_label = rows[0].title
            self.conversation.add_turn(turn)
        turn = turns[-1]
        # The scope belongs to the conversation: its next question is asked within it too.
        if self.ask_task is None or self.ask_task.done():
            self.conversation.set_scope(turn.scope, turn.scope_label or ", ".join(Path(p).name for p in turn.scope))
        stale = turn.stale_citations()
        note = f"; {len(stale)} cited source(s) changed or removed since" if stale else ""
        within = f" (asked within {turn.scope_label or ', '.join(Path(p).name for p in turn.scope)})" if turn.scope else ""
        self.show_status(f"Reopened the answer to “{turn.question}”{within}{note}.")

    # ------------------------------------------------------------------ citations

    def _on_citation_clicked(self, turn_index: int, cid: str) -> None:
        turn = self.conversation.turns[turn_index]
        source = turn.source(cid)
        if source is None:
            self.show_status(f"[{cid}] is not among the sources given to the model.")
            return
        self.citations.clicked(self.conversation.turns, turn_index, cid)  # F8 goes on from here
        self.tasks.spawn(self.show_citation(source, turn.support_spans(cid)), f"cite {cid}")

    def _on_quote_clicked(self, turn_index: int, index: int) -> None:
        """A quote (the document's own words) opens its page with the quoted sentence(s)
        highlighted, not the whole passage its marker opens."""
        turn = self.conversation.turns[turn_index]
        source = turn.quote_source(index)
        if source is None:
            self.show_status("This quote's source is not among the answer's sources.")
            return
        self.tasks.spawn(self.show_citation(source, list(source.read)), f"quote {index}")

    def step_citation(self, direction: int) -> SourcePayload | None:
        """F8 / Shift+F8: open the next (+1) or previous (-1) cited passage of the answer."""
        turns = self.conversation.turns
        step = self.citations.step(turns, direction)
        if step is None:
            self.show_status("No answer with citations yet.")
            return None
        turn = turns[step.turn_index]
        self.show_status(step.describe(turn))
        self.tasks.spawn(self.show_citation(step.source, turn.support_spans(step.cid)), f"cite {step.cid}")
        return step.source

    def _on_suggestion_clicked(self, turn_index: int, chunk_id: str) -> None:
        source = self.conversation.turns[turn_index].source_by_chunk(chunk_id)
        if source is not None:
            self.tasks.spawn(self.show_citation(source, []), f"suggest {chunk_id}")

    async def show_citation(self, source: SourcePayload, support: list[tuple[int, int]]) -> bool:
        """Open the cited page now; highlight once the facade confirms the file is unchanged."""
        token = self.viewer.show_source(source, support)
        try:
            state = await self.kb.library.source_state(source.chunk_id, source.doc_id)
        except KnownError as error:
            logger.info("source state of %s unknown: %s", source.chunk_id, error)
            state = SourceState.REMOVED if not Path(source.doc_path).is_file() else SourceState.CURRENT
        lines: list[OcrLine] = []
        if source.reflowable:
            part = None
            if state is SourceState.CURRENT:
                try:
                    part = await self.kb.library.document_part(source.doc_id, source.page)
                except KnownError as error:
                    logger.info("part %d of %s unknown: %s", source.page, source.doc_id, error)
            return self.viewer.apply_source_state(token, state, part=part)
        if state is SourceState.CURRENT:
            try:  # a page read by OCR is highlighted from its line boxes
                lines = await self.kb.library.ocr_lines(source.doc_id, source.page, source.char_start, source.char_end)
            except KnownError as error:
                logger.info("OCR lines of %s unknown: %s", source.chunk_id, error)
        return self.viewer.apply_source_state(token, state, lines)

    # ------------------------------------------------------------------ export

    def _exportable_turn(self) -> AnswerTurn | None:
        for turn in reversed(self.conversation.turns):
            if not turn.state.running and (turn.text or turn.no_basis or turn.quotes):
                return turn
        return None

    def export_markdown(self, path: str | Path) -> Path:
        """Write the current conversation (the finished turns shown of the last answer's
        conversation) as Markdown."""
        turn = self._exportable_turn()
        if turn is None:
            raise KnownError("There is no finished answer to export yet.")
        turns = [t for t in self.conversation.turns if not t.state.running and (t.text or t.no_basis or t.quotes)
                 and t.conversation_id and t.conversation_id == turn.conversation_id] or [turn]
        target = Path(path)
        target.write_text(conversation_to_markdown(turns), encoding="utf-8")
        self.show_status(f"{'Conversation' if len(turns) > 1 else 'Answer'} exported to {target}")
        return target

    def choose_export(self) -> None:
        turn = self._exportable_turn()
        if turn is not None:
            dialogs.choose_export_file(self, turn.question, self._export_to)

    def _export_to(self, path: str) -> None:
        try:
            self.export_markdown(path)
        except (OSError, KnownError) as error:
            self.report(f"Could not export the answer: {error}", known=True)
