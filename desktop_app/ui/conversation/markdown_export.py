"""Export an answer turn, or a conversation's turns, as Markdown with footnotes. Qt-free.

Each valid marker becomes a footnote reference; each footnote names the document, page,
section and quotes the passage verbatim, so the export stands on its own as a record of
what the answer rested on. Hallucinated markers are kept, struck through, and listed. The
document's own answering sentences (the turn's quotes) come first, as block quotes under
the source they are from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from desktop_app.core.types import Verdict
from desktop_app.ui.conversation.answer_html import (
    NO_BASIS_TEXT,
    QUOTE_HEADING,
    QUOTE_ONLY_TEXT,
    VERDICT_WORDS,
    quote_where,
)
from desktop_app.ui.conversation.answer_turn import AnswerTurn, TurnState


def _quote(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(f"    > {line}" if line else "    >" for line in lines)


def turn_to_markdown(turn: AnswerTurn, now: datetime | None = None) -> str:
    stamp = (now or datetime.now()).strftime("%Y-%m-%d %H:%M")
    cited = turn.cited_ids()
    footnote = {cid: n for n, cid in enumerate(cited, start=1)}
    out = [f"# {turn.question.strip()}", "", f"*Exported from Folio on {stamp}.*", ""]
    if turn.searched and turn.searched.strip() != turn.question.strip():
        out += [f"Searched for: {turn.searched.strip()}", ""]
    if turn.no_basis:
        out += [f"> **{NO_BASIS_TEXT}.** {turn.no_basis}", ""]
    out += _quotes(turn)
    body: list[str] = []
    position = 0
    for cluster in turn.clusters():
        body.append(turn.text[position : cluster.start])
        refs: list[str] = []
        for marker in cluster.markers:
            if marker.valid and marker.id in footnote:
                refs.append(f"[^{footnote[marker.id]}]")
            else:
                raw = turn.text[marker.span[0] : marker.span[1]]
                refs.append(f"~~{raw if len(cluster.markers) == 1 else '[' + marker.id + ']'}~~")
        body.append("".join(refs))
        position = cluster.end
    body.append(turn.text[position:])
    answer = "".join(body).strip()
    if answer:
        out += [answer, ""]
    if turn.state is TurnState.CANCELLED:
        out += ["*The answer was stopped before it was complete.*", ""]
    elif turn.state is TurnState.FAILED:
        out += [f"*The answer failed: {turn.error}*", ""]
    hallucinated = sorted({m.id for m in turn.markers if not m.valid})
    if hallucinated:
        ids = ", ".join(f"[{cid}]" for cid in hallucinated)
        out += [f"*Markers {ids} name no source given to the model and were not resolved.*", ""]
    flagged = _verdict_lines(turn)
    if flagged:
        out += ["## Checks", "", *flagged, ""]
    for cid in cited:
        source = turn.source(cid)
        if source is None:
            continue
        where = f"{source.doc_title or source.doc_path}, {source.where}"
        if not source.reflowable and source.page_label and source.page_label != str(source.page):
            where += f" (page {source.page} of the file)"
        if source.section:
            where += f", {source.section}"
        out += [
            f"[^{footnote[cid]}]: {where}. `{source.doc_path}` (sha256 {source.doc_id[:16]}…, "
            f"chunk {source.chunk_id})",
            "",
            _quote(source.text.strip()),
            "",
        ]
    return "\n".join(out).rstrip() + "\n"


def conversation_to_markdown(turns: Sequence[AnswerTurn], now: datetime | None = None) -> str:
    """A conversation's turns in order, one section each, footnotes numbered "turn.n" so
    that they stay apart (one turn: as :func:`turn_to_markdown`)."""
    if len(turns) == 1:
        return turn_to_markdown(turns[0], now)
    parts = []
    for number, turn in enumerate(turns, start=1):
        text = re.sub(r"\[\^(\d+)\]", rf"[^{number}.\1]", turn_to_markdown(turn, now))
        parts.append(text.replace("# ", f"# {number}. ", 1))
    return "\n---\n\n".join(parts)


def _quotes(turn: AnswerTurn) -> list[str]:
    """The document's own answering sentences, each a block quote under its source."""
    out: list[str] = []
    for quote in turn.quotes:
        title, where = quote_where(turn, quote)
        name = quote.doc_path.rsplit("/", 1)[-1]
        out += [f"{QUOTE_HEADING}, source [{turn.chip_label(quote.id)}]: {title}, {where} (`{name}`)", "",
                f"> {' '.join(quote.text.split())}", ""]
    if out and turn.quote_only and not turn.text:
        out += [f"*{QUOTE_ONLY_TEXT}*", ""]
    return out


def _verdict_lines(turn: AnswerTurn) -> list[str]:
    lines: list[str] = []
    for verdict in sorted(turn.verdicts, key=lambda v: v.sentence_span):
        if verdict.verdict in (Verdict.SUPPORTED, Verdict.NOT_FACTUAL):
            continue
        start, end = verdict.sentence_span
        sentence = " ".join(turn.text[start:end].split())
        words = VERDICT_WORDS.get(verdict.verdict, str(verdict.verdict))
        line = f"- “{sentence}” — {words}"
        if verdict.suggested_label or verdict.suggested:
            line += f"; Folio suggests source [{verdict.suggested_label or verdict.suggested}]"
        lines.append(line)
    return lines
