"""`folio verify` over generated PDFs with the fake embedder: a line per sentence and
JSON, a --claims batch that needs no library, and input it cannot read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from desktop_app import cli
from tests.services.facade import collect, make_kb


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
