"""Embedders compared: multilingual-e5-small (default) against all-MiniLM-L6-v2 (``minilm``).

1. Speed: chunks/s of each embedder's ``embed_passages`` on the same ``--chunks`` real corpus
   chunks (from ``--base-db`` as they are, else from the MiniLM-cut corpus library), with 1
   and 2 onnxruntime threads;
   ``--rounds`` interleaved rounds (every configuration once per round, in turn), medians
   printed with the ratio to MiniLM. ``--fp32 model.onnx`` adds the float32 e5 graph (what
   ``e5_graph.build`` makes before quantisation) to the comparison.
2. Ingest: ``folio index``'s own pipeline (``Indexer.run``: parse, chunk in the embedder's
   tokens, embed, write) over the ``--ingest-files`` corpus files into a fresh library, each
   embedder in turn per round; median wall seconds and the e5 / MiniLM ratio.
3. Dense retrieval per language: the whole corpus indexed once per embedder into ``--work``
   (reused on later runs), then ``Retriever.dense`` alone; gold page in the top 1 / top 5
   for the answerable questions of ``bench/data/eval_{en,zh,de}.json`` and
   ``corpus_{en,zh}.json``, on all of them and on the held-out half (even ids). Nothing
   is tuned here; both halves are printed.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/embedder.py [--work DIR] [--rounds 5]
        [--chunks 300] [--ingest-files A.pdf,B.pdf] [--ingest-rounds 3] [--fp32 PATH]
        [--skip speed,ingest,quality]
        [--base-db LIBRARY.duckdb]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from desktop_app.core.ingest.indexing import Indexer  # noqa: E402
from desktop_app.core.library.store import Store  # noqa: E402
from desktop_app.core.models import catalog as models  # noqa: E402
from desktop_app.core.models.embed import OnnxEmbedder  # noqa: E402
from desktop_app.core.search.retrieve import Retriever  # noqa: E402

SHARED = REPO.parent / "shared"
DATA = REPO / "bench" / "data"
CHOICES = ("minilm", "default")
NAMES = {"minilm": "MiniLM int8", "default": "e5 int8", "fp32": "e5 fp32"}


def embedder(choice: str, threads: int, fp32: Path | None = None) -> OnnxEmbedder:
    if choice == "fp32":
        assert fp32 is not None
        spec = models.embedder_spec("default")
        assert spec is not None
        _, tokenizer = models.resolve_embedder("default")
        return OnnxEmbedder(fp32, tokenizer, threads=threads, prefixes=spec.prefixes, model_id="e5-fp32")
    return models.open_embedder(choice, threads=threads)


def corpus_library(work: Path, choice: str, corpus: Path, base: Path | None = None) -> Store:
    """The whole corpus indexed with ``choice`` (built once, then reused). With ``base`` (a
    library of the corpus), a copy of it rebuilt for ``choice`` the way Folio does when the
    embedder changes (``Indexer.reindex``: every document cut again from its stored pages,
    then embedded): both embedders then see the same extracted pages."""
    path = work / f"corpus-{choice}.duckdb"
    fresh = not path.exists()
    if fresh and base is not None:
        shutil.copyfile(base, path)
    store = Store(path)
    if fresh:
        began = time.perf_counter()
        indexer = Indexer(store, models.open_embedder(choice))
        if base is not None:
            indexer.reindex(lambda _e: None)
            chunks = len(store.all_chunk_texts())
        else:
            chunks = indexer.run(corpus, lambda _e: None).chunks
        print(f"  {'rebuilt' if base else 'indexed'} the corpus library for {NAMES[choice]}: {chunks} chunks in "
              f"{time.perf_counter() - began:.0f} s", flush=True)
    return store


def speed(work: Path, corpus: Path, rounds: int, n_chunks: int, fp32: Path | None, base: Path | None) -> None:
    if base is not None:  # the chunks of the given library, as they are
        import duckdb

        with duckdb.connect(str(base), read_only=True) as con:
            texts = [str(r[0]) for r in con.execute("SELECT text FROM chunks ORDER BY ckey").fetchall()]
    else:
        store = corpus_library(work, "minilm", corpus, base)
        texts = [t for _, t in store.all_chunk_texts()]
        store.close()
    random.Random(13).shuffle(texts)
    texts = texts[:n_chunks]
    configs = [(c, t) for t in (1, 2) for c in CHOICES] + ([("fp32", 1)] if fp32 else [])
    loaded = {cfg: embedder(cfg[0], cfg[1], fp32) for cfg in configs}
    for model in loaded.values():
        model.embed_passages(texts[:8])  # warm up
    rates: dict[tuple[str, int], list[float]] = defaultdict(list)
    per_cpu: dict[tuple[str, int], list[float]] = defaultdict(list)
    for number in range(rounds):
        for cfg in configs:
            began, cpu = time.perf_counter(), time.process_time()
            loaded[cfg].embed_passages(texts)
            rates[cfg].append(len(texts) / (time.perf_counter() - began))
            per_cpu[cfg].append(len(texts) / (time.process_time() - cpu))
        print(f"  round {number + 1}: " + ", ".join(f"{NAMES[c]} {t}t {rates[(c, t)][-1]:.1f}" for c, t in configs),
              flush=True)
    print(f"\nSpeed: {len(texts)} corpus chunks, median of {rounds} interleaved rounds; chunks/s (wall) and "
          "chunks per CPU-second (this process: the figure a busy machine distorts least)")
    for cfg in configs:
        base = ("minilm", cfg[1])
        wall, cpu = statistics.median(rates[cfg]), statistics.median(per_cpu[cfg])
        ratio = statistics.median([a / b for a, b in zip(rates[cfg], rates[base], strict=True)])
        ratio_cpu = statistics.median([a / b for a, b in zip(per_cpu[cfg], per_cpu[base], strict=True)])
        print(f"  {NAMES[cfg[0]]:<12} {cfg[1]} thread{'s' if cfg[1] > 1 else ' '}  {wall:6.1f} chunks/s"
              f" ({ratio:.2f}x MiniLM)   {cpu:6.1f} chunks/CPU-s ({ratio_cpu:.2f}x MiniLM)")


def ingest(corpus: Path, rounds: int, files: str) -> None:
    picked = [corpus / name for name in files.split(",")]
    with tempfile.TemporaryDirectory(prefix="folio-embedder-bench-") as scratch:
        folder = Path(scratch) / "docs"
        folder.mkdir()
        for pdf in picked:
            (folder / pdf.name).symlink_to(pdf)
        loaded = {c: models.open_embedder(c) for c in CHOICES}
        seconds: dict[str, list[float]] = defaultdict(list)
        cpu_seconds: dict[str, list[float]] = defaultdict(list)
        chunks: dict[str, int] = {}
        for number in range(rounds):
            for choice in CHOICES:
                db = Path(scratch) / f"{choice}-{number}.duckdb"
                store = Store(db)
                began, cpu = time.perf_counter(), _cpu_seconds()
                summary = Indexer(store, loaded[choice]).run(folder, lambda _e: None)
                seconds[choice].append(time.perf_counter() - began)
                cpu_seconds[choice].append(_cpu_seconds() - cpu)
                chunks[choice] = summary.chunks
                store.close()
                db.unlink()
            print(f"  round {number + 1}: " + ", ".join(f"{NAMES[c]} {seconds[c][-1]:.1f} s" for c in CHOICES),
                  flush=True)
    print(f"\nIngest: {len(picked)} corpus files ({', '.join(p.name for p in picked)}), median of {rounds} rounds")
    for choice in CHOICES:
        print(f"  {NAMES[choice]:<12} {statistics.median(seconds[choice]):6.1f} s wall, "
              f"{statistics.median(cpu_seconds[choice]):6.1f} CPU-s (with the parse workers)  {chunks[choice]} chunks")
    ratios = [e / m for e, m in zip(seconds["default"], seconds["minilm"], strict=True)]
    ratios_cpu = [e / m for e, m in zip(cpu_seconds["default"], cpu_seconds["minilm"], strict=True)]
    print(f"  e5 / MiniLM ingest time: median per-round ratio {statistics.median(ratios):.2f} wall, "
          f"{statistics.median(ratios_cpu):.2f} CPU")


def _cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def questions(answerable: bool = True) -> dict[str, list[dict[str, Any]]]:
    by_language: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in sorted(DATA.glob("eval_*.json")) + sorted(DATA.glob("corpus_*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for q in data["questions"]:
            has_page = bool(q.get("file") and q.get("pages") and q.get("answerable", True))
            if has_page == answerable:
                by_language[q.get("language") or data.get("language", "?")].append({**q, "set": path.stem})
    return by_language


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} (n={len(values)})" if values else "-"


def held_out(question: dict[str, Any]) -> bool:
    digits = re.findall(r"\d+", question["id"])
    return bool(digits) and int(digits[-1]) % 2 == 0


def quality(work: Path, corpus: Path, base: Path | None) -> None:
    asked = questions()
    results: dict[tuple[str, str], list[tuple[bool, bool, bool]]] = defaultdict(list)
    best_cosine: dict[tuple[str, str, bool], list[float]] = defaultdict(list)
    for choice in CHOICES:
        store = corpus_library(work, choice, corpus, base)
        retriever = Retriever(store, models.open_embedder(choice))
        names = {str(d): Path(str(p)).name for d, p in store._query(  # noqa: SLF001
            "SELECT doc_id, min(path) FROM files WHERE doc_id IS NOT NULL GROUP BY doc_id")}
        for language, qs in asked.items():
            for q in qs:
                top = retriever.dense(q["question"], k=50)
                best_cosine[(choice, language, True)].append(top[0][1] if top else 0.0)
                keys = [k for k, _ in top]
                places = retriever._places(keys)  # noqa: SLF001 - (doc_id, page, section)
                pages_seen: list[tuple[str, int]] = []
                for k in keys:  # top k distinct pages, as search shows them
                    place = (places[k][0], places[k][1])
                    if place not in pages_seen:
                        pages_seen.append(place)
                gold = [names.get(doc) == q["file"] and page in q["pages"] for doc, page in pages_seen]
                results[(choice, language)].append((any(gold[:1]), any(gold[:5]), held_out(q)))
        for language, qs in questions(answerable=False).items():
            for q in qs:
                top = retriever.dense(q["question"], k=1)
                best_cosine[(choice, language, False)].append(top[0][1] if top else 0.0)
        store.close()
    print("\nBest dense cosine (median; answerable questions vs near-domain unanswerable ones):")
    for language in sorted(asked):
        print(f"  {language}: " + "; ".join(
            f"{NAMES[c]} {_median(best_cosine[(c, language, True)])} vs {_median(best_cosine[(c, language, False)])}"
            for c in CHOICES))
    print("\nDense retrieval alone (Retriever.dense), gold page in the top 1 / top 5 distinct pages")
    print("  language  n (held-out)   MiniLM all   e5 all        MiniLM held   e5 held")
    for language in sorted(asked):
        cells = []
        for half in (False, True):
            for choice in CHOICES:
                rows = [r for r in results[(choice, language)] if not half or r[2]]
                cells.append(f"{sum(r[0] for r in rows)}/{sum(r[1] for r in rows)} of {len(rows)}")
        n_held = sum(r[2] for r in results[("minilm", language)])
        print(f"  {language:<8}  {len(asked[language]):>3} ({n_held:>3})     " + "   ".join(f"{c:<12}" for c in cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "folio-embedder-bench")
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--ingest-files", default="en_paper_dpr_multicolumn.pdf,en_gov_irs_i1040nr.pdf,zh_manual_ctex.pdf",
                        help="comma list of corpus files to index per round")
    parser.add_argument("--ingest-rounds", type=int, default=3)
    parser.add_argument("--fp32", type=Path, default=None, help="the float32 e5 graph, to compare")
    parser.add_argument("--skip", default="", help="comma list of speed, ingest, quality")
    parser.add_argument("--base-db", type=Path, default=None,
                        help="a library of the corpus to rebuild per embedder instead of indexing the PDFs")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"{args.corpus} is absent: this benchmark needs the shared corpus", file=sys.stderr)
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    print(f"{os.cpu_count()} cores; work {args.work}", flush=True)
    if "quality" not in skip:
        quality(args.work, args.corpus, args.base_db)
    if "speed" not in skip:
        speed(args.work, args.corpus, args.rounds, args.chunks, args.fp32, args.base_db)
    if "ingest" not in skip:
        ingest(args.corpus, args.ingest_rounds, args.ingest_files)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
