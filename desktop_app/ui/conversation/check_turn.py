"""File ▸ Check a Text… shown as an answer turn. Qt-free.

The checked text becomes the turn's text with a numbered chip after each sentence that has
a supporting passage; the chip is an ordinary citation marker whose source is that passage,
and the sentence's verdict an ordinary :class:`ClaimVerdict` citing it. So the text reads
with the answers' underlines (green, blue-grey, red, grey) and tooltips, and a chip (or F8) opens the
page with the support highlighted exactly as a citation does. Sentences that share a
passage share its number.

Events come from ``KnowledgeBase.check_text`` (services/checking.py): the text as read,
one sentence check per sentence as it is checked, then the totals; the turn is rebuilt
from all checks so far on each.
"""

from __future__ import annotations

from dataclasses import replace

from desktop_app.core.types import (
    CheckEvent,
    CheckFinished,
    ClaimVerdict,
    SentenceCheck,
    SourcePayload,
    TextToCheck,
    Verdict,
)
from desktop_app.ui.conversation.answer_turn import AnswerTurn, Marker, TurnState

CHECK_PREFIX = "Check: "


class CheckedTurn:
    """Feeds check events into ``turn`` (create it with :func:`check_turn`): :meth:`apply`
    records an event, :meth:`rebuild` (at most once a frame) updates the turn."""

    def __init__(self, turn: AnswerTurn) -> None:
        self.turn = turn
        self.document: TextToCheck | None = None  # the text as read
        self.checks: dict[int, SentenceCheck] = {}  # by sentence index
        self.counts: dict[str, int] = {}
        self.finished = False
        self.cancelled = False
        self.dirty = False  # events applied since the last rebuild

    @property
    def total(self) -> int:
        return len(self.document.sentences) if self.document is not None else 0

    def apply(self, event: CheckEvent) -> None:
        match event:
            case TextToCheck():
                self.document = event
                if event.title:
                    self.turn.question = CHECK_PREFIX + event.title
            case SentenceCheck():
                self.checks[event.index] = event
            case CheckFinished():
                self.counts = dict(event.counts)
                self.finished = True
                self.cancelled = bool(event.cancelled)
            case _:
                return
        self.dirty = True

    def rebuild(self) -> None:
        """Recompute the turn's text, chips, sources and verdicts from the checks so far."""
        turn = self.turn
        self.dirty = False
        if self.document is None:
            return
        text: str = self.document.text
        out: list[str] = []
        labels: dict[str, str] = {}  # chunk id -> chip label
        sources: dict[str, SourcePayload] = {}
        markers: list[Marker] = []
        verdicts: list[ClaimVerdict] = []
        pos = shift = 0
        for index, sentence in enumerate(self.document.sentences):
            out.append(text[pos : sentence.end])
            pos = sentence.end
            start, end = sentence.start + shift, sentence.end + shift
            check = self.checks.get(index)
            if check is None:
                continue
            ids: tuple[str, ...] = ()
            if check.source is not None:
                label = labels.setdefault(check.source.chunk_id, str(len(labels) + 1))
                sources.setdefault(label, replace(check.source, id=label))
                marker = f" [{label}]"
                markers.append(Marker(label, (end + 1, end + len(marker)), True))
                out.append(marker)
                shift += len(marker)
                ids = (label,)
            verdicts.append(ClaimVerdict(
                (start, end), _verdict(check.verdict), ids, check.score, support=tuple(check.support),
                reason=_tooltip_reason(check), support_id=ids[0] if ids else None,
                quote=check.quote, conflict=check.conflict,
            ))
        out.append(text[pos:])
        turn.text = "".join(out)
        turn.sources = list(sources.values())
        turn.cited = dict(sources)
        turn.markers = markers
        turn.verdicts = verdicts
        if self.cancelled:
            turn.state = TurnState.CANCELLED
        elif self.finished:
            turn.state = TurnState.FINISHED
        turn.revision += 1

    def progress(self) -> str:
        """"Checking sentence 3 of 12…" or, when done, "Checked 12 sentences: …"."""
        if not self.finished:
            return f"Checking sentence {min(len(self.checks) + 1, self.total)} of {self.total}…"
        counts = ", ".join(f"{n} {verdict.replace('_', ' ')}" for verdict, n in sorted(self.counts.items()))
        words = "Stopped after" if self.cancelled else "Checked"
        return f"{words} {len(self.checks)} sentence{'s' if len(self.checks) != 1 else ''}" + (
            f": {counts}." if counts else ".")


def check_turn(name: str) -> AnswerTurn:
    """An empty turn for checking the text called ``name`` (its rows fill in as it runs)."""
    return AnswerTurn(question=CHECK_PREFIX + (name or "pasted text"), state=TurnState.FINISHED)


def _verdict(value: object) -> Verdict:
    """The verdict as the renderer knows it; a value this version does not know (a newer
    scorer's) keeps its own name if Verdict has it, else counts as not confirmed."""
    try:
        return Verdict(str(value))
    except ValueError:
        return Verdict.NOT_CONFIRMED


def _tooltip_reason(check: SentenceCheck) -> str:
    reason = check.reason
    if check.where:
        reason += f"\n{check.where}"
    if check.quote:
        reason += f"\nThe passage: “{check.quote}”"
    return reason
