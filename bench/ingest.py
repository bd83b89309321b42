"""Ingest throughput against the embedder alone: is parsing hidden behind embedding?

Each run indexes ``--corpus`` (default ``../shared/corpus``; ``--limit N`` takes N files
spread over it) into a fresh scratch library with the real ONNX embedder, recording every
embedder call; then it replays exactly those calls (same texts, same batches) in one
thread: the embedder-only figure. Printed per run and as the median of ``--runs``:

- ingest pages/s and chunks/s, wall and per CPU-second (this process + parse workers);
- embedder-only chunks/s, wall and per CPU-second;
- ratio = ingest chunks/s / embedder-only chunks/s (target >= 0.9), from wall time and
  from CPU time. On a machine that other work keeps busy, wall time mostly measures the
  neighbours: trust the CPU ratio and the medians there. The load average is printed.
- where the indexing thread's time went: embedding, waiting for a parsed document,
  writing; and chunking, which runs on the feeder thread in parallel.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/ingest.py [--limit N] [--runs 3]
        [--workers N] [--threads N] [--corpus DIR]

``--per-format`` instead reads every file of ../shared/formats and of ``--corpus`` with its
reader (core/ingest/formats, in this process, no embedder) and prints characters of text
per CPU-second for each format beside PDF's, the median of ``--runs``; then chunking's
characters per CPU-second per format (embedding costs the same per chunk whatever the
format, so these two are where formats differ).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from desktop_app.core.ingest.indexing import Indexer  # noqa: E402
from desktop_app.core.library.store import Store  # noqa: E402
from desktop_app.core.models.catalog import open_embedder  # noqa: E402
from desktop_app.core.models.embed import OnnxEmbedder  # noqa: E402

SHARED = REPO.parent / "shared"


def cpu_seconds() -> tuple[float, float]:
    """(this process, its reaped children) user+system CPU seconds."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


