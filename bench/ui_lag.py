"""GUI event-loop stall while Folio indexes and streams an answer (issue 4/6 figure).

A 10 ms QTimer measures how late each tick fires on the GUI thread (offscreen Qt, the
real window, the real facade, the real embedder and GGUF). Three workloads: indexing a
folder, streaming an answer, and both at once (an answer asked while a second folder
indexes). Prints p50 / p95 / p99 / max overshoot per workload for each of --repeats runs and
their medians, and the same probe's figures over 3 s of the idle window (what the
machine's load alone costs a tick). tests/ui/window/test_responsiveness.py bounds the p95 of
"both" by 25 ms + 3 x the idle p95.

    FOLIO_MODELS_DIR=.folio-home/data/models .venv/bin/python bench/ui_lag.py \
        --folder ../shared/corpus --limit 6 --question "What is the opening handshake?"
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import desktop_app.ui  # noqa: E402,F401  (applies the PySide6 6.12 refcount workaround)


def _copy(files: list[Path], dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy(f, dest / f.name)
    return dest


async def run_once(args: argparse.Namespace, scratch: Path) -> dict[str, object]:
    from desktop_app.ui.window.app import make_knowledge_base
    from desktop_app.ui.window.main_window import MainWindow
    from tests.ui.lag_probe import LagProbe

    pdfs = sorted(Path(args.folder).glob("*.pdf"))
    first = _copy(pdfs[: args.limit], scratch / "first")
    second = _copy(pdfs[args.limit : 2 * args.limit], scratch / "second")
    kb = make_knowledge_base(scratch / "lib.duckdb", args.model)
    window = MainWindow(kb, remember_layout=False)
    window.show()
    results: dict[str, object] = {}
    probe = LagProbe()
    probe.start()
    await asyncio.sleep(3.0)
    results["idle"] = (probe.stop(), 3.0, 0)
    probe.start()
    started = time.perf_counter()
    summary = await window.open_folder(str(first))
    results["index"] = (probe.stop(), time.perf_counter() - started, getattr(summary, "pages", 0))
    probe.start()
    started = time.perf_counter()
    turn = await window.ask(args.question)
    results["answer"] = (probe.stop(), time.perf_counter() - started, len(getattr(turn, "text", "")))
    probe.start()
    started = time.perf_counter()
    indexing = window.open_folder(str(second))
    await asyncio.sleep(0.5)
    turn = await window.ask(args.question)
    await indexing
    results["both"] = (probe.stop(), time.perf_counter() - started, len(getattr(turn, "text", "")))
    window.close()
    await kb.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", default=str(Path(__file__).resolve().parents[2] / "shared" / "corpus"))
    parser.add_argument("--limit", type=int, default=4, help="PDFs per indexing workload")
    parser.add_argument("--question", default="What does the opening handshake consist of?")
    parser.add_argument("--model", default="small")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()

    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    rows: dict[str, list[tuple[float, float, float]]] = {}

    async def all_runs() -> None:
        for i in range(args.repeats):
            scratch = Path(tempfile.mkdtemp(prefix="folio-lag-"))
            os.environ["FOLIO_HOME"] = str(scratch / "home")
            results = await run_once(args, scratch)
            for name, (report, seconds, size) in results.items():  # type: ignore[misc]
                rows.setdefault(name, []).append((report.median_ms, report.p95_ms, report.p99_ms, report.max_ms))
                print(f"run {i + 1} {name:<7} {seconds:6.1f} s  ({size})  {report}", flush=True)
            shutil.rmtree(scratch, ignore_errors=True)

    qasync.run(all_runs())
    print(f"\nGUI event-loop stall over {args.repeats} run(s), cores={os.cpu_count()} (median of runs):")
    print(f"{'workload':<8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, values in rows.items():
        p50, p95, p99, mx = (statistics.median(v[i] for v in values) for i in range(4))
        print(f"{name:<8} {p50:8.1f} {p95:8.1f} {p99:8.1f} {mx:8.1f}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
