"""`folio index`, `folio search --json` and `folio ask --json` over documents that are not
PDFs, as a user runs them: real files of ../shared/formats (DOCX, EPUB, Markdown), the
real ONNX embedder, the real small GGUF. A citation resolves into the non-PDF file: its
part's text at the cited span is the passage, and it carries a locator a reader follows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOCS = ("en_handbook_apparmor.docx", "en_debref_ch06_netapps.epub", "en_debref_ch10_data.md")


def folio(args: list[str], env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_index_search_and_ask_cite_into_the_documents(tmp_path: Path, shared_dir: Path,
                                                      small_model_path: Path, embedder_dir: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "formats" / name, folder / name)
    env = dict(os.environ, FOLIO_HOME=str(tmp_path / "home"), FOLIO_MODELS_DIR=str(small_model_path.parent))
    saved = subprocess.run(
        [sys.executable, "-c", "from desktop_app.core import settings as s; "
         "s.save(s.Settings(use_grammar=True, temperature=0.0))"],
        env=env, capture_output=True, text=True, check=False)
    assert saved.returncode == 0, saved.stderr
    done = folio(["index", str(folder), "--json"], env)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert events[-1]["documents"] == 3 and not events[-1]["failed"]
    assert {Path(e["path"]).name for e in events if e["event"] == "file" and e["status"] == "indexed"} == set(DOCS)

    found = folio(["search", "Where are AppArmor profiles stored?", "--json", "-k", "3"], env)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    top = hits[0]
    assert Path(top["doc_path"]).name == "en_handbook_apparmor.docx"
    assert top["format"] == "docx" and top["doc_title"] == "14.4. Introduction to AppArmor"
    assert top["locator"].startswith("section 14.4.1 ¶ ") and "14.4.1. Principles" in top["section"]
    assert "/etc/apparmor.d/" in top["text"]

    answer = folio(["ask", "AppArmor profiles are stored in which directory?", "--model", "small", "--json",
                    "--max-tokens", "80", "--in", str(folder / "en_handbook_apparmor.docx")], env)
    assert answer.returncode == 0, answer.stderr
    stream = [json.loads(line) for line in answer.stdout.splitlines() if line.strip()]
    started = stream[0]
    assert started["event"] == "answer_started" and started["sources"]
    for source in started["sources"]:  # every source is a part of the DOCX, its span exact
        assert source["format"] == "docx" and source["locator"].startswith("section ")
        assert source["doc_path"].endswith("en_handbook_apparmor.docx")
    cited = [e["source"] for e in stream if e["event"] == "citation" and e.get("source")]
    assert cited, "the small model cited nothing"
    # The cited span, read back from the stored part, is the passage it names.
    from desktop_app.core.library.store import Store

    candidates = list((tmp_path / "home").rglob("*.duckdb"))
    assert len(candidates) == 1, candidates
    store = Store(candidates[0])
    try:
        for source in cited:
            part = store.document_part(source["doc_id"], source["page"])
            assert part is not None and part.format == "docx"
            assert part.text[source["char_start"]:source["char_end"]] == source["text"]
            assert source["locator"] == f"section {part.label} ¶ " + source["locator"].rsplit(" ", 1)[-1]
    finally:
        store.close()
