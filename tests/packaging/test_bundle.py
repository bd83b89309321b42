"""The desktop bundle (packaging/folio.spec), used as a person would use it: ``dist/folio/folio``
prints its version, lists and installs models, indexes a folder (parse workers are spawned
copies of the frozen executable) and shows an answer with the cited page highlighted.

The bundle is built once per run into a temporary folder by packaging/build.sh;
FOLIO_BUNDLE_DIR=path/to/dist/folio reuses one built earlier (by hand only: CI builds it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop_app import __version__
from tests.pdfgen import write_pdf

pytestmark = [pytest.mark.packaging]

REPO = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT_S = 1800


@pytest.fixture(scope="module")
def folio_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("FOLIO_BUNDLE_DIR")
    if given:
        exe = Path(given).expanduser().resolve() / "folio"
    else:
        out = tmp_path_factory.mktemp("bundle")
        env = {**os.environ, "VIRTUAL_ENV": sys.prefix}
        started = time.monotonic()
        result = subprocess.run(
            ["bash", str(REPO / "packaging" / "build.sh"), str(out / "dist"), str(out / "work")],
            capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, env=env,
        )  # fmt: skip
        assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
        size_line = next(line for line in result.stdout.splitlines() if "bundle size" in line)
        print(f"\n{size_line}; test build took {time.monotonic() - started:.0f} s")
        exe = out / "dist" / "folio" / "folio"
    assert exe.is_file() and os.access(exe, os.X_OK), f"no bundle executable at {exe}"
    return exe


def run_bundle(
    exe: Path, args: list[str], home: Path, timeout: float = 300, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the bundle outside the checkout, with nothing of this Python leaking in;
    ``FOLIO_MODELS_DIR`` only when a test passes it."""
    leaks = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "FOLIO_MODELS_DIR")  # models: per test
    clean = {k: v for k, v in os.environ.items() if k not in leaks}
    clean.update(FOLIO_HOME=str(home), **env)
    cwd = home.parent
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, timeout=timeout, env=clean, cwd=cwd
    )


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    write_pdf(
        folder / "pump.pdf",
        [
            ["Pump Manual", "Chapter 1 introduces the pump and its parts."],
            [
                "4.2 Warranty",
                "The warranty period for the pump is thirty days from delivery.",
                "Claims after that date are handled by the regional office.",
            ],
        ],
        title="Pump Manual",
    )
    write_pdf(
        folder / "guide.pdf",
        [["Installation Guide", "Mount the pump on a level concrete base."]],
        title="Installation Guide",
    )
    return folder


