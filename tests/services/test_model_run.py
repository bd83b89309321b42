"""The models area (services/model_run.py) with a fake answer model: the prompt heads
primed at warm-up, and a kept model primed with the question's own head."""

from __future__ import annotations

import time
from pathlib import Path

from desktop_app.core.settings import Settings
from desktop_app.services.knowledge_base import KnowledgeBase
from tests.fakes import FakeEmbedder, FakeGenerator
from tests.services.facade import close, collect, make_kb


def test_warm_up_primes_the_answer_model_with_the_head_every_question_shares(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Damage must be reported within 30 days [1]."])
    kb = make_kb(tmp_path, gen)
    kb.models.warm_up()
    assert kb.models.prime_answer_model().result(timeout=30) > 0
    collect(kb.library.index(folder))
    collect(kb.answers.ask("How long does the tenant have to report damage?"))
    asked = gen.prompts[-1]
    # One head per prompt language, English first; the system prompt and the worked example
    # are the same messages in the English head and the English question's prompt.
    english = gen.primes[0]
    assert english[0]["content"].startswith("You are Folio")
    deadline = time.monotonic() + 30
    while {p[0]["content"][:6] for p in gen.primes} != {"You ar", "你是 Fol", "Du bis"}:
        assert time.monotonic() < deadline, "the Chinese and German heads were not primed"
        time.sleep(0.05)
    assert english[:-1] == asked[:-1] and len(asked) >= 3
    assert "30 days" in asked[-1]["content"] and "30 days" not in english[-1]["content"]
    close(kb)


def test_no_priming_for_short_ids_whose_head_changes_with_every_question(tmp_path: Path) -> None:
    gen = FakeGenerator()
    kb = make_kb(tmp_path, gen, citation_style="shortid")
    assert kb.models.prime_answer_model().result(timeout=30) == 0
    assert not hasattr(gen, "primed")
    close(kb)


def test_a_kept_model_is_primed_with_the_questions_own_head_before_it_answers(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Damage must be reported within 30 days [1]."])
    kb = KnowledgeBase(tmp_path / "lib.duckdb", Settings(), embedder=FakeEmbedder(), generator=gen,
                       keep_model_s=60.0)
    collect(kb.library.index(folder))
    collect(kb.answers.ask("How long does the tenant have to report damage?"))
    # Only the question's language, once, before the prompt that shares its head is read.
    assert len(gen.primes) == 1 and gen.primes[0][0]["content"].startswith("You are Folio")
    assert gen.primes[0][:-1] == gen.prompts[-1][:-1]
    close(kb)
    plain = make_kb(tmp_path / "plain", FakeGenerator(["Damage must be reported within 30 days [1]."]))
    collect(plain.library.index(folder))
    collect(plain.answers.ask("How long does the tenant have to report damage?"))
    assert not hasattr(plain.models._generator, "primes")  # the window primes at start, not per question
    close(plain)
