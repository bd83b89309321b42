"""R2R's passthroughs through the facade, as the command line runs them: `folio complete`
streams the real small GGUF's raw completion, `folio embed --json` prints the real ONNX
embedder's unit vectors."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def folio(args: list[str], home: Path, models: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FOLIO_HOME=str(home), FOLIO_MODELS_DIR=str(models))
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_folio_complete_streams_the_answer_models_raw_text(tmp_path: Path, small_model_path: Path) -> None:
    done = folio(["complete", "Name three colours.", "--system", "Answer in one line.", "--model", "small",
                  "--max-tokens", "24"], tmp_path / "home", small_model_path.parent)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip()) > 3


def test_folio_embed_prints_unit_vectors_that_tell_texts_apart(tmp_path: Path, embedder_dir: Path) -> None:
    texts = ["The pump warranty lasts two years.", "The pump warranty lasts two years.",
             "How long is the pump guaranteed?", "Bananas are yellow."]
    done = folio(["embed", *texts, "--json"], tmp_path / "home", embedder_dir.parent)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["text"] for r in rows] == texts
    vectors = [r["vector"] for r in rows]
    assert all(len(v) == 384 and abs(math.fsum(x * x for x in v) - 1.0) < 1e-3 for v in vectors)
    same = math.fsum(a * b for a, b in zip(vectors[0], vectors[1], strict=True))
    related = math.fsum(a * b for a, b in zip(vectors[0], vectors[2], strict=True))
    other = math.fsum(a * b for a, b in zip(vectors[0], vectors[3], strict=True))
    # Each embedder has its own scale (e5 puts unrelated texts near 0.75): compare, not bound.
    assert same > 0.999 and related > other + 0.05