def test_bundle_prints_its_version(folio_exe: Path, tmp_path: Path) -> None:
    result = run_bundle(folio_exe, ["--version"], tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"folio {__version__}"


def test_bundle_runs_its_own_pip(folio_exe: Path, tmp_path: Path) -> None:
    result = run_bundle(folio_exe, ["--pip", "--version"], tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("pip ")
    assert str(folio_exe.parent) in result.stdout  # the bundled pip, not this venv's


def test_bundle_lists_the_installed_models(
    folio_exe: Path, tmp_path: Path, models_dir: Path, small_model_path: Path, embedder_dir: Path
) -> None:
    result = run_bundle(
        folio_exe, ["models", "list"], tmp_path / "home", FOLIO_MODELS_DIR=str(models_dir)
    )
    assert result.returncode == 0, result.stderr
    states = {line.split()[0]: line.split()[2] for line in result.stdout.splitlines()}
    assert set(states) == {  # the manifest travelled with the bundle
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        "smollm2-135m-instruct-q4_1",
        "all-minilm-l6-v2-int8",
        "all-minilm-l6-v2-tokenizer",
        "multilingual-e5-small-int8",
        "multilingual-e5-small-tokenizer",
    }
    assert states["smollm2-135m-instruct-q4_1"] == states["all-minilm-l6-v2-int8"] == "installed"
    assert states["multilingual-e5-small-int8"] == "installed"


def test_bundle_installs_the_small_models(folio_exe: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run_bundle(folio_exe, ["models", "install", "--small"], home, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    installed = [Path(line[3:]) for line in result.stdout.splitlines() if line.startswith("ok ")]
    # the small answer model, MiniLM and its tokenizer, e5 (converted in the bundle) and its tokenizer
    assert len(installed) == 5
    assert all(path.is_relative_to(home) and path.stat().st_size > 0 for path in installed)
    listing = run_bundle(folio_exe, ["models", "list"], home)
    assert listing.stdout.count(" installed ") == 5, listing.stdout


def test_bundle_indexes_and_searches_a_folder(
    folio_exe: Path, tmp_path: Path, docs: Path, models_dir: Path, embedder_dir: Path
) -> None:
    home, db = tmp_path / "home", tmp_path / "library.duckdb"
    env = {"FOLIO_MODELS_DIR": str(models_dir)}
    result = run_bundle(
        folio_exe, ["index", str(docs), "--db", str(db), "--json"], home, timeout=600, **env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    files = {Path(e["path"]).name: e for e in events if e["event"] == "file"}
    assert {name: e["status"] for name, e in files.items()} == {
        "pump.pdf": "indexed",
        "guide.pdf": "indexed",
    }
    assert files["pump.pdf"]["pages"] == 2
    summary = events[-1]
    assert summary["event"] == "summary"
    assert (summary["documents"], summary["pages"], summary["failed"]) == (2, 3, [])

    found = run_bundle(
        folio_exe, ["search", "how long is the warranty period", "--db", str(db), "--json"],
        home, **env,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr[-3000:]
    top = json.loads(found.stdout)[0]
    assert (Path(top["doc_path"]).name, top["page"]) == ("pump.pdf", 2)
    assert "thirty days" in top["text"]


def test_bundle_window_answers_and_shows_the_cited_page(
    qapp, folio_exe: Path, tmp_path: Path, docs: Path, models_dir: Path,  # noqa: ANN001
    small_model_path: Path, embedder_dir: Path,
) -> None:  # fmt: skip
    from PySide6.QtGui import QColor, QImage

    shot = tmp_path / "window.png"
    result = run_bundle(
        folio_exe,
        [
            str(docs), "--ask", "How long is the pump warranty?", "--open-citation", "1",
            "--screenshot", str(shot), "--quit-after", "--model", "small",
        ],
        tmp_path / "home",
        timeout=600,
        FOLIO_MODELS_DIR=str(models_dir),
        QT_QPA_PLATFORM="offscreen",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    image = QImage(str(shot))
    assert not image.isNull(), f"{shot} is not an image"
    assert (image.width(), image.height()) == (1400, 900)
    colours = {image.pixel(x, y) for x in range(0, 1400, 3) for y in range(0, 900, 3)}
    assert len(colours) > 100  # text, icons and a page, not a blank window
    # The right third shows the PDF page (QtPdf in the bundle) with the passage highlighted.
    viewer = [QColor(image.pixel(x, y)) for x in range(850, 1390, 2) for y in range(120, 880, 2)]
    page_white = sum(1 for c in viewer if c.red() == c.green() == c.blue() == 255)
    highlight = sum(
        1 for c in viewer if c.red() > 200 and c.blue() < 170 and c.red() - c.blue() > 60
    )
    assert page_white > len(viewer) // 3
    assert highlight > 20


def _instructions(library: Path) -> str:
    done = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)],
                          capture_output=True, text=True, timeout=600, check=True)
    return done.stdout


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86-64 instruction levels")
def test_the_bundles_llama_cpp_runs_on_any_x86_64_v3_cpu(folio_exe: Path) -> None:
    """The bundle carries the x86-64-v3 (AVX2) build whatever this machine's venv has: no
    AVX-512 register and no AMX tile instruction anywhere in its llama.cpp libraries."""
    libraries = sorted((folio_exe.parent / "_internal" / "llama_cpp" / "lib").glob("libggml*.so"))
    assert any(p.name == "libggml-cpu.so" for p in libraries), libraries
    for library in libraries:
        code = _instructions(library)
        assert "%zmm" not in code, f"{library.name} uses AVX-512"
        assert "tileloadd" not in code and "tdpbssd" not in code, f"{library.name} uses AMX"
    assert "%ymm" in _instructions(folio_exe.parent / "_internal" / "llama_cpp" / "lib" / "libggml-cpu.so")
