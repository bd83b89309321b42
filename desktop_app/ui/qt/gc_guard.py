"""Collect Python garbage on the GUI thread only.

Python's cyclic collector runs in whichever thread happens to allocate. When a worker
thread (indexing, the model) triggers it and the garbage holds a QObject, Qt destroys
that object on the wrong thread ("QObject::~QObject: Timers cannot be stopped from
another thread", and at worst a crash). As qutebrowser does: automatic collection off,
the GUI thread collects on a timer, generation by generation, at the usual thresholds.
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QObject, QTimer

logger = logging.getLogger(__name__)


class GuiThreadCollector(QObject):
    def __init__(self, interval_ms: int = 500, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)
        self._was_enabled = gc.isenabled()

    def start(self) -> None:
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        if self._was_enabled:
            gc.enable()

    def check(self) -> int:
        """Collect the oldest generation over its threshold; returns objects freed."""
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        for generation in (2, 1, 0):
            if thresholds[generation] and counts[generation] > thresholds[generation]:
                return gc.collect(generation)
        return 0
