"""Peak memory of the real thing: index a ~1,000-page folder, then answer with the default
model, in one process, as the window would (limit: 2.5 GB).

Picks files of ``../shared/corpus`` until they hold ``--pages`` pages (default 1,000),
indexes them through the facade with the default embedder, asks ``--question`` with the
answer model (``--model default``: Qwen2.5 1.5B Q4_K_M), and prints the peak resident
set of this process after each phase and of the largest parse worker. Two figures are
quoted against the limit: the measured peak of the whole process tree (this process and
its parse workers, their RSS summed every 100 ms), and a bound: this process's peak plus
every parse worker at the largest worker's peak, as if all peaks coincided.

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

from desktop_app.core.ingest import indexing  # noqa: E402
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


class TreeSampler:
    """The largest sum of VmRSS over this process and its descendants, sampled."""

    def __init__(self, every_s: float = 0.1) -> None:
        import threading

        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every_s,), daemon=True)
        self._thread.start()

    @staticmethod
    def _tree_mb() -> float:
        parents: dict[int, int] = {}
        rss: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
                parents[int(entry.name)] = int(fields["PPid"])
                rss[int(entry.name)] = int(fields.get("VmRSS", "0 kB").split()[0])
            except (OSError, KeyError, ValueError):
                continue
        tree, todo = set(), [os.getpid()]
        while todo:
            pid = todo.pop()
            tree.add(pid)
            todo += [child for child, parent in parents.items() if parent == pid and child not in tree]
        return sum(rss.get(pid, 0) for pid in tree) / 1024

    def _run(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            self.peak_mb = max(self.peak_mb, self._tree_mb())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_mb


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
    sampler = TreeSampler()
    phase("start", started)
    with tempfile.TemporaryDirectory(prefix="folio-rss-") as scratch:
        kb = KnowledgeBase(Path(scratch) / "library.duckdb", Settings(answer_model=args.model))
        try:
            summary = None
            async for event in kb.library.index(folder):
                if isinstance(event, IndexSummary):
                    summary = event
            assert summary is not None
            print(f"indexed {summary.documents} documents, {summary.pages} pages, {summary.chunks} chunks", flush=True)
            phase("after indexing", started)
            tokens = 0
            async for event in kb.answers.ask(args.question):
                tokens += isinstance(event, TokenDelta)
                if isinstance(event, AnswerFinished):
                    print(f"answer ({tokens} deltas): {event.text[:160]!r}", flush=True)
                elif isinstance(event, NoBasis):
                    print(f"no basis: {event.reason}", flush=True)
            phase(f"after one answer with the {args.model} model", started)
        finally:
            await kb.close()
    me, child = peak_mb()
    tree = sampler.stop()
    bound = me + indexing.default_workers() * child
    for name, figure in (("measured peak of the process tree", tree), ("bound if all peaks coincided", bound)):
        verdict = "within" if figure < LIMIT_MB else "OVER"
        print(f"{name}: {figure:.0f} MiB ({figure * 2**20 / 1e9:.2f} GB), {verdict} the 2.5 GB limit", flush=True)
    print(f"  (process peak {me:.0f} MiB; {indexing.default_workers()} parse workers, the largest {child:.0f} MiB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--model", default="default", help="answer model: default | small | PATH.gguf")
    parser.add_argument("--question", default="What does the HTTP/1.1 specification say about persistent connections?")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
