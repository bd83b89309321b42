"""How long the document's own answer takes without a model: ``ask(quote_only=True)``
(search, the evidence gate, the answer finder) beside ``library.search`` of the same
question, through the facade as the window and ``folio ask --quote-only`` use it, over the
corpus library. Prints the medians and their ratio (the issue's bound: 1.5), and the
finder's share.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/quote_only.py --db /tmp/corpus.duckdb [--questions 40]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import eval_sets  # noqa: E402

from desktop_app.core.settings import Settings  # noqa: E402
from desktop_app.core.types import AnswerQuoted  # noqa: E402
from desktop_app.services.knowledge_base import KnowledgeBase  # noqa: E402


async def run(db: Path, count: int) -> None:
    kb = KnowledgeBase(db, Settings(judge=False))
    questions = [q.question for lang in ("en", "de", "zh") for q in eval_sets.load(lang)
                 if eval_sets.half(q) == "tune"][:count]
    try:
        await kb.library.search(questions[0], 5)  # the embedder and the vectors loaded
        search_s, quote_s = [], []
        quoted = 0
        for question in questions:
            started = time.perf_counter()
            await kb.library.search(question, 5)
            search_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            events = [e async for e in kb.answers.ask(question, quote_only=True)]
            quote_s.append(time.perf_counter() - started)
            quoted += any(isinstance(e, AnswerQuoted) for e in events)
    finally:
        await kb.close()
    s, q = statistics.median(search_s), statistics.median(quote_s)
    print(f"{len(questions)} questions ({quoted} quoted): search median {s * 1000:.0f} ms,"
          f" quote only median {q * 1000:.0f} ms, ratio {q / s:.2f}")
    ratios = sorted(b / a for a, b in zip(search_s, quote_s, strict=True))
    print(f"per-question ratio: median {statistics.median(ratios):.2f}, p90 {ratios[int(0.9 * len(ratios))]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args()
    asyncio.run(run(args.db, args.questions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
