"""`folio verify` and the facade's check_text / check_claims over generated PDFs with the
fake embedder: an exported answer is checked against the passages it cites, a draft
against what retrieval finds, and a --claims batch needs no library."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from desktop_app import cli
from desktop_app.core.types import AnswerFinished, Verdict
from tests.pdfgen import write_pdf
from tests.services.test_knowledge_base import MANUAL, collect, make_kb

LEASE = [
    ["Residential Lease Agreement", "Section 1 Parties", "This lease is made between the landlord and the tenant."],
    ["Section 4 Repairs", "The tenant must report damage to the landlord within 30 days of discovering it.",
     "The landlord pays for repairs caused by normal wear."],
    ["Section 5 Rent", "Rent is due on the first day of each month.", "A late fee of 50 dollars applies after 5 days."],
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "lease.pdf", LEASE, title="Residential Lease")
    write_pdf(docs / "pump.pdf", MANUAL, title="Pump Manual")
    return docs


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


def test_folio_verify_prints_a_line_per_sentence_and_json(folder: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    kb = make_kb(tmp_path)
    collect(kb.library.index(folder))
    asyncio.run(kb.close())
    draft = tmp_path / "draft.md"
    draft.write_text("# My notes\n\nRent is due on the **first day** of each month.\n\n"
                     "- Replace the impeller seal every 2000 operating hours.\n", encoding="utf-8")
    db = str(tmp_path / "lib.duckdb")
    assert cli.main(["verify", str(draft), "--db", db, "--no-judge"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Checking a text “My notes”: 3 sentences."
    assert out[1].split()[:2] == ["1", "not_factual"]
    assert out[2].split()[:4] == ["2", "supported", "lease.pdf", "p."] and "← Rent is due" in out[2]
    assert out[3].split()[:3] == ["3", "supported", "pump.pdf"] and "Replace the impeller seal every 2000 operating hours.”" in out[3]
    assert out[-1] == "1 not_factual, 2 supported"

    assert cli.main(["verify", str(draft), "--db", db, "--json", "--no-judge"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events] == ["check_started"] + ["sentence_check"] * 3 + ["check_finished"]
    rent = events[2]
    assert rent["verdict"] == "supported" and rent["page"] == 3 and rent["doc_path"].endswith("lease.pdf")
    (start, end), = rent["highlight"]
    assert rent["char_start"] <= start < end <= rent["char_end"]


def test_folio_verify_claims_needs_no_library_and_survives_bad_lines(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    passages = [{"label": "1", "text": "A late fee of 50 dollars applies after 5 days."}]
    claims = tmp_path / "claims.jsonl"
    claims.write_text("\n".join([
        json.dumps({"sentence": "A late fee of 50 dollars applies after 5 days.", "passages": passages, "ids": ["1"]}),
        '{"sentence": 5}',
        json.dumps({"sentence": "A late fee of 70 dollars applies after 5 days.", "passages": passages, "ids": ["1"]}),
    ]) + "\n", encoding="utf-8")
    assert cli.main(["verify", "--claims", str(claims), "--db", str(tmp_path / "none.duckdb"), "--no-judge"]) == 0
    captured = capsys.readouterr()
    results: list[dict[str, Any]] = [json.loads(line) for line in captured.out.splitlines()]
    assert [r["line"] for r in results] == [1, 2, 3]
    assert results[0]["verdict"] == "supported" and results[0]["quote"] == passages[0]["text"]
    assert results[1] == {"line": 2, "error": '"sentence" must be a non-empty string'}
    assert results[2]["verdict"] != "supported"
    assert "Traceback" not in captured.err and not (tmp_path / "none.duckdb").exists()


def test_folio_verify_says_when_the_input_cannot_be_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["verify", "--claims", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl does not exist" in capsys.readouterr().err
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Caf\xe9 au lait.".encode("latin-1"))
    assert cli.main(["verify", str(latin1)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err
    assert cli.main(["verify"]) == 2
    assert "Name the text to check" in capsys.readouterr().err


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
