"""Answers from a real model server: llama-cpp-python's OpenAI-compatible server over the
small GGUF on 127.0.0.1. The same text as the model in-process at temperature 0 (and the
same citations over whole answers: the slow test), cancel closing the stream, the server
killed mid-answer (a clean error, the partial answer kept), a wrong key, a URL that is no
model server, and `folio ask --server` with the key kept out of what Folio writes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core import settings as settings_mod
from desktop_app.core.answer.citations import citation_grammar
from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.server_client import ServerGenerator
from desktop_app.core.models.server_http import check_connection
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFailed, AnswerFinished, TokenDelta
from desktop_app.services.knowledge_base import KnowledgeBase
from tests.e2e.llama_server import LlamaServer, free_port, llama_server, web_server
from tests.e2e.test_generate_real import QUESTION
from tests.pdfgen import write_pdf

pytestmark = pytest.mark.e2e

KEY = "folio-test-key-4b7e19"
LEASE = [
    ["Residential Lease Agreement", "Section 1 Parties",
     "This lease is made between the landlord, Harbor Homes, and the tenant, Ana Ruiz."],
    ["Section 2 Deposit", "The tenant pays a security deposit of 1,800 dollars before moving in.",
     "The landlord returns the deposit within 21 days after the lease ends."],
    ["Section 3 Rent", "Rent is 950 dollars, due on the first day of each month.",
     "A late fee of 50 dollars applies after 5 days."],
    ["Section 4 Repairs", "The tenant must report damage to the landlord within 30 days of discovering it.",
     "The landlord pays for repairs caused by normal wear."],
    ["Section 5 Pets", "The tenant may keep one cat or one small dog with written consent.",
     "A pet fee of 200 dollars is paid once."],
    ["Section 6 Ending the lease", "Either party may end the lease with 60 days of written notice.",
     "The tenant returns all keys on the last day."],
]
QUESTIONS = (
    "How much is the security deposit and when is it returned?",
    "When is the rent due and what is the late fee?",
    "How many days does the tenant have to report damage to the landlord?",
    "May the tenant keep a pet, and what is the pet fee?",
    "How much notice is needed to end the lease?",
    "Who are the parties to the lease agreement?",
    "Within how many days is the deposit returned?",
    "What does the landlord pay for?",
    "Is written consent needed for a dog?",
    "What fee applies after 5 days?",
    "What happens to the keys when the lease ends?",
    "Who pays for repairs caused by normal wear?",
    "How many pets may the tenant keep?",
    "What is the monthly rent?",
)


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


@pytest.fixture(scope="module")
def server(small_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with llama_server(small_model_path, tmp_path_factory.mktemp("llama-server"), key=KEY) as running:
        yield running


@pytest.fixture(scope="module")
def local(small_model_path: Path) -> LlamaGenerator:
    return LlamaGenerator(small_model_path, context_tokens=2048, threads=1)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, real_embedder: Any) -> Path:
    root = tmp_path_factory.mktemp("server-library")
    (root / "docs").mkdir()
    write_pdf(root / "docs" / "lease.pdf", LEASE, title="Residential Lease")
    db = root / "library.duckdb"
    kb = KnowledgeBase(db, Settings(), embedder=real_embedder)
    try:
        summary = collect(kb.library.index(root / "docs"))[-1]
        assert summary.documents == 1 and not summary.failed
    finally:
        asyncio.run(kb.close())
    return db


def server_settings(server: LlamaServer, **changes: Any) -> Settings:
    return Settings(answer_model="server", server_url=server.url, context_tokens=2048, temperature=0.0,
                    **changes)


# ---------------------------------------------------------------------------- streaming


def test_the_server_writes_what_the_model_writes_in_process(server: LlamaServer, local: LlamaGenerator) -> None:
    generator = ServerGenerator(server.url, api_key=KEY, context_tokens=2048)
    try:
        assert generator.tokenizer.url.endswith("/extras/tokenize")  # llama-cpp-python's server counts
        assert generator.count_tokens("When does the library open?") == local.count_tokens("When does the library open?")
        got = list(generator.stream(QUESTION, max_tokens=24, temperature=0.0))
        assert len(got) > 1 and got == list(local.stream(QUESTION, max_tokens=24, temperature=0.0))
        grammar = citation_grammar(["1", "2"], every_sentence=True)
        constrained = "".join(generator.stream(QUESTION, max_tokens=40, temperature=0.0, grammar=grammar))
        assert constrained == "".join(local.stream(QUESTION, max_tokens=40, temperature=0.0, grammar=grammar))
        assert "[1]" in constrained or "[2]" in constrained  # the server honoured the grammar
        assert generator.last_stats is not None and generator.last_stats.completion_tokens > 1
    finally:
        generator.close()


def test_cancel_closes_the_stream_and_the_server_is_free_at_once(server: LlamaServer) -> None:
    generator = ServerGenerator(server.url, api_key=KEY, context_tokens=2048)
    long_answer = [QUESTION[0], {"role": "user", "content": "Write a long story about a lighthouse keeper."}]
    received: list[str] = []
    arrived: list[float] = []
    try:
        with pytest.raises(Cancelled):
            for delta in generator.stream(long_answer, max_tokens=400, temperature=0.0,
                                          should_cancel=lambda: len(received) >= 3):
                received.append(delta)
                arrived.append(time.monotonic())
        assert len(received) == 3
        # The server stopped writing the story: a short answer comes back at once, not after
        # the ~400 tokens it was asked for (llama_cpp.server serves one request at a time).
        # "At once" against the story's own pace on this machine now: under 150 token times
        # (measured: 46, the prompt read and 8 tokens), where the rest of the story takes ~400.
        token_s = max(b - a for a, b in zip(arrived, arrived[1:], strict=False))
        started = time.monotonic()
        assert "".join(generator.stream(QUESTION, max_tokens=8, temperature=0.0)).strip()
        short_s = time.monotonic() - started
        print(f"short answer after the cancel: {short_s:.3f} s; a story token: {token_s:.3f} s")
        assert short_s < 150 * token_s, (short_s, token_s)
    finally:
        generator.close()


def test_the_server_killed_mid_answer_ends_it_cleanly_and_keeps_what_was_written(
    small_model_path: Path, library: Path, real_embedder: Any, tmp_path: Path,
) -> None:
    with llama_server(small_model_path, tmp_path) as doomed:
        kb = KnowledgeBase(library, server_settings(doomed, max_tokens=300), embedder=real_embedder)

        async def ask() -> list[Any]:
            events: list[Any] = []
            async for event in kb.answers.ask("Describe the deposit, the rent and the repairs in detail."):
                events.append(event)
                if isinstance(event, TokenDelta) and sum(isinstance(e, TokenDelta) for e in events) == 2:
                    doomed.kill()
            return events

        try:
            events = asyncio.run(ask())
            failed = [e for e in events if isinstance(e, AnswerFailed)]
            assert len(failed) == 1 and failed[0].known, events[-3:]
            assert "stopped mid-answer" in failed[0].error and f"127.0.0.1:{doomed.port}" in failed[0].error
            assert not any(isinstance(e, AnswerFinished) for e in events)
            written = "".join(e.text for e in events if isinstance(e, TokenDelta))
            history = asyncio.run(kb.answers.history())
            record = asyncio.run(kb.answers.answer_record(history[0].answer_id))
            assert history[0].status == "failed" and record is not None
            assert record.text == written and written.strip()
            assert "stopped mid-answer" in record.reason
        finally:
            asyncio.run(kb.close())


# ---------------------------------------------------------------------------- what is wrong, said plainly


def test_a_wrong_or_missing_key_is_said_plainly(server: LlamaServer) -> None:
    with pytest.raises(KnownError, match=r"refused the API key \(401 Unauthorized\)"):
        ServerGenerator(server.url, api_key="not-the-key")
    with pytest.raises(KnownError, match=r"needs an API key \(401 Unauthorized\)"):
        ServerGenerator(server.url)
    with pytest.raises(KnownError, match="refused the API key") as caught:
        check_connection(server.url, "", "not-the-key")
    assert "not-the-key" not in str(caught.value)
    report = check_connection(server.url, "", KEY)
    assert report.model.endswith("SmolLM2-135M-Instruct.Q4_1.gguf") and "/extras/tokenize" in report.tokens


def test_a_url_that_is_not_a_model_server_is_said_plainly(tmp_path: Path) -> None:
    with web_server(tmp_path) as url:
        for address in (url, f"{url}/v1"):
            with pytest.raises(KnownError, match="is not an OpenAI-compatible model server"):
                ServerGenerator(address)
            with pytest.raises(KnownError, match="is not an OpenAI-compatible model server"):
                check_connection(address)
    nobody = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(KnownError, match="Connection refused: nothing answers at 127.0.0.1"):
        ServerGenerator(nobody, backoff_s=0.05)


# ---------------------------------------------------------------------------- the command line


def test_folio_ask_with_a_server_keeps_the_key_out_of_what_it_writes(
    server: LlamaServer, library: Path, embedder_dir: Path, tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, FOLIO_HOME=str(home), FOLIO_MODELS_DIR=str(embedder_dir.parent),
               **{settings_mod.SERVER_KEY_ENV: KEY})

    def folio(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "desktop_app", *args], env=env, capture_output=True,
                              text=True, timeout=300, check=False)

    done = folio("ask", QUESTIONS[1], "--db", str(library), "--server", server.url, "--json", "--max-tokens", "60")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert events[0]["event"] == "answer_started" and events[-1]["event"] == "answer_finished"
    answer_id = events[-1]["answer_id"]
    history = json.loads(folio("history", "--db", str(library), "--json").stdout)
    assert next(r for r in history if r["answer_id"] == answer_id)["model_id"] == (
        f"SmolLM2-135M-Instruct.Q4_1.gguf at 127.0.0.1:{server.port}")
    for fmt in ("md", "json"):
        exported = folio("export", answer_id, "--db", str(library), "--format", fmt)
        assert exported.returncode == 0 and KEY not in exported.stdout
    written = [p for p in home.rglob("*") if p.is_file()]
    assert all(KEY.encode() not in p.read_bytes() for p in written), written
    wrong = subprocess.run([sys.executable, "-m", "desktop_app", "ask", QUESTIONS[1], "--db", str(library),
                            "--server", server.url], env=dict(env, **{settings_mod.SERVER_KEY_ENV: "wrong"}),
                           capture_output=True, text=True, timeout=300, check=False)
    assert wrong.returncode == 2 and "refused the API key" in wrong.stderr and "wrong" not in wrong.stderr


# ---------------------------------------------------------------------------- the same citations


@pytest.mark.slow
def test_answers_cite_the_same_sources_as_the_model_in_process(
    server: LlamaServer, local: LlamaGenerator, library: Path, real_embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(settings_mod.SERVER_KEY_ENV, KEY)
    options = {"max_tokens": 80, "use_grammar": True}

    def answers(kb: KnowledgeBase) -> list[AnswerFinished]:
        try:
            finished = []
            for question in QUESTIONS:
                events = collect(kb.answers.ask(question))
                finished.append(next(e for e in events if isinstance(e, AnswerFinished)))
            return finished
        finally:
            asyncio.run(kb.close())

    in_process = answers(KnowledgeBase(library, Settings(temperature=0.0, context_tokens=2048, **options),
                                       embedder=real_embedder, generator=local))
    served = answers(KnowledgeBase(library, server_settings(server, **options), embedder=real_embedder))
    same = [q for q, mine, theirs in zip(QUESTIONS, in_process, served, strict=True) if theirs.citations == mine.citations]
    citing = [q for q, mine in zip(QUESTIONS, in_process, strict=True) if q in same and mine.citations]
    # Greedy decoding of the same prompt by the same weights; what can differ is the float
    # arithmetic of the prompt's batches (the server reads it in one batch of up to 512
    # tokens, Folio in steps of 128 and the last token alone), which flips a near tie now
    # and then: measured here, 13 of 14 answers cite the same spans (the 14th diverges
    # after its first sentence).
    assert len(citing) >= 5, citing  # answers that cite, and cite the same: a comparison that means something
    assert len(same) >= len(QUESTIONS) - 2, [q for q in QUESTIONS if q not in same]
