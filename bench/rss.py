"""Peak memory of the real thing: index a ~1,000-page folder, then answer with the default
model, in one process, as the window would (limit: 2.5 GB).

Picks files of ``../shared/corpus`` until they hold ``--pages`` pages (default 1,000),
indexes them through the facade with the default embedder, asks ``--question`` with the
answer model (``--model default``: Qwen2.5 1.5B Q4_K_M), and prints the peak resident
set of this process after each phase and of the largest parse worker. The bound quoted
against the limit is this process's peak plus every parse worker at the largest worker's
peak (workers run at the same time as the main process, so their peaks can add up).

    FOLIO_MODELS_DIR=... .venv/bin/python bench/rss.py [--pages 1000] [--model default]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from desktop_app.core import indexing  # noqa: E402
from desktop_app.core.settings import Settings  # noqa: E402
from desktop_app.core.types import AnswerFinished, IndexSummary, NoBasis, TokenDelta  # noqa: E402
from desktop_app.services.knowledge_base import KnowledgeBase  # noqa: E402

SHARED = REPO.parent / "shared"
LIMIT_MB = 2.5 * 1000**3 / 2**20  # 2.5 GB


def peak_mb() -> tuple[float, float]:
    """(this process, the largest reaped child) peak RSS in MiB."""
    unit = 1024 if sys.platform != "darwin" else 1024 * 1024
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_maxrss / unit, kids.ru_maxrss / unit


def current_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def page_count(path: Path) -> int:
    """Pages of ``path``, counted in a throwaway process so pypdf's memory is not ours."""
    import subprocess

    code = "import sys, pypdf; print(len(pypdf.PdfReader(sys.argv[1]).pages))"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def pick(corpus: Path, pages: int) -> tuple[Path, int]:
    folder = Path(tempfile.mkdtemp(prefix="folio-rss-files-"))
    total = 0
    for pdf in sorted(corpus.glob("*.pdf")):
        if total >= pages:
            break
        (folder / pdf.name).symlink_to(pdf)
        total += page_count(pdf)
    return folder, total


def phase(name: str, started: float) -> None:
    me, child = peak_mb()
    print(f"{name}: {time.perf_counter() - started:.0f} s; RSS now {current_mb():.0f} MiB,"
          f" peak {me:.0f} MiB; largest parse worker so far {child:.0f} MiB", flush=True)


async def main_async(args: argparse.Namespace) -> int:
    if not (SHARED / "corpus").is_dir():
        print(f"{SHARED / 'corpus'} is absent: this benchmark needs the shared corpus", file=sys.stderr)
        return 2
    folder, pages = pick(SHARED / "corpus", args.pages)
    print(f"{os.cpu_count()} cores; {len(list(folder.iterdir()))} files, {pages} pages", flush=True)
    started = time.perf_counter()
    phase("start", started)
    with tempfile.TemporaryDirectory(prefix="folio-rss-") as scratch:
        kb = KnowledgeBase(Path(scratch) / "library.duckdb", Settings(answer_model=args.model))
        try:
            summary = None
            async for event in kb.index(folder):
                if isinstance(event, IndexSummary):
                    summary = event
            assert summary is not None
            print(f"indexed {summary.documents} documents, {summary.pages} pages, {summary.chunks} chunks", flush=True)
            phase("after indexing", started)
            tokens = 0
            async for event in kb.ask(args.question):
                tokens += isinstance(event, TokenDelta)
                if isinstance(event, AnswerFinished):
                    print(f"answer ({tokens} deltas): {event.text[:160]!r}", flush=True)
                elif isinstance(event, NoBasis):
                    print(f"no basis: {event.reason}", flush=True)
            phase(f"after one answer with the {args.model} model", started)
        finally:
            await kb.close()
    me, child = peak_mb()
    bound = me + indexing.default_workers() * child
    verdict = "within" if bound < LIMIT_MB else "OVER"
    print(f"peak RSS: process {me:.0f} MiB + {indexing.default_workers()} parse workers x {child:.0f} MiB"
          f" = {bound:.0f} MiB ({bound * 2**20 / 1e9:.2f} GB), {verdict} the 2.5 GB limit", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--model", default="default", help="answer model: default | small | PATH.gguf")
    parser.add_argument("--question", default="What does the HTTP/1.1 specification say about persistent connections?")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
