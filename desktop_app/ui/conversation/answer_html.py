"""Render answer turns as the rich text a QTextBrowser shows. Qt-free.

Valid markers become ``<a href="cite:ID?turn=N">`` superscript chips with a tooltip;
hallucinated markers are struck through in red; sentences carry a coloured underline
for their verdict; suggested sources are chips marked "inferred by Folio" (the view
gives them a dashed underline, which Qt's HTML subset cannot express). The document's own
answering sentences (the turn's quotes) stand under the question, above the answer, as
quotation blocks with a left rule, each a ``quote:I?turn=N`` link to its page.
"""

from __future__ import annotations

from desktop_app.core.types import (
    ClaimVerdict,
    QuotePayload,
    SourcePayload,
    SourceState,
    Verdict,
    all_unsupported,
)
from desktop_app.services.answer_stats import first_word_line
from desktop_app.ui.conversation.answer_turn import AnswerTurn, MarkerCluster, TurnState
from desktop_app.ui.qt.palette import Colours
from desktop_app.ui.qt.rich_text import elide, esc, first_words, plain

HALLUCINATED_TIP = "not among the sources given to the model"
SUGGESTED_TIP = "inferred by Folio: the model did not cite this source; Folio suggests it"
ALL_UNSUPPORTED_TEXT = "No statement of this answer is backed by the documents — verify manually"
SOURCE_CHANGED = "source changed since this answer"
SOURCE_REMOVED = "source removed"
NO_BASIS_TEXT = "The documents hold no basis for this question — verify manually"
VERDICT_WORDS = {
    Verdict.SUPPORTED: "supported: the cited passage states this",
    Verdict.NOT_CONFIRMED: "not confirmed: the cited passage does not state this",
    Verdict.CONTRADICTED: "contradicted: the cited passage says otherwise",
    Verdict.UNCITED: "uncited: a claim without a citation",
}
# What a contradicted sentence's passage states otherwise (types.CONFLICT_KINDS).
CONFLICT_WORDS = {
    "number": "another number",
    "negation": "the opposite",
    "party": "it of another party",
    "condition": "it only under a condition",
}
QUOTE_HEADING = "From the document"
QUOTE_ONLY_TEXT = "The document's own words: no model was asked (Settings: find the passage only)."
LEGEND = (
    "Underline: green = supported, red = contradicted (the passage says otherwise), "
    "blue-grey = not confirmed (the cited passage does not state it), grey = no citation"
)


