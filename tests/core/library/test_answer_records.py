"""The saved answers' own file: kept apart from the index, copied out of libraries from
before it existed, every write one transaction, a full disk a clear message."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest

from desktop_app.core.errors import DiskFullError
from desktop_app.core.library import answer_records, migrations
from desktop_app.core.library.answer_records import AnswerArchive, answers_path
from desktop_app.core.library.store import Store, top_folders
from desktop_app.core.types import ClaimVerdict, SavedAnswer, SourcePayload, Verdict


def payload(n: int) -> dict[str, Any]:
    return {"sources": [], "citations": {}, "claims": [], "hallucinated": [], "reason": f"r{n}"}


def test_answers_live_beside_the_library_not_in_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "library.duckdb")
    store.save_answer("a1b2", "Who pays?", "The tenant [1].", "label", "m", "finished", payload(1), ["/x"])
    store.judge_put("sha", "chunk", "partial")
    store.close()
    assert answers_path(tmp_path / "library.duckdb") == tmp_path / "library.answers.sqlite"
    con = duckdb.connect(str(tmp_path / "library.duckdb"), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    con.close()
    assert "answers" not in tables and "judge_cache" not in tables
    archive = AnswerArchive(tmp_path / "library.answers.sqlite")
    assert archive.answer("a1b2").text == "The tenant [1]."  # type: ignore[union-attr]
    assert archive.answer("a1").scope == ("/x",)  # type: ignore[union-attr]  # a prefix finds it
    assert archive.judge_get("sha", "chunk") == "partial"
    assert archive.delete_answer("a1b2") and archive.answers() == []
    archive.close()


def old_library(path: Path, answers: int) -> None:
    """A library as Folio wrote it before answers had their own file (schema 6)."""
    con = duckdb.connect(str(path))
    old = migrations.MIGRATIONS
    migrations.MIGRATIONS = [m for m in old if m[0] < migrations.ANSWERS_MOVED_OUT]
    try:
        migrations.migrate(con)
    finally:
        migrations.MIGRATIONS = old
    for n in range(answers):
        con.execute("INSERT INTO answers (answer_id, question, text, style, model_id, status, payload, scope)"
                    " VALUES (?, ?, ?, 'label', 'm', 'finished', ?, '')",
                    [f"id{n:03d}", f"question {n}", f"answer {n}", '{"reason": "r"}'])
    con.execute("INSERT INTO judge_cache VALUES ('s1', 'c1', true, ''), ('s2', 'c2', false, 'partial')")
    con.execute("INSERT INTO files (path, doc_id, size, mtime, status) VALUES"
                " ('/docs/a/x.pdf', 'd1', 1, 0, 'indexed'), ('/docs/a/b/y.pdf', 'd2', 1, 0, 'indexed'),"
                " ('/other/z.pdf', 'd3', 1, 0, 'indexed')")
    con.close()


def test_an_old_library_gives_its_answers_to_their_own_file_on_first_open(tmp_path: Path) -> None:
    db = tmp_path / "library.duckdb"
    old_library(db, answers=25)
    store = Store(db)
    assert len(store.answers()) == 25
    assert store.answer("id007").question == "question 7"  # type: ignore[union-attr]
    assert store.judge_get("s1", "c1") == "yes" and store.judge_get("s2", "c2") == "partial"
    assert store.archive.folders() == ["/docs/a", "/other"]  # what a repair rebuilds from
    store.close()
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT max(version) FROM schema_version").fetchall() == [(migrations.LATEST,)]
    assert "answers" not in {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    con.close()


def test_a_crash_between_copying_and_dropping_loses_and_doubles_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "library.duckdb"
    old_library(db, answers=5)
    original = migrations.MIGRATIONS
    broken = [(n, sql if n != migrations.ANSWERS_MOVED_OUT else "SELECT no_such_column FROM answers")
              for n, sql in original]
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    with pytest.raises(Exception, match="no_such_column"):
        Store(db)  # the copy ran, the drop failed: both files hold the answers now
    monkeypatch.setattr(migrations, "MIGRATIONS", original)
    store = Store(db)
    assert sorted(a.answer_id for a in store.answers()) == [f"id{n:03d}" for n in range(5)]
    store.close()


def test_a_full_disk_while_saving_an_answer_says_so_and_keeps_the_others(tmp_path: Path) -> None:
    archive = AnswerArchive(tmp_path / "a.answers.sqlite")
    archive.save_answer("kept", "q", "t", "label", "m", "finished", payload(0))

    class FullDisk:
        """sqlite3's own words when the OS says ENOSPC."""

        def __init__(self, con: sqlite3.Connection) -> None:
            self.con = con

        def execute(self, sql: str, params: Any = ()) -> Any:
            if sql.startswith("INSERT"):
                raise sqlite3.OperationalError("database or disk is full")
            return self.con.execute(sql, params)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.con, name)

    archive._con = FullDisk(archive._con)  # type: ignore[assignment]
    with pytest.raises(DiskFullError) as failure:
        archive.save_answer("lost", "q", "t", "label", "m", "finished", payload(1))
    assert "MB free on" in str(failure.value) and "nothing saved" in str(failure.value)
    assert archive.write_failures == 1 and archive.last_failure is failure.value
    assert [a.answer_id for a in archive.answers()] == ["kept"]
    archive.close()


