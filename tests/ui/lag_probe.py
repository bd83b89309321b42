"""Measure how long the GUI thread stalls: a 10 ms timer and the overshoot of each tick.

A tick that arrives late by ``d`` milliseconds means the event loop was busy for about
``d`` ms; the window must stay under 50 ms while indexing or streaming. Used by the UI
tests and by the responsiveness benchmark.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, QTimer

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LagReport:
    ticks: int
    seconds: float
    max_ms: float
    p99_ms: float
    median_ms: float
    p95_ms: float = 0.0

    def __str__(self) -> str:
        return (
            f"{self.ticks} ticks over {self.seconds:.1f} s: event-loop lag median {self.median_ms:.1f} ms,"
            f" p95 {self.p95_ms:.1f} ms, p99 {self.p99_ms:.1f} ms, max {self.max_ms:.1f} ms"
        )


class LagProbe(QObject):
    """Start it, run the workload, stop it and read the :class:`LagReport`."""

    def __init__(self, interval_ms: int = 10, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.interval_ms = interval_ms
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._overshoot_ms: list[float] = []
        self._last = 0.0
        self._started = 0.0
        self._stopped = 0.0

    def start(self) -> None:
        self._overshoot_ms.clear()
        self._started = self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> LagReport:
        self._timer.stop()
        self._stopped = time.perf_counter()
        return self.report()

    def _tick(self) -> None:
        now = time.perf_counter()
        self._overshoot_ms.append(max(0.0, (now - self._last) * 1000.0 - self.interval_ms))
        self._last = now

    def report(self) -> LagReport:
        values = sorted(self._overshoot_ms)
        end = self._stopped or time.perf_counter()
        if not values:
            return LagReport(0, end - self._started, 0.0, 0.0, 0.0)
        p99 = values[min(len(values) - 1, int(round(0.99 * (len(values) - 1))))]
        p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
        return LagReport(
            ticks=len(values),
            seconds=end - self._started,
            max_ms=values[-1],
            p99_ms=p99,
            median_ms=values[len(values) // 2],
            p95_ms=p95,
        )
