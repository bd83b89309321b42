"""The scripted flow behind ``folio PATH [--in FILE] --ask Q --open-citation N --screenshot F``.

Open the folder and wait for the index summary, scope the question box to ``--in`` (its
chip shows), ask and wait for the answer, open
citation N and wait until its page is rendered and highlighted, then save a grab of the
whole window. Each step that fails raises :class:`AutomationError` with a reason the
command prints to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from desktop_app.ui.conversation.answer_turn import TurnState
from desktop_app.ui.qt.async_bridge import SignalWaiter
from desktop_app.ui.window.main_window import MainWindow

logger = logging.getLogger(__name__)


class AutomationError(Exception):
    """A step of the scripted flow failed; the message says which and why."""


@dataclass(frozen=True)
class AutomationPlan:
    folder: str | None = None
    question: str | None = None
    citation: int | None = None
    screenshot: str | None = None
    within: tuple[str, ...] = ()  # ask within these files or folders
    check: str | None = None  # a text file to check (File ▸ Check a Text…)
    quote: int | None = None  # open the answer's quote N (the document's own sentence), 1 = first
    index_timeout_s: float = 3600.0
    answer_timeout_s: float = 1800.0
    render_timeout_s: float = 30.0

    @property
    def empty(self) -> bool:
        return not (self.folder or self.question or self.citation or self.screenshot or self.check
                    or self.quote)


async def run_plan(window: MainWindow, plan: AutomationPlan, err: TextIO | None = None) -> int:
    """Run ``plan`` on a shown window; 0 on success, 1 with the reason on ``err``."""
    err = err or sys.stderr
    failure: str | None = None
    try:
        await _run(window, plan)
    except AutomationError as error:
        failure = str(error)
    except TimeoutError:
        failure = "timed out"
    if plan.screenshot:
        # Saved after a failure too: the picture usually shows what went wrong.
        try:
            save_screenshot(window, plan.screenshot)
        except AutomationError as error:
            failure = failure or str(error)
    if failure is not None:
        print(f"folio: {failure}", file=err)
        logger.error("automation failed: %s", failure)
        return 1
    return 0


async def _run(window: MainWindow, plan: AutomationPlan) -> None:
    if plan.folder:
        await _index(window, plan)
    if plan.within:
        paths = tuple(str(Path(p).expanduser().resolve()) for p in plan.within)
        if len(paths) == 1:
            window.ask_within(paths[0])
        else:
            window.conversation.set_scope(paths, ", ".join(Path(p).name for p in paths))
    if plan.question:
        await _ask(window, plan)
    if plan.check:
        await _check(window, plan)
    if plan.citation is not None:
        await _open_citation(window, plan)
    if plan.quote is not None:
        await _open_quote(window, plan)
    # Let queued repaints and the scroll-into-view run before the grab.
    await asyncio.sleep(0.1)


async def _index(window: MainWindow, plan: AutomationPlan) -> None:
    assert plan.folder is not None
    if not Path(plan.folder).is_dir():
        raise AutomationError(f"{plan.folder} is not a folder")
    try:
        summary = await asyncio.wait_for(window.open_folder(plan.folder), plan.index_timeout_s)
    except TimeoutError:
        raise AutomationError(f"indexing took longer than {plan.index_timeout_s:.0f} s") from None
    if summary is None:
        raise AutomationError(f"indexing did not finish. {window.status_label.text()}")
    if summary.cancelled:
        raise AutomationError("indexing was cancelled")
    logger.info("indexed: %s", summary.to_json())


async def _ask(window: MainWindow, plan: AutomationPlan) -> None:
    assert plan.question is not None
    task = window.ask(plan.question)
    if task is None:
        raise AutomationError("could not ask: an answer is already running")
    try:
        turn = await asyncio.wait_for(task, plan.answer_timeout_s)
    except TimeoutError:
        raise AutomationError(f"the answer took longer than {plan.answer_timeout_s:.0f} s") from None
    if turn.state is TurnState.FAILED:
        raise AutomationError(f"the answer failed: {turn.error}")
    if turn.state is TurnState.CANCELLED:
        raise AutomationError("the answer was cancelled")


async def _check(window: MainWindow, plan: AutomationPlan) -> None:
    assert plan.check is not None
    try:
        text = Path(plan.check).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise AutomationError(f"cannot read {plan.check}: {error}") from None
    task = window.check_text_content(text, Path(plan.check).name)
    if task is None:
        raise AutomationError("could not check: an answer is already running")
    try:
        turn = await asyncio.wait_for(task, plan.answer_timeout_s)
    except TimeoutError:
        raise AutomationError(f"checking took longer than {plan.answer_timeout_s:.0f} s") from None
    if turn.state is TurnState.FAILED:
        raise AutomationError(f"checking failed: {turn.error}")


async def _open_citation(window: MainWindow, plan: AutomationPlan) -> None:
    assert plan.citation is not None
    turn = window.conversation.current_turn()
    if turn is None:
        raise AutomationError("--open-citation needs an answer: give --ask too")
    source = turn.nth_citation(plan.citation)
    if source is None:
        raise AutomationError(
            f"the answer has no citation {plan.citation} "
            f"({len(turn.cited_ids())} cited, {len(turn.sources)} sources given)"
        )
    waiter = SignalWaiter(window.viewer.settled)
    try:
        highlighted = await window.show_citation(source, turn.support_spans(source.id))
        await waiter.wait(plan.render_timeout_s)
    except TimeoutError:
        raise AutomationError(
            f"page {source.page} of {source.doc_path} did not render within "
            f"{plan.render_timeout_s:.0f} s"
        ) from None
    finally:
        waiter.close()
    if not highlighted:
        raise AutomationError(f"the cited passage was not highlighted: {window.viewer.note}")
    logger.info("citation %d opened: %s p. %d", plan.citation, source.doc_path, source.page)


async def _open_quote(window: MainWindow, plan: AutomationPlan) -> None:
    assert plan.quote is not None
    turn = window.conversation.current_turn()
    if turn is None:
        raise AutomationError("--open-quote needs an answer: give --ask too")
    source = turn.quote_source(plan.quote - 1)
    if source is None:
        raise AutomationError(f"the answer has no quote {plan.quote} ({len(turn.quotes)} quoted)")
    waiter = SignalWaiter(window.viewer.settled)
    try:
        highlighted = await window.show_citation(source, list(source.read))
        await waiter.wait(plan.render_timeout_s)
    except TimeoutError:
        raise AutomationError(f"page {source.page} of {source.doc_path} did not render within "
                              f"{plan.render_timeout_s:.0f} s") from None
    finally:
        waiter.close()
    if not highlighted:
        raise AutomationError(f"the quoted sentence was not highlighted: {window.viewer.note}")
    logger.info("quote %d opened: %s p. %d", plan.quote, source.doc_path, source.page)


def save_screenshot(window: MainWindow, path: str) -> Path:
    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise AutomationError(f"cannot create {target.parent}: {error}") from None
    window.conversation.render_now()
    if not window.grab().save(str(target)):
        raise AutomationError(f"could not save the screenshot to {target}")
    logger.info("screenshot saved to %s", target)
    return target
