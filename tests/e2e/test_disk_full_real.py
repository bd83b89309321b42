"""The disk fills while `folio index` runs (a real 1 MB tmpfs holds the library): the
person reads how much space is free and what to do, no traceback; after space is freed
`folio index` resumes and the library equals a clean run's; no saved answer is lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.core.library.answer_records import AnswerArchive
from tests.e2e.test_crash_resume import (
    FILES,
    assert_consistent,
    assert_same_library,
    library,
    make_folder,
)
from tests.small_disk import grow, small_disk

pytestmark = [pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]


def folio(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=900, check=False)


def test_disk_full_while_indexing_then_resume_equals_a_clean_run(tmp_path: Path, embedder_dir: Path) -> None:
    folder = make_folder(tmp_path)
    env = dict(os.environ, FOLIO_MODELS_DIR=str(embedder_dir.parent), FOLIO_HOME=str(tmp_path / "home"))
    env.pop("FOLIO_REQUIRE_MODELS", None)
    clean = folio("index", str(folder), "--db", str(tmp_path / "clean.duckdb"), env=env)
    assert clean.returncode == 0, clean.stderr
    with small_disk(tmp_path / "disk", "1m") as disk:
        db = disk / "library.duckdb"
        archive = AnswerArchive(disk / "library.answers.sqlite")
        for n in range(3):  # answers saved before the disk filled
            archive.save_answer(f"answer{n}", f"question {n}", "text", "label", "m", "finished", {"sources": []})
        archive.close()
        full = folio("index", str(folder), "--db", str(db), env=env)
        assert full.returncode == 2, full.stderr
        message = full.stderr.strip().splitlines()[-1]
        assert message.startswith("folio: The disk is full while indexing"), full.stderr
        assert f"MB free on {disk}" in message and "nothing saved or indexed so far is lost" in message
        assert "Traceback" not in full.stderr and "Error:" not in full.stderr.replace("IO Error", "")
        indexed_before = full.stdout.count("+ indexed")
        assert 0 < indexed_before < FILES  # it did fill part way
        grow(disk, "64m")
        resumed = folio("index", str(folder), "--db", str(db), env=env)
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.count("= indexed") >= indexed_before  # committed files are not redone
        lib = library(db)
        assert_consistent(lib)
        assert_same_library(lib, library(tmp_path / "clean.duckdb"))
        archive = AnswerArchive(disk / "library.answers.sqlite")
        assert sorted(a.answer_id for a in archive.answers()) == ["answer0", "answer1", "answer2"]
        archive.close()
