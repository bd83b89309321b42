"""The rebuild path with the real CLI, the real embedder, the real small GGUF and real
corpus PDFs: an answer is asked and saved; a junk file and a truncated library each get
their own true message; `folio repair` moves the damaged one aside and rebuilds it, and
search and every saved answer are back."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e]

REPO = Path(__file__).resolve().parents[2]
DOCS = ("en_gov_dmca_summary.pdf", "en_gov_senate_expenditures.pdf")


def unscored(text: str) -> str:
    return re.sub(r"\(\d+\.\d+\)", "", text)


def folio(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=900, check=False)


def test_junk_and_truncated_libraries_are_told_apart_and_repair_brings_everything_back(
    tmp_path: Path, shared_dir: Path, embedder_dir: Path, small_model_path: Path,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder / name)
    env = dict(os.environ, FOLIO_MODELS_DIR=str(small_model_path.parent), FOLIO_HOME=str(tmp_path / "home"))
    env.pop("FOLIO_REQUIRE_MODELS", None)
    db = tmp_path / "library.duckdb"
    assert folio("index", str(folder), "--db", str(db), env=env).returncode == 0
    asked = folio("ask", "What does Title II of the DMCA limit?", "--model", "small", "--max-tokens", "40",
                  "--db", str(db), env=env)
    assert asked.returncode == 0, asked.stderr
    answer_id = asked.stdout.split("(answer id ")[1].split(")")[0]
    before = folio("search", "online service provider liability", "-k", "1", "--db", str(db), env=env).stdout

    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(os.urandom(20000))
    told_junk = folio("search", "copyright", "--db", str(junk), env=env)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    told_damaged = folio("search", "copyright", "--db", str(db), env=env)
    for told in (told_junk, told_damaged):
        assert told.returncode == 2 and "Traceback" not in told.stderr
        assert "in use" not in told.stderr and "another" not in told.stderr
    assert "is not a Folio library: it is not a DuckDB database file" in told_junk.stderr
    assert "is damaged" in told_damaged.stderr and "folio repair" in told_damaged.stderr

    history = folio("history", "--db", str(db), env=env)  # answers live apart: still there
    assert history.returncode == 0 and answer_id[:12] in history.stdout

    repaired = folio("repair", "--db", str(db), env=env)
    assert repaired.returncode == 0, repaired.stderr
    assert "Moved it aside to" in repaired.stdout and str(folder) in repaired.stdout
    assert "1 saved answers are kept" in repaired.stdout
    assert len(list(tmp_path.glob("library.duckdb.damaged-*"))) == 1
    after = folio("search", "online service provider liability", "-k", "1", "--db", str(db), env=env)
    # The same passage first (its score may differ in the last digits: the embedder's
    # batches are sized by timing, and padding moves a vector by ~1e-6).
    assert after.returncode == 0 and unscored(after.stdout) == unscored(before)
    exported = folio("export", answer_id, "--format", "json", "--db", str(db), env=env)
    assert exported.returncode == 0 and '"question": "What does Title II of the DMCA limit?"' in exported.stdout
    again = folio("repair", "--db", str(db), env=env)
    assert again.returncode == 2 and "nothing to repair" in again.stderr
