"""The PySide6 6.12 / Python 3.11 reference-count workaround keeps a busy window alive."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

BUSY = """
import desktop_app.ui
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication([])
class Source(QObject):
    changed = Signal(bool)
source = Source()
source.changed.connect(lambda value: None)
widget = QWidget()
for _ in range(100_000):
    widget.update()            # a void method: takes a reference from None
    source.changed.emit(True)  # an emit: takes one from True
print("alive")
"""


def test_many_void_calls_and_emits_do_not_abort_the_interpreter() -> None:
    result = subprocess.run(
        [sys.executable, "-c", BUSY],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "alive"