def test_top_folders_are_the_fewest_that_hold_every_file() -> None:
    assert top_folders(["/a/x.pdf", "/a/b/y.pdf", "/ab/z.pdf", "/c/d/e.pdf"]) == ["/a", "/ab", "/c/d"]


def test_a_version_1_file_gets_its_partial_and_unsupported_verdicts_renamed(tmp_path: Path) -> None:
    path = tmp_path / "library.answers.sqlite"
    con = sqlite3.connect(path)
    con.executescript(answer_records._SCHEMA + "PRAGMA user_version = 1;")
    claims = [{"sentence_span": [0, 5], "verdict": v, "ids": ["1"]}
              for v in ("supported", "partial", "unsupported", "contradicted", "uncited")]
    con.execute("INSERT INTO answers (answer_id, question, text, style, model_id, status, created_at, payload)"
                " VALUES ('a1', 'q', 'Text.', 'label', 'm', 'finished', '2026-01-01 00:00:00.000000', ?)",
                [json.dumps({"sources": [], "citations": {}, "claims": claims, "hallucinated": []})])
    con.execute("INSERT INTO judge_cache VALUES ('s', 'c', 'partial 0.4000 0.3000')")
    con.commit()
    con.close()
    archive = AnswerArchive(path)
    verdicts = [c.verdict for c in archive.answer("a1").claims]  # type: ignore[union-attr]
    assert verdicts == ["supported", "not_confirmed", "not_confirmed", "contradicted", "uncited"]
    assert archive.judge_get("s", "c") == "partial 0.4000 0.3000"  # the judge's words are no verdicts
    archive.close()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == answer_records.SCHEMA_VERSION
    stored = con.execute("SELECT payload FROM answers").fetchone()[0]
    con.close()
    assert '"partial"' not in stored and '"unsupported"' not in stored
    AnswerArchive(path).close()  # opening it again changes nothing


def test_a_version_1_file_gains_conversations_and_keeps_its_answers(tmp_path: Path) -> None:
    path = tmp_path / "library.answers.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE answers (answer_id TEXT PRIMARY KEY, question TEXT NOT NULL, text TEXT NOT NULL,"
        " style TEXT NOT NULL, model_id TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,"
        " payload TEXT NOT NULL, scope TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE judge_cache (sentence_sha TEXT NOT NULL, chunk_id TEXT NOT NULL, answer TEXT NOT NULL,"
        " PRIMARY KEY (sentence_sha, chunk_id));"
        "CREATE TABLE folders (path TEXT PRIMARY KEY, added_at TEXT NOT NULL);"
        "INSERT INTO answers VALUES ('old1', 'Who pays?', 'The tenant [1].', 'label', 'm', 'finished',"
        " '2026-01-01 00:00:00.000000', '{\"sources\": []}', '');"
        "PRAGMA user_version = 1;"
    )
    con.close()
    archive = AnswerArchive(path)
    old = archive.answer("old1")
    assert old is not None and old.text == "The tenant [1]." and old.conversation == "old1"
    assert [t.answer_id for t in archive.conversation("old1")] == ["old1"]  # a conversation of its own
    archive.save_answer("new1", "And the landlord?", "Nothing [1].", "label", "m", "finished", payload(1),
                        conversation_id="old1")
    assert [t.answer_id for t in archive.conversation("old1")] == ["old1", "new1"]
    assert {r.answer_id: r.conversation_id for r in archive.answers()} == {"old1": "old1", "new1": "old1"}
    archive.close()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == answer_records.SCHEMA_VERSION
    indexes = {r[1] for r in con.execute("PRAGMA index_list(answers)").fetchall()}
    con.close()
    assert "answers_by_conversation" in indexes


def test_upgrades_run_in_order_from_the_file_s_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[int] = []
    steps = {v: (lambda con, v=v: ran.append(v)) for v in (2, 3)}
    monkeypatch.setattr(answer_records, "_UPGRADES", {**steps, 3: lambda con: (ran.append(3),
                                                                           answer_records._add_conversations(con))})
    path = tmp_path / "a.sqlite"
    AnswerArchive(path).close()  # a new file: every step
    assert ran == [2, 3]
    ran.clear()
    AnswerArchive(path).close()  # at SCHEMA_VERSION: none
    assert ran == []


