"""Next / previous citation (F8 / Shift+F8): which cited passage of the latest answer comes
next. Qt-free: the window opens what this picks."""

from __future__ import annotations

from dataclasses import dataclass

from desktop_app.core.types import SourcePayload
from desktop_app.ui.conversation.answer_turn import AnswerTurn


@dataclass(frozen=True)
class CitationStep:
    turn_index: int
    cid: str
    source: SourcePayload
    position: int  # 0-based among the answer's cited ids
    total: int

    def describe(self, turn: AnswerTurn) -> str:
        title = self.source.doc_title or self.source.doc_path.rsplit("/", 1)[-1]
        return f"Citation {self.position + 1} of {self.total}: [{turn.chip_label(self.cid)}] {title}, {self.source.where}"


class CitationCursor:
    """Remembers the citation last opened so that stepping goes on from there."""

    def __init__(self) -> None:
        self.at: tuple[int, int] | None = None  # (turn index, position in its cited ids)

    def clicked(self, turns: list[AnswerTurn], turn_index: int, cid: str) -> None:
        cited = turns[turn_index].cited_ids()
        if cid in cited:
            self.at = (turn_index, cited.index(cid))

    def step(self, turns: list[AnswerTurn], direction: int) -> CitationStep | None:
        """The next (+1) or previous (-1) citation of the latest answer that cites
        something, wrapping around; None if no answer cites anything."""
        for turn_index in range(len(turns) - 1, -1, -1):
            cited = turns[turn_index].cited_ids()
            if cited:
                break
        else:
            return None
        if self.at is not None and self.at[0] == turn_index:
            position = (self.at[1] + direction) % len(cited)
        else:
            position = 0 if direction > 0 else len(cited) - 1
        self.at = (turn_index, position)
        source = turns[turn_index].source(cited[position])
        assert source is not None  # cited_ids() lists only ids with a source
        return CitationStep(turn_index, cited[position], source, position, len(cited))
