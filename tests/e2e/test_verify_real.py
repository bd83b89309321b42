"""`folio verify` as a user runs it: a library of two real corpus PDFs indexed with the real
ONNX embedder; a draft's true sentences get their page, a made-up one does not; a
--claims batch built from a real passage round-trips line by line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOCS = ("en_paper_dpr_multicolumn.pdf", "en_wiki_pdfjs_article.pdf")
DRAFT = """# What I read

We split each article into multiple, disjoint text blocks of 100 words as passages.

PDF.js was originally created as an extension for Firefox.

- Penguins in Antarctica repair diesel engines every Tuesday.
"""


def folio(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop_app", *args], env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path, embedder_dir: Path,
            small_model_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("verify-real")
    folder = root / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder / name)
    env = dict(os.environ, FOLIO_HOME=str(root / "home"), FOLIO_MODELS_DIR=str(embedder_dir.parent))
    done = folio(["index", str(folder), "--json"], env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["documents"] == 2 and not summary["failed"]
    return root, env


def test_a_draft_gets_pages_quotes_and_verdicts(library: tuple[Path, dict[str, str]]) -> None:
    root, env = library
    draft = root / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    done = folio(["verify", str(draft), "--json", "--no-judge"], env)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "check_started" and events[-1]["event"] == "check_finished"
    heading, blocks, firefox, penguins = events[1:-1]
    assert heading["verdict"] == "not_factual"
    assert blocks["verdict"] == "supported"
    assert Path(blocks["doc_path"]).name == "en_paper_dpr_multicolumn.pdf" and blocks["page"] == 4
    assert "disjoint text blocks of 100 words" in blocks["quote"]
    page_text = blocks["highlight"][0]
    assert blocks["char_start"] <= page_text[0] < page_text[1] <= blocks["char_end"]
    assert firefox["verdict"] == "supported" and Path(firefox["doc_path"]).name == "en_wiki_pdfjs_article.pdf"
    assert firefox["page"] == 1 and "extension for Firefox" in firefox["quote"]
    assert penguins["verdict"] != "supported"

    human = folio(["verify", str(draft), "--no-judge"], env)
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert lines[2].split()[:5] == ["2", "supported", "en_paper_dpr_multicolumn.pdf", "p.", "4"]
    assert lines[-1].startswith("1 not_confirmed, 1 not_factual")


def test_a_claims_batch_round_trips(library: tuple[Path, dict[str, str]]) -> None:
    root, env = library
    found = folio(["search", "disjoint text blocks of 100 words as passages", "--json", "-k", "1"], env)
    assert found.returncode == 0, found.stderr
    passage = json.loads(found.stdout)[0]["text"]
    assert "21,015,324" in passage
    given = [{"label": "1", "text": passage}]
    claims = [
        {"id": "true", "sentence": "Each article is split into disjoint text blocks of 100 words as passages.",
         "passages": given, "ids": ["1"]},
        {"id": "number", "sentence": "Each article is split into disjoint text blocks of 250 words as passages.",
         "passages": given, "ids": ["1"]},
        "not a claim",
        {"id": "invented", "sentence": "The passages are split into blocks of 100 words.", "passages": given,
         "ids": ["4"]},
    ]
    batch = root / "claims.jsonl"
    batch.write_text("\n".join(c if isinstance(c, str) else json.dumps(c) for c in claims) + "\n", encoding="utf-8")
    done = folio(["verify", "--claims", str(batch), "--no-judge"], env)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["line"] for r in results] == [1, 2, 3, 4]
    true, number, bad, invented = results
    assert true["id"] == "true" and true["verdict"] == "supported" and "100 words" in true["quote"]
    assert number["verdict"] in ("not_confirmed", "contradicted") and "250" in number["reason"]
    assert bad["error"].startswith("not JSON")
    assert invented["id"] == "invented" and "[4]" in invented["reason"]


def test_the_small_model_judges_the_unsure_claims(library: tuple[Path, dict[str, str]]) -> None:
    """--judge with the real small GGUF: the line the rules call partial is put to the
    model; the output keeps its order."""
    root, env = library
    passage = "The tenant must report damage to the landlord within 30 days of discovering it."
    given = [{"label": "1", "text": passage}]
    batch = root / "judged.jsonl"
    batch.write_text("\n".join(json.dumps(c) for c in [
        {"sentence": "The tenant reports damage to the owner within 30 days.", "passages": given, "ids": ["1"]},
        {"sentence": passage, "passages": given, "ids": ["1"]},
    ]) + "\n", encoding="utf-8")
    done = folio(["verify", "--claims", str(batch), "--judge", "--model", "small"], env)
    assert done.returncode == 0, done.stderr
    unsure, stated = [json.loads(line) for line in done.stdout.splitlines()]
    assert unsure["line"] == 1 and unsure["judge_asked"] is True
    assert unsure["verdict"] in ("supported", "not_confirmed", "contradicted")
    assert stated["line"] == 2 and "judge_asked" in stated