def source_line(source: SourcePayload, limit: int = 0) -> str:
    """"Title — p. 47 · 4.2 Warranty" (page label when it differs from the number); with
    ``limit``, title and section are shortened to fit about that many characters."""
    page = source.where
    if not source.reflowable and source.page_label and source.page_label != str(source.page):
        page += f" (page {source.page} of the file)"
    title = source.doc_title or source.doc_path.rsplit("/", 1)[-1]
    section = source.section
    if limit:
        title = elide(title, max(24, limit // 2))
        section = elide(section, max(24, limit - len(title) - len(page)))
    line = f"{title} — {page}"
    return f"{line} · {section}" if section else line


def scope_label(scope: tuple[str, ...], label: str = "") -> str:
    """How a scope reads: the label the window gave it, else its files' and folders' names."""
    if label:
        return label
    names = [path.rstrip("/").rsplit("/", 1)[-1] for path in scope]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def citation_tooltip(source: SourcePayload) -> str:
    """The source's line, its file's name (the title may be the PDF's own) and its first words."""
    name = source.doc_path.rsplit("/", 1)[-1]
    return f"{source_line(source)}\n{name}\n“{first_words(source.text)}”"


def render_turn(turn: AnswerTurn, number: int, colours: Colours) -> str:
    """HTML for one question and its answer (``number`` identifies the turn in links)."""
    parts = [
        f'<table width="100%" cellpadding="6" style="background-color:{colours.question_bg};">'
        f"<tr><td><b>{plain(turn.question)}</b></td></tr></table>"
    ]
    if turn.searched:
        parts.append(searched_line(turn, number, colours))
    if turn.scope:
        parts.append(f'<p style="color:{colours.muted}; font-size:small;" title="{esc(chr(10).join(turn.scope))}">'
                     f"Asked within: {esc(scope_label(turn.scope, turn.scope_label))}</p>")
    if turn.saved_at:
        parts.append(f'<p style="color:{colours.muted}; font-size:small;">Saved answer · {esc(turn.saved_at[:16])}</p>')
    for cid, state in turn.stale_citations():
        parts.append(_stale_banner(turn, cid, state, number, colours))
    parts.extend(quote_block(turn, index, number, colours) for index in range(len(turn.quotes)))
    if turn.no_basis:
        parts.append(
            f'<table width="100%" cellpadding="6" style="background-color:{colours.banner_bg};">'
            f'<tr><td style="color:{colours.banner_fg};"><b>{esc(NO_BASIS_TEXT)}</b>'
            f"<br/>{plain(turn.no_basis)}{_also_searched(turn, colours)}</td></tr></table>"
        )
    if turn.state is TurnState.FINISHED and all_unsupported(turn.verdicts):
        parts.append(
            f'<table width="100%" cellpadding="6" style="background-color:{colours.banner_bg};">'
            f'<tr><td style="color:{colours.banner_fg};"><b>{esc(ALL_UNSUPPORTED_TEXT)}</b>'
            "</td></tr></table>"
        )
    body = _answer_body(turn, number, colours)
    if body:
        parts.append(f"<p>{body}</p>")
    elif turn.state is TurnState.STREAMING and not turn.quote_only:
        parts.append(_reading(turn, number, colours))  # gives way to the answer's first words
    parts.append(_status_line(turn, colours))
    parts.append(_source_list(turn, number, colours))
    return "\n".join(p for p in parts if p)


def searched_line(turn: AnswerTurn, number: int, colours: Colours) -> str:
    """"Searched for: … · edit" under the question: what retrieval was asked (a follow-up
    made to stand alone); "edit" lets the person change it and search again."""
    edit = "" if turn.state.running else f' · <a href="searched:?turn={number}">edit</a>'
    return (f'<p style="color:{colours.muted}; font-size:small;">Searched for: '
            f"<i>{esc(turn.searched)}</i>{edit}</p>")


def quote_where(turn: AnswerTurn, quote: QuotePayload) -> tuple[str, str]:
    """The quote's document (title, else file name) and place in it ("p. 2", "§ 4.2")."""
    source = turn.source(quote.id)
    if source is not None:
        return source.doc_title or source.doc_path.rsplit("/", 1)[-1], source.where
    return quote.doc_path.rsplit("/", 1)[-1], f"p. {quote.page}"


def quote_name(turn: AnswerTurn, index: int) -> str:
    """What a screen reader says of quote ``index``: "Quote from Pump Manual, p. 2: …"."""
    quote = turn.quotes[index]
    title, where = quote_where(turn, quote)
    return f"Quote from {title}, {where}: {' '.join(quote.text.split())}"


def quote_block(turn: AnswerTurn, index: int, number: int, colours: Colours) -> str:
    """Quote ``index`` as the document's words: a left rule, "From the document · Pump
    Manual — p. 2", the sentence in quotation marks and its source's marker, the sentence
    and marker one link that opens the page with the sentence highlighted."""
    quote = turn.quotes[index]
    source = turn.source(quote.id)
    title, where = quote_where(turn, quote)
    place = source_line(source, 90) if source is not None else f"{title} — {where}"
    words = f"“{plain(' '.join(quote.text.split()))}”"
    if source is not None:
        chip = (f'<span style="background-color:{colours.chip_bg}; color:{colours.chip_fg}; font-weight: 600;">'
                f"&nbsp;{esc(turn.chip_label(quote.id))}&nbsp;</span>")
        words = (f'<a href="quote:{index}?turn={number}" title="{esc(quote_name(turn, index))}" '
                 f'style="text-decoration: none; color:{colours.text};">{words}&#8201;{chip}</a>')
    return (
        '<table width="100%" cellspacing="0" cellpadding="0" style="margin-top: 4px; margin-bottom: 4px;"><tr>'
        f'<td width="4" style="background-color:{colours.quote_rule};"></td>'
        f'<td style="background-color:{colours.quote_bg}; padding: 6px 10px;">'
        f'<span style="color:{colours.muted}; font-size: small;">{esc(QUOTE_HEADING)} · {esc(place)}</span>'
        f"<br/>{words}</td></tr></table>"
    )


def link_name(turn: AnswerTurn, scheme: str, target: str) -> str:
    """What a screen reader says of a link of ``turn`` ("" for a link it needs no name for)."""
    if scheme == "quote" and target.isdigit() and int(target) < len(turn.quotes):
        return quote_name(turn, int(target))
    source = turn.source(target) if scheme in ("cite", "source") else None
    if source is None:
        return ""
    kind = "Citation" if scheme == "cite" else "Source"
    return f"{kind} {turn.chip_label(target)}: {source_line(source)}"


def _stale_banner(turn: AnswerTurn, cid: str, state: SourceState, number: int, colours: Colours) -> str:
    """"[1] Pump Manual — p. 2: source changed since this answer: re-ask?" (a link)."""
    source = turn.source(cid)
    where = f"[{esc(turn.chip_label(cid))}] {esc(source_line(source, 90)) if source else ''}"
    if state is SourceState.REMOVED:
        words = f"<b>{esc(SOURCE_REMOVED)}</b>"
    else:
        words = f'<b>{esc(SOURCE_CHANGED)}:</b> <a href="reask:?turn={number}">re-ask?</a>'
    return (
        f'<table width="100%" cellpadding="4" style="background-color:{colours.banner_bg};">'
        f'<tr><td style="color:{colours.banner_fg};">{where}: {words}</td></tr></table>'
    )


def read_excerpt(source: SourcePayload, limit: int = 320) -> str:
    """What the model reads of ``source``: its evidence pieces joined by ``…``."""
    if not source.read:
        return elide(" ".join(source.text.split()), limit)
    pieces = [" ".join(source.text[int(a) : int(b)].split()) for a, b in source.read]
    head = "… " if int(source.read[0][0]) > 0 else ""
    tail = " …" if int(source.read[-1][1]) < len(source.text.rstrip()) else ""
    return elide(head + " … ".join(pieces) + tail, limit)


def waiting_words(turn: AnswerTurn) -> str:
    """The line shown while the model reads: 'The model is reading 3 passages (412
    tokens); the answer will take about 20 s.'"""
    count = len(turn.sources)
    what = f"{count} passage{'s' if count != 1 else ''}"
    tokens = f" ({turn.prompt_tokens:,} tokens)" if turn.prompt_tokens else ""
    if turn.estimate_s <= 0:
        return f"The model is reading {what}{tokens}."
    seconds = max(1, round(turn.estimate_s))
    when = f"about {seconds} s" if seconds < 90 else f"about {round(seconds / 60)} min"
    return f"The model is reading {what}{tokens}; the answer will take {when}."


def _reading(turn: AnswerTurn, number: int, colours: Colours) -> str:
    """While the model reads: the passages it reads, each a link to its highlighted page."""
    if not turn.sources:
        return ""
    rows = [f'<p style="color:{colours.muted};"><i>{esc(waiting_words(turn))}</i></p>']
    for source in turn.sources:
        rows.append(
            f'<p style="margin-left: 8px;"><a href="source:{esc(source.id)}?turn={number}" '
            f'title="{esc(citation_tooltip(source))}">[{esc(turn.chip_label(source.id))}] '
            f"{esc(source_line(source, 90))}</a><br/>"
            f'<span style="color:{colours.muted};">{esc(read_excerpt(source))}</span></p>'
        )
    return "\n".join(rows)


def _status_line(turn: AnswerTurn, colours: Colours) -> str:
    if turn.quote_only and turn.state.running:  # no model: a search, then the finder
        return f'<p style="color:{colours.muted};"><i>Finding the passage that answers… (Esc stops)</i></p>'
    if turn.quote_only and turn.state is TurnState.FINISHED and turn.quotes:
        return f'<p style="color:{colours.muted}; font-size:small;">{esc(QUOTE_ONLY_TEXT)}</p>'
    if turn.state is TurnState.WAITING:
        # Retrieval takes milliseconds; the wait is the model reading the passages.
        return (f'<p style="color:{colours.muted};"><i>Finding the passages; the model reads them'
                " before it writes (on a small machine, up to half a minute)… Esc stops.</i></p>")
    if turn.state is TurnState.STREAMING:
        return f'<p style="color:{colours.muted};"><i>Answering… (Esc stops)</i></p>'
    if turn.state is TurnState.CANCELLED:
        return f'<p style="color:{colours.muted};"><i>Stopped.</i></p>'
    if turn.state is TurnState.FAILED:
        kind = "" if turn.error_known else " (a bug: details are in the log)"
        return (
            f'<p style="color:{colours.bad};"><b>The answer failed{kind}:</b> '
            f"{plain(turn.error)}</p>"
        )
    legend = f'<p style="color:{colours.muted}; font-size:small;">{esc(LEGEND)}</p>' if turn.verdicts else ""
    return legend + _timing_line(turn, colours)


def _timing_line(turn: AnswerTurn, colours: Colours) -> str:
    """A finished answer's details: where the seconds before its first word went."""
    line = first_word_line(turn.stats) if turn.state is TurnState.FINISHED else ""
    return f'<p style="color:{colours.muted}; font-size:small;">{esc(line)}</p>' if line else ""


def _answer_body(turn: AnswerTurn, number: int, colours: Colours) -> str:
    text = turn.text
    clusters = {c.start: c for c in turn.clusters()}
    verdicts = _usable_verdicts(turn.verdicts, len(text))
    suggestions: dict[int, list[ClaimVerdict]] = {}
    for verdict in verdicts:
        if verdict.suggested or verdict.suggested_label:
            suggestions.setdefault(verdict.sentence_span[1], []).append(verdict)
    cuts = {0, len(text)}
    for cluster in clusters.values():
        cuts.update((cluster.start, cluster.end))
    for verdict in verdicts:
        cuts.update(verdict.sentence_span)
    cuts.update(suggestions)
    ordered = sorted(c for c in cuts if 0 <= c <= len(text))
    out: list[str] = []
    skip_to = 0
    for start, end in zip(ordered, ordered[1:] + [len(text)], strict=False):
        if start in suggestions and start >= skip_to:
            out.extend(_suggestion_chip(turn, v, number, colours) for v in suggestions.pop(start))
        if start < skip_to or start >= len(text):
            continue
        at = clusters.get(start)
        if at is not None:
            out.append(_cluster_html(turn, at, number, colours))
            skip_to = at.end
            continue
        out.append(_text_html(text[start:end], _verdict_at(verdicts, start), colours))
    for pending in suggestions.values():
        out.extend(_suggestion_chip(turn, v, number, colours) for v in pending)
    return "".join(out)


def _usable_verdicts(verdicts: list[ClaimVerdict], limit: int) -> list[ClaimVerdict]:
    usable: list[ClaimVerdict] = []
    for verdict in sorted(verdicts, key=lambda v: v.sentence_span):
        start, end = verdict.sentence_span
        if 0 <= start < end <= limit and (not usable or start >= usable[-1].sentence_span[1]):
            usable.append(verdict)
    return usable


def _verdict_at(verdicts: list[ClaimVerdict], position: int) -> ClaimVerdict | None:
    for verdict in verdicts:
        if verdict.sentence_span[0] <= position < verdict.sentence_span[1]:
            return verdict
    return None


def _text_html(fragment: str, verdict: ClaimVerdict | None, colours: Colours) -> str:
    if verdict is None or not fragment.strip():
        return plain(fragment)
    colour = colours.verdict(verdict.verdict)
    if colour is None:  # not a factual sentence: nothing to flag
        return plain(fragment)
    tip = VERDICT_WORDS.get(verdict.verdict, str(verdict.verdict))
    if verdict.ids:
        tip += " [" + ", ".join(verdict.ids) + "]"
    if verdict.score:
        tip += f" · score {verdict.score:.2f}"
    if verdict.verdict is Verdict.CONTRADICTED and verdict.conflict in CONFLICT_WORDS:
        tip += f"\nIt states {CONFLICT_WORDS[verdict.conflict]}."
    if verdict.quote:  # what the passage says instead (or under which condition)
        tip += f"\nThe passage says: “{verdict.quote}”"
    if verdict.verdict is Verdict.NOT_CONFIRMED and verdict.suggested_label:
        tip += f"\nA better passage: [{verdict.suggested_label}]"
    if verdict.reason:
        tip += f"\n{verdict.reason}"
    tip += f"\n\n{LEGEND}"
    return (
        f'<span style="text-decoration: underline; text-decoration-color:{colour};" '
        f'title="{esc(tip)}">{plain(fragment)}</span>'
    )


def _cluster_html(turn: AnswerTurn, cluster: MarkerCluster, number: int, colours: Colours) -> str:
    chips: list[str] = []
    for marker in cluster.markers:
        label = esc(turn.chip_label(marker.id))
        source = turn.source(marker.id) if marker.valid else None
        if source is None:
            raw = turn.text[marker.span[0] : marker.span[1]] if len(cluster.markers) == 1 else f"[{marker.id}]"
            chips.append(
                f'<span style="color:{colours.bad}; text-decoration: line-through;" '
                f'title="{esc(HALLUCINATED_TIP)}">{esc(raw)}</span>'
            )
            continue
        chips.append(
            f'<a href="cite:{esc(marker.id)}?turn={number}" title="{esc(citation_tooltip(source))}" '
            f'style="text-decoration: none;"><span style="background-color:{colours.chip_bg}; '
            f'color:{colours.chip_fg}; vertical-align: super; font-size: large; font-weight: 600;">'
            f"&nbsp;{label}&nbsp;</span></a>"
        )
    # A thin space after each chip keeps neighbours ([1][2]) apart.
    return "".join(f"{chip}&#8201;" for chip in chips)


def _suggestion_chip(turn: AnswerTurn, verdict: ClaimVerdict, number: int, colours: Colours) -> str:
    source = None
    if verdict.suggested_label:
        source = turn.source(verdict.suggested_label)
    if source is None and verdict.suggested:
        source = turn.source_by_chunk(verdict.suggested)
    label = verdict.suggested_label or (source.id if source else "?")
    tip = SUGGESTED_TIP
    if source is not None:
        tip += "\n" + citation_tooltip(source)
    chip = (
        f'<span style="background-color:{colours.suggest_bg}; color:{colours.suggest_fg}; '
        f'font-size: small; font-style: italic;">'
        f"&nbsp;{esc(turn.chip_label(label))}? inferred by Folio&nbsp;</span>"
    )
    key = esc(source.chunk_id if source else (verdict.suggested or ""))
    return f' <a href="suggest:{key}?turn={number}" title="{esc(tip)}" style="text-decoration: none;">{chip}</a>'


def _source_list(turn: AnswerTurn, number: int, colours: Colours) -> str:
    if not turn.sources and not turn.cited:
        return ""
    cited = turn.cited_ids()
    sources = list(turn.sources)
    for cid in cited:  # a payload only reported by its citation event
        payload = turn.source(cid)
        if payload is not None and all(s.id != cid for s in sources):
            sources.append(payload)
    rows: list[str] = []
    for source in sources:
        is_cited = source.id in cited
        style = "" if is_cited else f' style="color:{colours.muted};"'
        note = "" if is_cited or turn.state.running or turn.quote_only else " <i>(not cited)</i>"
        rows.append(
            f'<a href="source:{esc(source.id)}?turn={number}" title="{esc(citation_tooltip(source))}"'
            f'{style}>[{esc(turn.chip_label(source.id))}] {esc(source_line(source, 90))}</a>{note}'
        )
    return (
        f'<p style="font-size: small;"><span style="color:{colours.muted};">Sources</span><br/>'
        + "<br/>".join(rows)
        + _also_searched(turn, colours)
        + "</p>"
    )


def _also_searched(turn: AnswerTurn, colours: Colours) -> str:
    """What the glossary added to the question's search (a line of its own), or ""."""
    if not turn.also_searched:
        return ""
    return (f'<br/><span style="color:{colours.muted};">Also searched for (glossary): '
            f"{esc(elide(turn.also_searched, 160))}</span>")


def render_history(turns: list[str]) -> str:
    """Join the rendered turns into one document."""
    return "<hr/>".join(turns)
