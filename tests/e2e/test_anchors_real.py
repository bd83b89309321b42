"""A question naming what the documents lack, on a real RFC with the real embedder and the
real small GGUF: "close code 1012" (RFC 6455 defines 1000-1011 and 1015) ends in no basis
with the closest passages shown; "close code 1009" is answered from the passage stating it."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFinished, AnswerStarted, NoBasis
from desktop_app.services.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.e2e


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


def test_a_code_the_rfc_never_defines_has_no_basis_and_one_it_defines_is_read(
    tmp_path: Path, shared_dir: Path, small_model_path: Path, real_embedder: Any,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(shared_dir / "corpus" / "en_rfc6455_websocket.pdf", folder)
    generator = LlamaGenerator(small_model_path, context_tokens=2048, threads=1)
    settings = Settings(max_tokens=40, temperature=0.0, judge=False)
    kb = KnowledgeBase(tmp_path / "lib.duckdb", settings, embedder=real_embedder, generator=generator)
    try:
        collect(kb.library.index(folder))
        events = collect(kb.answers.ask("What does WebSocket close code 1012 (service restart) mean?"))
        started = next(e for e in events if isinstance(e, AnswerStarted))
        reason = next(e for e in events if isinstance(e, NoBasis)).reason
        assert "\u201c1012\u201d" in reason, reason
        # The passages on the topic are shown, clickable, and none states the code.
        assert started.sources and all("1012" not in s.text for s in started.sources)
        assert any("Close" in s.text for s in started.sources)
        assert next(e for e in events if isinstance(e, AnswerFinished)).citations == {}

        events = collect(kb.answers.ask("What does WebSocket close status code 1009 indicate?"))
        assert not any(isinstance(e, NoBasis) for e in events)
        started = next(e for e in events if isinstance(e, AnswerStarted))
        stating = [s for s in started.sources if "1009 indicates" in s.text]
        assert stating and stating[0].page == 46, [(s.page, s.text[:80]) for s in started.sources]

        events = collect(kb.answers.ask("What close code does the WebSocket protocol assign to HotpotQA?"))
        reason = next(e for e in events if isinstance(e, NoBasis)).reason
        assert reason.startswith("The documents never mention \u201cHotpotQA\u201d"), reason
    finally:
        asyncio.run(kb.close())
    # `folio ask` lists the passages the refusal was decided on (the library's embedder).
    env = dict(os.environ, FOLIO_HOME=str(tmp_path / "home"), FOLIO_MODELS_DIR=str(small_model_path.parent))
    saved = subprocess.run([sys.executable, "-c", "from desktop_app.core import settings as s; "
                            "s.save(s.Settings(embedder='minilm'))"], env=env, check=False)
    assert saved.returncode == 0
    done = subprocess.run(
        [sys.executable, "-m", "desktop_app", "ask", "What does WebSocket close code 1012 mean?",
         "--db", str(tmp_path / "lib.duckdb"), "--model", "small"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "[no basis] No passage found states \u201c1012\u201d" in done.stdout, done.stdout
    assert "Passages read:\n  [1] RFC 6455 - The WebSocket Protocol" in done.stdout, done.stdout
