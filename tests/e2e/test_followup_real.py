"""Follow-up questions with the real thing: real corpus PDFs, the real ONNX embedder, the
real small GGUF, through `folio ask --follow-up` (the facade's CLI client): the follow-up
is searched as it stands alone, continues the conversation, and the history and the
export show the conversation."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOCS = ("en_wiki_pdfjs_article.pdf", "zh_standard_anhui_landuse_p173.pdf", "en_gov_dmca_summary.pdf")


def folio(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path, small_model_path: Path,
        embedder_dir: Path) -> dict[str, str]:
    root = tmp_path_factory.mktemp("followup-real")
    folder = root / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder / name)
    env = dict(os.environ, FOLIO_HOME=str(root / "home"), FOLIO_MODELS_DIR=str(small_model_path.parent))
    done = folio(["index", str(folder), "--json"], env)
    assert done.returncode == 0, done.stderr
    return env


def ask(env: dict[str, str], question: str, *extra: str) -> list[dict]:
    done = folio(["ask", question, "--model", "small", "--json", "--max-tokens", "40", *extra], env)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert events[0]["event"] == "answer_started" and events[-1]["event"] == "answer_finished"
    return events


def pages(started: dict) -> set[tuple[str, int]]:
    return {(Path(s["doc_path"]).name, s["page"]) for s in started["sources"]}


@pytest.mark.slow  # ~60 s on 2 busy cores: five `folio` runs, each loading the model
def test_a_follow_up_continues_the_conversation_through_the_cli(env: dict[str, str]) -> None:
    first = ask(env, "What is PDF.js?")[0]
    assert first["searched"] == "What is PDF.js?" and first["conversation_id"] == first["answer_id"]

    second = ask(env, "Who was its original author?", "--follow-up", first["answer_id"])[0]
    assert second["question"] == "Who was its original author?"
    assert "PDF.js" in second["searched"] and second["searched"] != second["question"]
    assert second["conversation_id"] == first["answer_id"]
    assert ("en_wiki_pdfjs_article.pdf", 1) in pages(second)

    # The person's own words replace what Folio made of the follow-up.
    third = ask(env, "When was it signed?", "--follow-up", second["answer_id"],
                "--searched", "When was the DMCA signed into law?")[0]
    assert third["searched"] == "When was the DMCA signed into law?"
    assert third["conversation_id"] == first["answer_id"]
    assert any(name == "en_gov_dmca_summary.pdf" for name, _ in pages(third))

    history = folio(["history"], env)
    assert history.returncode == 0, history.stderr
    lines = history.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith("What is PDF.js?"))
    assert lines[at + 1].endswith("↳ Who was its original author?")
    assert lines[at + 2].endswith("↳ When was it signed?")

    exported = folio(["export", second["answer_id"], "--conversation", "--format", "json"], env)
    assert exported.returncode == 0, exported.stderr
    records = json.loads(exported.stdout)
    assert [r["question"] for r in records] == ["What is PDF.js?", "Who was its original author?",
                                                "When was it signed?"]
    assert {r["conversation_id"] for r in records} == {first["answer_id"]}
    assert records[1]["searched"] == second["searched"]
    markdown = folio(["export", first["answer_id"], "--conversation"], env)
    assert markdown.returncode == 0, markdown.stderr
    assert "# 2. Who was its original author?" in markdown.stdout
    assert f"Searched for: {second['searched']}" in markdown.stdout


def test_a_chinese_follow_up_keeps_the_subject(env: dict[str, str]) -> None:
    first = ask(env, "八车道高速公路停车区用地指标基准值是多少公顷？")[0]
    second = ask(env, "那六车道的呢？", "--follow-up", first["answer_id"])[0]
    assert "六车道" in second["searched"] and "停车区用地指标基准值" in second["searched"]
    assert ("zh_standard_anhui_landuse_p173.pdf", 1) in pages(second)


def test_following_up_an_unknown_answer_says_so(env: dict[str, str]) -> None:
    done = folio(["ask", "And then?", "--model", "small", "--follow-up", "nosuchanswer"], env)
    assert done.returncode == 2 and "No saved answer nosuchanswer" in done.stderr
