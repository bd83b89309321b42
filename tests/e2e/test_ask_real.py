"""`folio index` and `folio ask --json` as a user runs them: real PDFs, the real ONNX
embedder, the real small GGUF. Checks the invariants of the event stream."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOCS = ("en_wiki_pdfjs_article.pdf", "zh_standard_anhui_landuse_p173.pdf")


def folio(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop_app", *args], env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path, small_model_path: Path,
            embedder_dir: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("ask-real")
    folder = root / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder / name)
    env = dict(os.environ, FOLIO_HOME=str(root / "home"), FOLIO_MODELS_DIR=str(small_model_path.parent))
    # Greedy sampling under the citation grammar: the same answer every run, its markers
    # naming sources only, so what it cites can be asserted.
    saved = subprocess.run(
        [sys.executable, "-c", "from desktop_app.core import settings as s; "
         "s.save(s.Settings(use_grammar=True, temperature=0.0))"],
        env=env, capture_output=True, text=True, check=False,
    )
    assert saved.returncode == 0, saved.stderr
    done = folio(["index", str(folder), "--json"], env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["event"] == "summary" and summary["documents"] == 2 and not summary["failed"]
    return folder, env


def ask(env: dict[str, str], question: str, *extra: str) -> list[dict]:
    done = folio(["ask", question, "--model", "small", "--json", "--max-tokens", "120", *extra], env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def check_invariants(events: list[dict]) -> dict:
    kinds = [e["event"] for e in events]
    assert kinds[0] == "answer_started" and "answer_finished" in kinds
    started = events[0]
    finished = next(e for e in events if e["event"] == "answer_finished")
    text = "".join(e["text"] for e in events if e["event"] == "token")
    assert text == finished["text"]
    labels = {s["id"] for s in started["sources"]}
    payloads: dict[str, int] = {}
    streamed: dict[str, set[tuple[int, int]]] = {}
    for event in (e for e in events if e["event"] == "citation"):
        start, end = event["span"]
        assert 0 <= start < end <= len(text)
        marker = text[start:end]
        assert marker[0] in "[【［" and marker[-1] in "]】］", marker
        streamed.setdefault(event["id"], set()).add((start, end))
        assert event["valid"] == (event["id"] in labels)
        if "source" in event:
            assert event["valid"] and event["is_new"]
            payloads[event["id"]] = payloads.get(event["id"], 0) + 1
            source = event["source"]
            assert Path(source["doc_path"]).exists() and source["page"] >= 1 and source["text"]
    valid_ids = {cid for cid in streamed if cid in labels}
    assert all(payloads.get(cid) == 1 for cid in valid_ids)  # exactly one payload per valid id
    final = {cid: {tuple(s) for s in spans} for cid, spans in finished["citations"].items()}
    assert final == streamed  # the final event is the union of the streamed spans
    assert set(finished["hallucinated"]) == {cid for cid in streamed if cid not in labels}
    return finished


def test_english_answer_streams_valid_events(library: tuple[Path, dict[str, str]]) -> None:
    _, env = library
    events = ask(env, "Who launched the PDF.js project, and in which year?")
    finished = check_invariants(events)
    sources = events[0]["sources"]
    assert sources and all(Path(s["doc_path"]).name == "en_wiki_pdfjs_article.pdf" for s in sources[:1])
    assert finished["text"].strip()
    assert any(e["event"] == "claim" for e in events)
    # It cites, and its first cited source is page 1 of the PDF.js article (the answer's page).
    cited = [e["source"] for e in events if e["event"] == "citation" and "source" in e]
    assert cited and not finished["hallucinated"], finished["text"]
    assert Path(cited[0]["doc_path"]).name == "en_wiki_pdfjs_article.pdf" and cited[0]["page"] == 1
    assert "[1]" in finished["text"]


def test_chinese_question_uses_the_chinese_prompt_and_shortids(library: tuple[Path, dict[str, str]]) -> None:
    _, env = library
    events = ask(env, "高速公路八车道停车区的用地指标基准值是多少?", "--style", "shortid")
    check_invariants(events)
    sources = events[0]["sources"]
    assert events[0]["style"] == "shortid"
    assert sources and Path(sources[0]["doc_path"]).name == "zh_standard_anhui_landuse_p173.pdf"
    assert all(len(s["id"]) in (7, 8) for s in sources)
    # The Chinese prompt makes the model answer in Chinese.
    text = next(e for e in events if e["event"] == "answer_finished")["text"]
    assert sum("\u4e00" <= ch <= "\u9fff" for ch in text) >= 5, text


def test_unrelated_question_gets_no_basis_without_a_model_call(library: tuple[Path, dict[str, str]]) -> None:
    _, env = library
    events = ask(env, "How many moons does Neptune have?")
    kinds = [e["event"] for e in events]
    assert "no_basis" in kinds and "citation" not in kinds
    assert next(e for e in events if e["event"] == "answer_finished")["citations"] == {}


def test_a_model_that_crashes_llama_cpp_gives_a_message_and_exit_code_2(
    library: tuple[Path, dict[str, str]],
) -> None:
    from desktop_app.core.models.worker import FAULT_ENV

    _, env = library
    # The worker dies on an illegal instruction, as a native llama.cpp build did on this
    # machine kind (issue 11): the command reports it and exits 2, with no core dump.
    crashing = dict(env, **{FAULT_ENV: "SIGILL"})
    done = folio(["ask", "Who launched the PDF.js project, and in which year?", "--model", "small"],
                 crashing)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "illegal CPU instruction" in done.stderr and "make llama-rebuild" in done.stderr
    assert "Traceback" not in done.stderr


def test_ask_and_search_within_a_file_stay_in_it(library: tuple[Path, dict[str, str]]) -> None:
    """`--in FILE`: the sources (and so every citation) come from that file only; asked
    within a file that lacks the answer, the question has no basis although the other
    document has it; the history records where it was asked."""
    folder, env = library
    pdfjs, anhui = folder / "en_wiki_pdfjs_article.pdf", folder / "zh_standard_anhui_landuse_p173.pdf"
    question = "Who launched the PDF.js project, and in which year?"
    events = ask(env, question, "--in", str(pdfjs))
    finished = check_invariants(events)
    started = events[0]
    assert started["scope"] == [str(pdfjs)]
    assert started["sources"] and {s["doc_path"] for s in started["sources"]} == {str(pdfjs)}
    cited = {e["source"]["doc_path"] for e in events if e["event"] == "citation" and "source" in e}
    assert cited <= {str(pdfjs)}
    assert set(finished["citations"]) <= {s["id"] for s in started["sources"]} | set(finished["hallucinated"])

    elsewhere = ask(env, question, "--in", str(anhui))
    assert elsewhere[0]["scope"] == [str(anhui)] and elsewhere[0]["sources"] == []
    no_basis = next(e for e in elsewhere if e["event"] == "no_basis")
    assert no_basis["reason"].startswith("Asked within zh_standard_anhui_landuse_p173.pdf")

    found = folio(["search", "PDF.js Mozilla", "--in", str(anhui), "--json"], env)
    assert found.returncode == 0, found.stderr
    assert {p["doc_path"] for p in json.loads(found.stdout)} <= {str(anhui)}
    history = folio(["history", "--json"], env)
    rows = json.loads(history.stdout)
    assert rows[0]["scope"] == [str(anhui)] and rows[1]["scope"] == [str(pdfjs)]

    missing = folio(["ask", question, "--in", str(folder / "nowhere.pdf"), "--model", "small"], env)
    assert missing.returncode == 2 and "holds no document of the library" in missing.stderr


def test_sources_come_first_as_evidence_and_the_answer_carries_its_stats(
    library: tuple[Path, dict[str, str]],
) -> None:
    _, env = library
    events = ask(env, "Who launched the PDF.js project, and in which year?")
    started = events[0]
    assert started["event"] == "answer_started" and started["prompt_tokens"] > 0
    kinds = [e["event"] for e in events]
    assert kinds.index("answer_started") < kinds.index("token")  # the sources before any word
    for source in started["sources"]:  # evidence: exact spans of the chunk, in its order
        spans = source["read"]
        assert spans and all(0 <= a < b <= len(source["text"]) for a, b in spans)
        assert [a for a, _ in spans] == sorted(a for a, _ in spans)
    stats = next(e for e in events if e["event"] == "answer_finished")["stats"]
    assert stats["prompt_tokens"] > stats["cached_tokens"] >= 0 and stats["first_token_s"] > 0
    assert stats["tokens_per_s"] > 0 and 0.0 <= stats["draft_accept_rate"] <= 1.0
    # The prompt's reading and where the seconds before the first word went.
    first = stats["first_word"]
    assert stats["prefill_tokens"] > 0 and stats["prefill_s"] > 0 and first["prefill_s"] == stats["prefill_s"]
    assert first["model_start_s"] > 0 and first["model_load_ms"] > 0  # a fresh command loads the model
    assert 0 < first["first_token_s"] <= first["first_word_s"] and first["pack_token_counts"] > 0
    done = folio(["ask", "Who launched the PDF.js project?", "--model", "small", "--max-tokens", "40",
                  "--stats"], env)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.strip().startswith("stats:"))
    assert "prompt" in line and "tokens/s" in line and "first token" in line
    breakdown = next(x for x in done.stdout.splitlines() if x.strip().startswith("first word"))
    assert "model start" in breakdown and "reading the prompt" in breakdown
