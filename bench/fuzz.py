"""Fuzzing campaign: mutated real documents through the whole index pipeline.

Writes ``--files`` mutants (tests/fuzzing.py: byte flips, truncations, spliced junk,
copied and zeroed regions, stacks of these) of the documents in ``--corpus`` in batches
of ``--batch`` files, and indexes each batch with the real indexer (parse workers with the
per-file time limit, chunking, BM25 postings, the DuckDB store; no embedder, so the
campaign measures the readers and the store, not the embedder) into one library.

Prints the statuses, the seconds, the slowest batch against its time bound, and every
failure of the run itself (an exception out of an index run: the thing that must never
happen). Exit status 1 if a file got no status, a run failed, or a batch overran
``files x limit / workers`` plus a start-up margin.

    PYTHONPATH=. .venv/bin/python bench/fuzz.py [--files 3000] [--limit 20] [--seed 0]
        [--corpus ../shared/corpus] [--max-size 1000000] [--suffix .pdf]
"""

from __future__ import annotations

import argparse
import collections
import logging
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from desktop_app.core.ingest.indexing import Indexer  # noqa: E402
from desktop_app.core.library.store import Store  # noqa: E402
from desktop_app.core.types import FileIndexed  # noqa: E402
from tests.fuzzing import mutants  # noqa: E402

START_MARGIN_S = 30.0  # a batch's start-up (parse workers spawned) and its writes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--limit", type=float, default=20.0, help="per-file parse time limit (s)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--suffix", default=".pdf", help="which documents of the corpus to mutate")
    parser.add_argument("--max-size", type=int, default=1_000_000,
                        help="skip corpus files larger than this (bytes): keeps the campaign's time down")
    parser.add_argument("--work", type=Path, default=None, help="keep the mutants and library here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    sources = sorted(p for p in args.corpus.glob(f"*{args.suffix}") if p.stat().st_size <= args.max_size)
    if not sources:
        print(f"no {args.suffix} files under {args.max_size} bytes in {args.corpus}", file=sys.stderr)
        return 1
    work = args.work or Path(tempfile.mkdtemp(prefix="folio-fuzz-"))
    store = Store(work / "fuzz.duckdb")
    statuses: collections.Counter[str] = collections.Counter()
    by_mutation: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    crashes: list[str] = []
    run_failures: list[str] = []
    missing = 0
    slowest = (0.0, 0.0)  # (seconds, bound) of the slowest batch
    print(f"{args.files} mutants of {len(sources)} {args.suffix} files (seed {args.seed}), per-file limit"
          f" {args.limit:g} s, {args.workers} parse workers", flush=True)
    started = time.monotonic()
    stream = mutants(sources, args.files, args.seed)
    done = 0
    while done < args.files:
        batch_dir = work / f"batch{done // args.batch:04d}"
        batch_dir.mkdir(parents=True)
        what: dict[str, str] = {}
        for mutant in stream:
            (batch_dir / mutant.name).write_bytes(mutant.data)
            what[str((batch_dir / mutant.name).resolve())] = mutant.mutation.split(":")[0]
            if len(what) == args.batch:
                break
        seen: dict[str, FileIndexed] = {}

        def emit(event: object, seen: dict[str, FileIndexed] = seen) -> None:
            if isinstance(event, FileIndexed):
                seen[event.path] = event

        began = time.monotonic()
        try:
            Indexer(store, None, parse_timeout_s=args.limit, workers=args.workers, ocr=False).run(batch_dir, emit)
        except Exception:
            run_failures.append(f"{batch_dir.name}: {traceback.format_exc()}")
        seconds = time.monotonic() - began
        bound = len(what) * args.limit / args.workers + START_MARGIN_S
        slowest = max(slowest, (seconds, bound))
        for path, kind in what.items():
            event = seen.get(path)
            status = str(event.status) if event else "no status"
            missing += event is None
            statuses[status] += 1
            by_mutation[kind][status] += 1
            if event and ("crashed" in event.error or "stopped on this file" in event.error):
                crashes.append(f"{Path(path).name}: {event.error}")
        done += len(what)
        if args.work is None:
            shutil.rmtree(batch_dir, ignore_errors=True)
        print(f"  {done}/{args.files} files, {time.monotonic() - started:.0f} s;"
              f" this batch {seconds:.0f} s (bound {bound:.0f} s); so far "
              + ", ".join(f"{s} {n}" for s, n in statuses.most_common())
              + f"; runs failed {len(run_failures)}, workers died {len(crashes)}", flush=True)
    total = time.monotonic() - started
    store.close()
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)

    print(f"\n{done} mutated {args.suffix} files in {total:.0f} s ({total / max(done, 1):.2f} s a file)")
    for status, n in statuses.most_common():
        print(f"  {status:<20} {n:>5}  ({n / done:.1%})")
    print("by mutation:")
    for kind, counts in sorted(by_mutation.items()):
        print(f"  {kind:<12} " + ", ".join(f"{s} {n}" for s, n in counts.most_common()))
    print(f"parse workers that died (and were replaced): {len(crashes)}")
    for line in crashes[:10]:
        print(f"  {line}")
    print(f"slowest batch: {slowest[0]:.0f} s of its bound {slowest[1]:.0f} s")
    print(f"files without a status: {missing}; index runs that failed: {len(run_failures)}")
    for failure in run_failures:
        print(failure)
    ok = not missing and not run_failures and slowest[0] <= slowest[1]
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