class RecordingEmbedder:
    """Passes calls to the real embedder and remembers each batch of texts."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []
        self.model_id, self.dim, self.max_tokens = inner.model_id, inner.dim, inner.max_tokens
        self.multilingual = inner.multilingual

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.embed_passages(texts)


@dataclass(frozen=True)
class Result:
    pages: int
    chunks: int
    ingest_wall: float
    ingest_cpu: float  # self + parse workers
    worker_cpu: float
    embed_wall: float
    embed_cpu: float
    stages: Any
    load_before: str
    load_after: str

    @property
    def ratio_wall(self) -> float:
        return self.embed_wall / self.ingest_wall

    @property
    def ratio_cpu(self) -> float:
        return self.embed_cpu / self.ingest_cpu


def pick_files(corpus: Path, limit: int | None) -> Path:
    """``corpus`` itself, or a scratch folder linking ``limit`` files spread over it."""
    files = sorted(corpus.glob("*.pdf"))
    if not limit or limit >= len(files):
        return corpus
    step = len(files) / limit
    chosen = [files[int(i * step)] for i in range(limit)]
    folder = Path(tempfile.mkdtemp(prefix="folio-ingest-files-"))
    for f in chosen:
        (folder / f.name).symlink_to(f)
    return folder


def one_run(folder: Path, embedder: OnnxEmbedder, workers: int | None) -> Result:
    recording = RecordingEmbedder(embedder)
    with tempfile.TemporaryDirectory(prefix="folio-ingest-") as scratch:
        store = Store(Path(scratch) / "lib.duckdb")
        indexer = Indexer(store, recording, parse_timeout_s=600, workers=workers)
        before = load()
        wall0, (cpu0, kids0) = time.perf_counter(), cpu_seconds()
        summary = indexer.run(folder, lambda _e: None)
        wall, (cpu1, kids1) = time.perf_counter() - wall0, cpu_seconds()
        store.close()
    assert not summary.cancelled
    # Embedder alone: the same calls, one thread, nothing else running in this process.
    wall0, (cpu2, _) = time.perf_counter(), cpu_seconds()
    for texts in recording.calls:
        embedder.embed_passages(texts)
    embed_wall, (cpu3, _) = time.perf_counter() - wall0, cpu_seconds()
    return Result(
        pages=summary.pages, chunks=sum(len(c) for c in recording.calls), ingest_wall=wall,
        ingest_cpu=(cpu1 - cpu0) + (kids1 - kids0), worker_cpu=kids1 - kids0,
        embed_wall=embed_wall, embed_cpu=cpu3 - cpu2, stages=indexer.stages,
        load_before=before, load_after=load(),
    )


def report(r: Result, label: str) -> None:
    s = r.stages
    print(
        f"{label}: {r.pages} pages, {r.chunks} chunks | ingest {r.ingest_wall:.1f} s wall,"
        f" {r.ingest_cpu:.1f} CPU-s ({r.worker_cpu:.1f} in parse workers):"
        f" {r.pages / r.ingest_wall:.2f} pages/s, {r.chunks / r.ingest_wall:.2f} chunks/s,"
        f" {r.chunks / r.ingest_cpu:.2f} chunks/CPU-s | embedder only {r.embed_wall:.1f} s wall,"
        f" {r.embed_cpu:.1f} CPU-s: {r.chunks / r.embed_wall:.2f} chunks/s,"
        f" {r.chunks / r.embed_cpu:.2f} chunks/CPU-s | ratio wall {r.ratio_wall:.3f},"
        f" CPU {r.ratio_cpu:.3f} | indexing thread: embedding {s.embedding:.1f} s, waiting for"
        f" parse {s.waiting:.1f} s, writing {s.writing:.1f} s; chunking (feeder) {s.chunking:.1f} s"
        f" | load {r.load_before} -> {r.load_after}",
        flush=True,
    )


def per_format(corpus: Path, runs: int) -> None:
    """Characters per CPU-second of each format's reader and of chunking."""
    import logging
    from collections import defaultdict

    from desktop_app.core.ingest.chunking import chunk_document
    from desktop_app.core.ingest.formats import read_document

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # as the parse workers do
    files = sorted((SHARED / "formats").iterdir()) + sorted(corpus.glob("*.pdf"))
    files = [f for f in files if not (f.suffix == ".pdf" and f.parent.name == "formats")]
    chars: dict[str, int] = defaultdict(int)
    read_s: dict[str, list[float]] = defaultdict(lambda: [0.0] * runs)
    chunk_s: dict[str, list[float]] = defaultdict(lambda: [0.0] * runs)
    for run in range(runs):
        for file in files:
            began = time.process_time()
            doc = read_document(str(file))
            middle = time.process_time()
            chunk_document(doc)
            ended = time.process_time()
            read_s[doc.format][run] += middle - began
            chunk_s[doc.format][run] += ended - middle
            if run == 0:
                chars[doc.format] += sum(len(p.text) for p in doc.pages)
    print(f"characters per CPU-second, median of {runs} runs (pdf: {corpus}, others: {SHARED / 'formats'}):")
    print(f"  {'format':<6} {'chars':>10} {'read chars/s':>14} {'chunk chars/s':>14} {'read vs pdf':>12}")
    pdf_rate = chars["pdf"] / max(1e-9, statistics.median(read_s["pdf"])) if chars["pdf"] else 0.0
    for fmt in sorted(chars, key=lambda f: (f != "pdf", f)):
        read_rate = chars[fmt] / max(1e-9, statistics.median(read_s[fmt]))
        chunk_rate = chars[fmt] / max(1e-9, statistics.median(chunk_s[fmt]))
        ratio = f"{read_rate / pdf_rate:11.1f}x" if pdf_rate else ""
        print(f"  {fmt:<6} {chars[fmt]:>10,} {read_rate:>14,.0f} {chunk_rate:>14,.0f} {ratio:>12}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus")
    parser.add_argument("--limit", type=int, default=None, help="index only N files (spread over the corpus)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None, help="parse worker processes")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--embedder", default="default", help="default (multilingual-e5-small), minilm, or a folder")
    parser.add_argument("--per-format", action="store_true",
                        help="characters/s of each format's reader and of chunking, beside PDF's")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"{args.corpus} is absent: this benchmark needs the shared corpus", file=sys.stderr)
        return 2
    if args.per_format:
        per_format(args.corpus, args.runs)
        return 0
    embedder = open_embedder(args.embedder, threads=args.threads)
    embedder.embed_passages(["warm up the session"] * 4)
    folder = pick_files(args.corpus, args.limit)
    print(f"{os.cpu_count()} cores; corpus {folder} ({len(list(folder.glob('*.pdf')))} files);"
          f" workers {args.workers or 'default'}, onnxruntime threads {args.threads or 'default'}", flush=True)
    results = []
    for number in range(args.runs):
        results.append(one_run(folder, embedder, args.workers))
        report(results[-1], f"run {number + 1}")

    def median(key: Any) -> float:
        return statistics.median(key(r) for r in results)

    r0 = results[0]
    print(
        f"\nmedian of {len(results)} runs ({os.cpu_count()} cores, {r0.pages} pages, {r0.chunks} chunks):\n"
        f"  ingest          {median(lambda r: r.pages / r.ingest_wall):7.2f} pages/s"
        f"  {median(lambda r: r.chunks / r.ingest_wall):7.2f} chunks/s"
        f"  {median(lambda r: r.chunks / r.ingest_cpu):7.2f} chunks/CPU-s\n"
        f"  embedder only                  {median(lambda r: r.chunks / r.embed_wall):7.2f} chunks/s"
        f"  {median(lambda r: r.chunks / r.embed_cpu):7.2f} chunks/CPU-s\n"
        f"  ratio ingest / embedder-only: wall {median(lambda r: r.ratio_wall):.3f},"
        f" CPU {median(lambda r: r.ratio_cpu):.3f} (target >= 0.9)\n"
        f"  waiting for parsed documents: median {median(lambda r: r.stages.waiting):.1f} s of"
        f" {median(lambda r: r.ingest_wall):.1f} s",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
