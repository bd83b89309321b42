"""Streaming through the answer model's worker process against the model in-process.

Issue 11 asks that moving llama.cpp into its own process (core/models/worker.py) cost at
most 2% of decode speed. Each round asks the same question at temperature 0 once
in-process and once through the worker (alternating which goes first), timing the
deltas where the caller receives them; figures are medians over rounds.

    python bench/worker.py [--model small|default|PATH] [--rounds 7] [--max-tokens 96]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

from desktop_app.core.models import catalog as models
from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.worker import WorkerGenerator

MESSAGES = [
    {"role": "system", "content": "You answer questions about the sources, citing them like [1]."},
    {"role": "user", "content": (
        "Sources:\n[1] The pump must be inspected every 12 weeks by a certified technician, and"
        " its seals replaced after 900 hours of running.\n[2] The warranty covers parts for two"
        " years from the date of purchase, labour for one year.\n\n"
        "Question: Describe the pump's maintenance and its warranty in detail.")},
]


def timed(deltas: Iterator[str]) -> tuple[str, float, int]:
    """(text, decode tokens/s after the first delta, deltas) as the caller sees them."""
    parts: list[str] = []
    first = last = 0.0
    for delta in deltas:
        last = time.perf_counter()
        if not parts:
            first = last
        parts.append(delta)
    rate = (len(parts) - 1) / (last - first) if len(parts) > 1 and last > first else 0.0
    return "".join(parts), rate, len(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="small")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    path = Path(args.model) if args.model.endswith(".gguf") else models.resolve_answer_model(args.model)
    local = LlamaGenerator(path, context_tokens=2048, threads=args.threads)
    worker = WorkerGenerator(path, context_tokens=2048, threads=args.threads)
    rates: dict[str, list[float]] = {"in-process": [], "worker": []}
    texts: dict[str, set[str]] = {"in-process": set(), "worker": set()}
    try:
        for round_no in range(args.rounds):
            order = [("in-process", local), ("worker", worker)]
            if round_no % 2:
                order.reverse()
            for name, generator in order:
                text, rate, count = timed(generator.stream(MESSAGES, max_tokens=args.max_tokens, temperature=0.0))
                rates[name].append(rate)
                texts[name].add(text)
                print(f"round {round_no + 1} {name}: {count} deltas, {rate:.1f} tok/s", flush=True)
    finally:
        worker.close()
    local_rate = statistics.median(rates["in-process"])
    worker_rate = statistics.median(rates["worker"])
    print(f"\n{path.name}, {args.threads} thread(s), {args.rounds} interleaved rounds (median):")
    print(f"  in-process {local_rate:.2f} tok/s, worker {worker_rate:.2f} tok/s,"
          f" worker/in-process {worker_rate / local_rate:.3f}")
    print(f"  same text at temperature 0: {texts['in-process'] == texts['worker'] and len(texts['worker']) == 1}")


if __name__ == "__main__":
    main()
