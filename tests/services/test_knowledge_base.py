"""The composition root (services/knowledge_base.py) with fake models over generated PDFs:
cancel() stops what runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from desktop_app.core.types import AnswerCancelled, TokenDelta
from tests.fakes import FakeGenerator
from tests.services.facade import close, collect, make_kb


def test_cancel_mid_stream_stops_the_answer(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Rent is due on the first day of each month [1]. " * 40], delta=2, pause=0.01)
    kb = make_kb(tmp_path, gen)
    collect(kb.library.index(folder))

    async def run() -> list[Any]:
        seen: list[Any] = []
        async for event in kb.answers.ask("When is rent due?"):
            seen.append(event)
            if sum(isinstance(e, TokenDelta) for e in seen) == 5:
                kb.cancel()
        return seen

    events = asyncio.run(run())
    assert isinstance(events[-1], AnswerCancelled)
    assert sum(isinstance(e, TokenDelta) for e in events) < 30
    close(kb)
