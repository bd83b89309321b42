"""The window's colours, light and dark, by what they mark (text, links, chips, banners,
verdicts). Qt-free: the theme (qt/theme.py) chooses one from the window palette; the
answer, the viewer and first run render with it."""

from __future__ import annotations

from dataclasses import dataclass

from desktop_app.core.types import Verdict


@dataclass(frozen=True)
class Colours:
    """Colour names derived from the window palette (light or dark)."""

    text: str = "#1f1f1f"
    muted: str = "#6b6b6b"
    link: str = "#1a56b0"
    chip_bg: str = "#dce8fb"
    chip_fg: str = "#1a4f9c"
    suggest_bg: str = "#f3ecfb"
    suggest_fg: str = "#6a3fa0"
    bad: str = "#c62828"
    banner_bg: str = "#fff4d6"
    banner_fg: str = "#6b4b00"
    question_bg: str = "#eef1f5"
    quote_bg: str = "#f7f4ec"  # the document's own words (answer_html's quote block)
    quote_rule: str = "#b08d3c"
    supported: str = "#2e7d32"
    not_confirmed: str = "#5b7fa6"  # neutral: neither green nor red, nor the uncited grey
    contradicted: str = "#c62828"
    uncited: str = "#8a8a8a"

    def verdict(self, verdict: Verdict) -> str | None:
        return {
            Verdict.SUPPORTED: self.supported,
            Verdict.NOT_CONFIRMED: self.not_confirmed,
            Verdict.CONTRADICTED: self.contradicted,
            Verdict.UNCITED: self.uncited,
        }.get(verdict)


DARK = Colours(
    text="#e6e6e6",
    muted="#a0a0a0",
    link="#8ab4f8",
    chip_bg="#2b3f5e",
    chip_fg="#cfe0ff",
    suggest_bg="#3a2d4d",
    suggest_fg="#dcc8f5",
    bad="#ff6b6b",
    banner_bg="#4a3b12",
    banner_fg="#ffe2a0",
    question_bg="#2d3137",
    quote_bg="#2f2c25",
    quote_rule="#c9a45a",
    supported="#66bb6a",
    not_confirmed="#8fb3d9",
    contradicted="#ff6b6b",
    uncited="#9e9e9e",
)
