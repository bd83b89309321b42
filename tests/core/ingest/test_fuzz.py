"""The slow tier's fuzzing campaign: mutants of real corpus PDFs (tests/fuzzing.py: byte
flips, truncations, spliced junk, copied and zeroed regions) through the real index
pipeline. Every file ends with a status, none outlasts the per-file limit by more than
the pool's stop grace, a parse worker that dies is replaced and the run goes on, and the
library reads whole afterwards. bench/fuzz.py runs the large campaign."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from desktop_app.core.ingest.indexing import Indexer
from desktop_app.core.ingest.parse_pool import ParsePool
from desktop_app.core.library import repair
from desktop_app.core.library.store import Store
from desktop_app.core.types import DocStatus, FileIndexed
from tests.conftest import SHARED, require
from tests.fuzzing import CONTAINERS, mutants, write_mutants

pytestmark = pytest.mark.slow

CORPUS = SHARED / "corpus"
FILES = 60
LIMIT_S = 15.0


def sources() -> list[Path]:
    require(CORPUS.is_dir(), f"{CORPUS} is absent: the fuzzer mutates its real PDFs")
    found = sorted(p for p in CORPUS.glob("*.pdf") if p.stat().st_size <= 300_000)
    require(len(found) >= 5, f"too few small PDFs in {CORPUS}")
    return found


def test_the_mutants_are_the_same_for_the_same_seed() -> None:
    first = [(m.name, m.mutation, m.data) for m in mutants(sources()[:3], 12, seed=5)]
    again = [(m.name, m.mutation, m.data) for m in mutants(sources()[:3], 12, seed=5)]
    assert first == again
    originals = {p.name: p.read_bytes() for p in sources()[:3]}
    assert all(data != originals[name.rsplit("-", 1)[0] + ".pdf"] for name, _, data in first)
    assert set(CONTAINERS) >= {".pdf", ".docx", ".epub", ".odt"}


def test_every_mutant_ends_with_a_status_and_the_run_survives(tmp_path: Path) -> None:
    folder = tmp_path / "mutants"
    what = write_mutants(folder, sources(), FILES, seed=1)
    store = Store(tmp_path / "fuzz.duckdb")
    seen: dict[str, FileIndexed] = {}

    def emit(event: object) -> None:
        if isinstance(event, FileIndexed):
            seen[Path(event.path).name] = event

    started = time.monotonic()
    summary = Indexer(store, None, parse_timeout_s=LIMIT_S, workers=2).run(folder, emit)
    seconds = time.monotonic() - started
    store.close()
    statuses: dict[str, int] = {}
    for event in seen.values():
        statuses[str(event.status)] = statuses.get(str(event.status), 0) + 1
    print(f"fuzz: {FILES} mutants in {seconds:.0f} s: {statuses}")
    assert set(seen) == set(what), set(what) - set(seen)  # every file a status
    for name, event in seen.items():
        assert event.status.searchable or event.error, (name, what[name])  # a failure says why
        assert "Traceback" not in event.error
    assert summary.documents == sum(1 for e in seen.values() if e.status.searchable)
    assert seconds < FILES * LIMIT_S / 2 + 60  # no file held the run past its limit
    assert repair.check(tmp_path / "fuzz.duckdb") is None


def test_a_parse_worker_that_dies_is_replaced_and_the_run_goes_on(tmp_path: Path,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    """A memory cap so small that every reader dies on its file: each file is reported
    with the reason, the next one gets a fresh worker, and no traceback is printed."""
    folder = tmp_path / "few"
    write_mutants(folder, sources()[:2], 4, seed=2)
    with ParsePool(workers=1, timeout_s=LIMIT_S, memory_limit_mb=1) as pool:
        docs = list(pool.parse_many(sorted(str(p) for p in folder.iterdir())))
    assert len(docs) == 4
    assert all(d.status is DocStatus.UNREADABLE and "stopped on this file" in d.error for d in docs)
    assert "Traceback" not in capfd.readouterr().err
