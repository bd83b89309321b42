"""Generate small PDFs with known sentences at known places (QPdfWriter + drawText)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QMarginsF, QPointF
from PySide6.QtGui import QFont, QPageSize, QPainter, QPdfWriter

LINE_HEIGHT = 18.0
LEFT = 72.0
TOP = 100.0


@dataclass(frozen=True)
class GeneratedPdf:
    path: Path
    pages: tuple[tuple[str, ...], ...]  # the lines drawn on each page

    def baseline(self, page: int, line: int) -> float:
        """Page points from the top of page ``page`` (1-based) to the baseline of ``line``."""
        return TOP + LINE_HEIGHT * line


def write_pdf(path: Path, pages: list[list[str]], title: str = "") -> GeneratedPdf:
    """One A4 page per list of lines, 11 pt, 72 points from the left (needs a QGuiApplication)."""
    writer = QPdfWriter(str(path))
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setResolution(72)  # one device pixel = one point
    writer.setPageMargins(QMarginsF(0, 0, 0, 0))
    writer.setTitle(title or path.stem)
    painter = QPainter(writer)
    font = QFont("Noto Sans")
    font.setPointSizeF(11)
    painter.setFont(font)
    for number, lines in enumerate(pages):
        if number:
            writer.newPage()
        for index, line in enumerate(lines):
            painter.drawText(QPointF(LEFT, TOP + LINE_HEIGHT * index), line)
    painter.end()
    return GeneratedPdf(path, tuple(tuple(p) for p in pages))


PUMP_PAGE_1 = [
    "Pump Manual",
    "Chapter 1 introduces the pump and its parts.",
    "Read the safety notes before switching it on.",
]
PUMP_PAGE_2 = [
    "4.2 Warranty",
    "Unrelated opening remark about the shipping box.",
    "The warranty period for the pump is thirty days from delivery.",
    "Claims after that date are handled by the regional office.",
    "A closing note about spare parts and their prices.",
]
PUMP_PAGE_3 = ["Appendix", "Spare parts list and order numbers."]
GUIDE_PAGE_1 = ["Installation Guide", "Mount the pump on a level concrete base."]
GUIDE_PAGE_2 = ["Electrical", "The pump needs a 230 volt supply with an earth connection."]
CHINESE_PAGE = ["质保说明", "第8.3.2条 保修期为三十天，自交货之日起计算。"]

PASSAGE = (
    "The warranty period for the pump is thirty days from delivery.\n"
    "Claims after that date are handled by the regional office."
)


def make_library(folder: Path) -> dict[str, GeneratedPdf]:
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "manual": write_pdf(
            folder / "manual.pdf", [PUMP_PAGE_1, PUMP_PAGE_2, PUMP_PAGE_3], "Pump Manual"
        ),
        "guide": write_pdf(
            folder / "guide.pdf", [GUIDE_PAGE_1, GUIDE_PAGE_2], "Installation Guide"
        ),
        "chinese": write_pdf(folder / "zhibao.pdf", [CHINESE_PAGE], "质保说明"),
    }
