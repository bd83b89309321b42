"""The checking area (services/checking.py) with the fake embedder over generated PDFs: an
exported answer checked against the passages it cites, and the judge's second opinion on
a text and on --claims lines."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from desktop_app.core.types import AnswerFinished, Verdict
from tests.services.facade import LEASE, collect, make_kb


def test_an_exported_answer_is_checked_against_its_cited_pages(folder: Path, tmp_path: Path) -> None:
    from tests.fakes import FakeGenerator

    gen = FakeGenerator(["Damage must be reported to the landlord within 30 days [1]. "
                         "A late fee of 90 dollars applies [1]."])
    kb = make_kb(tmp_path, gen, sources_per_answer=3)
    try:
        collect(kb.library.index(folder))
        events = collect(kb.answers.ask("How long does the tenant have to report damage?"))
        finished = next(e for e in events if isinstance(e, AnswerFinished))
        exported = asyncio.run(kb.answers.export_answer(finished.answer_id))
        assert exported is not None and "[^1]" in exported
        checked = collect(kb.checking.check_text(exported, "answer.md"))
    finally:
        asyncio.run(kb.close())
    started, *checks, done = checked
    assert started.event == "check_started" and started.exported and len(checks) == 2
    assert started.title == "How long does the tenant have to report damage?"
    reported, fee = checks
    assert reported.verdict is Verdict.SUPPORTED and reported.from_citation and reported.cited == ("1",)
    assert reported.source is not None and Path(reported.source.doc_path).name == "lease.pdf"
    assert reported.source.page == 2 and "30 days" in reported.quote
    assert reported.source.text[reported.support[0][0]:reported.support[0][1]] in reported.source.text
    assert fee.verdict is not Verdict.SUPPORTED  # the lease says 50 dollars
    assert done.event == "check_finished" and done.sentences == 2 and not done.cancelled


class JudgeReplies:
    """A fake answer model that answers every judge question with ``reply``."""

    model_id = "fake-judge"
    context_tokens = 4096
    scores_replies = False  # it answers in words: the judge reads its sampled reply
    last_stats = None

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[Any] = []

    def stream(self, messages: Any, **_: Any) -> Any:
        self.prompts.append(messages)
        return iter([self.reply])

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def close(self) -> None:
        pass


def test_the_judge_gives_its_second_opinion_on_unsure_lines(tmp_path: Path) -> None:
    """With a judge the answer model is asked about a line the rules leave not confirmed,
    and its answer does what it does in an answer (judge.decide: a sampled 'no' leaves it
    not confirmed, never red: red needs the passage's conflicting words)."""
    from desktop_app.core.verdicts.judge import decide
    passages = [{"label": "1", "text": LEASE[1][1]}]
    lines = [
        json.dumps({"sentence": "The tenant reports damage to the owner within 30 days.", "passages": passages,
                    "ids": ["1"]}),
        json.dumps({"sentence": LEASE[1][1], "passages": passages, "ids": ["1"]}),
    ]
    gen = JudgeReplies("no")
    kb = make_kb(tmp_path, gen)  # type: ignore[arg-type]
    try:
        results = collect(kb.checking.check_claims(lines, judge=True))
        rules_only = collect(kb.checking.check_claims(lines, judge=False))
    finally:
        asyncio.run(kb.close())
    unsure, stated = results
    assert rules_only[0]["verdict"] == "not_confirmed" and "judge_asked" not in rules_only[0]
    assert unsure["judge_asked"] and unsure["verdict"] == str(decide(Verdict.NOT_CONFIRMED, "no")) == "not_confirmed"
    assert "judge" in unsure["reason"]
    assert stated["verdict"] in ("supported", str(decide(Verdict.SUPPORTED, "no")))
    assert len(gen.prompts) == 1 + stated["judge_asked"]  # a judge may also be asked to veto


def test_checking_a_text_with_the_judge_asks_about_unsure_sentences(folder: Path, tmp_path: Path) -> None:
    from desktop_app.core.verdicts.judge import decide

    gen = JudgeReplies("no")
    kb = make_kb(tmp_path, gen)  # type: ignore[arg-type]
    try:
        collect(kb.library.index(folder))
        events = collect(kb.checking.check_text("Rent is due on the first day of each month.\n\n"
                                       "The tenant reports damage to the owner within 30 days.", "d.txt", judge=True))
    finally:
        asyncio.run(kb.close())
    rent, damage = events[1:3]
    assert rent.verdict is Verdict.SUPPORTED
    assert damage.verdict is decide(Verdict.NOT_CONFIRMED, "no") is Verdict.NOT_CONFIRMED and "judge" in damage.reason
    assert damage.source is not None and damage.source.page == 2 and len(gen.prompts) == 1
