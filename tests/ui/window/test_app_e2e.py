"""The real window with the real small models: ``folio PATH --ask … --open-citation 1
--screenshot out.png --quit-after`` in a subprocess, under Xvfb when it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from tests.ui.pdfs import make_library

REPO = Path(__file__).resolve().parents[3]


def run_folio(
    args: list[str], home: Path, models: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FOLIO_HOME": str(home), "FOLIO_MODELS_DIR": str(models)}
    command = [sys.executable, "-m", "desktop_app", *args]
    if shutil.which("xvfb-run"):
        env["QT_QPA_PLATFORM"] = "xcb"
        command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def check_screenshot(path: Path) -> None:
    image = QImage(str(path))
    assert not image.isNull(), f"{path} is not an image"
    assert (image.width(), image.height()) == (1400, 900)


@pytest.mark.e2e
def test_real_window_answers_and_opens_a_citation(
    qapp, tmp_path, models_dir, small_model_path, embedder_dir
) -> None:  # noqa: ANN001
    folder = tmp_path / "docs"
    make_library(folder)
    shot = tmp_path / "window.png"
    result = run_folio(
        [
            str(folder),
            "--ask",
            "How long is the pump warranty?",
            "--open-citation",
            "1",
            "--screenshot",
            str(shot),
            "--quit-after",
            "--model",
            "small",
        ],
        tmp_path / "home",
        models_dir,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    check_screenshot(shot)


@pytest.mark.slow
@pytest.mark.e2e
def test_real_window_over_the_shared_corpus(
    qapp, tmp_path, shared_dir, models_dir, small_model_path, embedder_dir
) -> None:  # noqa: ANN001
    shot = tmp_path / "corpus.png"
    result = run_folio(
        [
            str(shared_dir / "corpus"),
            "--ask",
            "What is the WebSocket opening handshake?",
            "--open-citation",
            "1",
            "--screenshot",
            str(shot),
            "--quit-after",
            "--model",
            "small",
        ],
        tmp_path / "home",
        models_dir,
        timeout=3000,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    check_screenshot(shot)