def test_an_answer_asked_again_replaces_the_one_it_names_in_its_conversation(tmp_path: Path) -> None:
    archive = AnswerArchive(tmp_path / "a.sqlite")
    archive.save_answer("q1", "What is PDF.js?", "A viewer.", "label", "m", "finished", payload(1),
                        created_at="2026-01-01 00:00:01.000000")
    archive.save_answer("q2", "Who wrote it?", "Nobody.", "label", "m", "finished", payload(2),
                        created_at="2026-01-01 00:00:02.000000", conversation_id="q1")
    again = {**payload(3), "searched": "PDF.js original author", "replaces": "q2"}
    archive.save_answer("q3", "Who wrote it?", "Andreas Gal.", "label", "m", "finished", again,
                        created_at="2026-01-01 00:00:03.000000", conversation_id="q1")
    assert [t.answer_id for t in archive.conversation("q1")] == ["q1", "q3"]
    assert archive.answer("q2") is not None  # kept in the history all the same
    archive.close()


def _source(**extra: object) -> dict[str, object]:
    return {"id": "1", "chunk_id": "c1", "doc_id": "d" * 64, "doc_path": "/lib/lease.pdf", "doc_title": "Lease",
            "page": 2, "page_label": "ii", "section": "4 Repairs", "text": "Report damage within 30 days.",
            "char_start": 10, "char_end": 39, **extra}


def test_an_answer_an_older_folio_saved_reads_typed_and_keeps_what_it_does_not_know(tmp_path: Path) -> None:
    archive = AnswerArchive(tmp_path / "a.sqlite")
    old = {"sources": [_source()], "citations": {"1": [[20, 23]], "9": [[30, 33]]}, "hallucinated": ["9"],
           "claims": [{"sentence_span": [0, 23], "verdict": "partial", "ids": ["1"], "score": 0.41}],
           "future_key": {"kept": True}}  # no reason, stats, searched; a key of a newer Folio
    archive.save_answer("o1", "When?", "Within 30 days [1]. Pets [9].", "label", "m", "finished", old)
    record = archive.answer("o1")
    assert record is not None
    source = record.source("1")
    assert source is not None and source.format == "pdf" and source.read == () and source.locator == ""
    assert source.page_label == "ii" and source.char_end == 39
    assert record.claims[0].verdict is Verdict.NOT_CONFIRMED and record.claims[0].score == 0.41
    assert record.citations["9"] == ((30, 33),) and record.hallucinated == ("9",)
    assert record.cited_ids() == ["1"] and record.asked == "When?" and record.conversation == "o1"
    assert record.extra == {"future_key": {"kept": True}}
    archive.keep(dataclasses.replace(record, answer_id="o2", created_at=""))
    again = archive.answer("o2")
    assert again is not None and again.extra == record.extra and again.claims == record.claims
    assert again.sources == record.sources and again.citations == record.citations
    archive.close()


def test_the_payload_is_written_key_for_key_as_before(tmp_path: Path) -> None:
    """What the answers file gets from a SavedAnswer is, byte for byte, what Folio wrote
    before the saved answer had a type (the dict answering._save built)."""
    source = SourcePayload(**_source(read=((0, 12),), format="pdf", locator="p. ii"))  # type: ignore[arg-type]
    claim = ClaimVerdict((0, 23), Verdict.SUPPORTED, ("1",), 0.912345, support=((0, 28),), support_id="1")
    citations = {"1": [(20, 23)]}
    stats = {"prompt_tokens": 420, "first_word": {"search_s": 0.1}}
    before = {
        "sources": [source.to_json()],
        "citations": {k: [list(s) for s in v] for k, v in citations.items()},
        "hallucinated": [],
        "claims": [claim.to_json()],
        "reason": "",
        "stats": dict(stats),
        "searched": "report damage days",
        "replaces": "q0",
    }
    record = SavedAnswer(answer_id="n1", question="When?", text="Within 30 days [1].", sources=(source,),
                         citations={"1": ((20, 23),)}, claims=(claim,), stats=stats,
                         searched="report damage days", replaces="q0")
    assert json.dumps(record.payload(), ensure_ascii=False) == json.dumps(before, ensure_ascii=False)
    archive = AnswerArchive(tmp_path / "a.sqlite")
    archive.keep(record)
    archive.close()
    con = sqlite3.connect(tmp_path / "a.sqlite")
    stored = con.execute("SELECT payload, status, conversation_id FROM answers").fetchone()
    con.close()
    assert stored == (json.dumps(before, ensure_ascii=False), "finished", "n1")
    read = AnswerArchive(tmp_path / "a.sqlite").answer("n1")
    assert read is not None and read.payload() == json.loads(stored[0])
