"""Timing in tests on a busy machine: never an absolute wall-clock bound alone.

:func:`ratio_to_calibration` times some work against a fixed pure-Python workload measured
in the same test, interleaved, and returns the median ratio: a machine that is loaded
slows both alike. :func:`within` retries an attempt whose time must stay under a bound
(the bound holds on a quiet machine; a loaded one gets more tries, not a looser check).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def calibration_work() -> int:
    """About 1.5 ms of interpreter work (short enough to fit in one time slice of a loaded scheduler) on a quiet 2-core machine (string building, dict
    and list operations: what the code under test does too)."""
    seen: dict[str, int] = {}
    total = 0
    for i in range(10_000):
        word = f"w{i % 997}"
        seen[word] = seen.get(word, 0) + i
        total += len(word)
    return total + len(seen)


def _seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def ratio_to_calibration(work: Callable[[], object], rounds: int = 5, best_of: int = 3) -> float:
    """Median over ``rounds`` interleaved rounds of time(work) / time(calibration), each
    the best of ``best_of`` runs (a run the kernel preempted is not the code's time)."""
    ratios = []
    for _ in range(rounds):
        calibration = min(_seconds(calibration_work) for _ in range(best_of))
        ratios.append(min(_seconds(work) for _ in range(best_of)) / calibration)
    return statistics.median(ratios)


def within(attempt: Callable[[], float], bound: float, tries: int = 3) -> list[float]:
    """Run ``attempt`` (it returns a duration) until one is under ``bound``; return them
    all. Fails (AssertionError) when every try is over."""
    seen: list[float] = []
    for _ in range(tries):
        seen.append(attempt())
        if seen[-1] < bound:
            return seen
    raise AssertionError(f"over {bound:.2f} s in each of {tries} tries: {[round(s, 3) for s in seen]}")
