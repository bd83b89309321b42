"""Saved answers: staleness of their sources, and export as Markdown or JSON. Qt-free.

An answer keeps the chunk ids and document sha256 it cited. Reopening it compares
them with what the library and the disk hold now: the same bytes (current), other
bytes at that path (changed), or nothing (removed). A changed source is never shown
as if the new version said the same thing.

The exports are the audit record: the JSON names the question, the answer, each citation
with its spans, chunk id, document sha256 and version and the verbatim passage, every
sentence's verdict and the model; the Markdown turns markers into footnotes that quote
the passages verbatim. Both keep the document's own answering sentences (the answer
finder's quotes) as the document's words, each with its source, page and span.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
from pathlib import Path

from desktop_app.core.ids import sha256_file
from desktop_app.core.library.store import Store
from desktop_app.core.types import (
    AnswerStatus,
    ClaimVerdict,
    JsonObject,
    QuotePayload,
    SavedAnswer,
    SourcePayload,
    SourceState,
)

logger = logging.getLogger(__name__)

# How the Markdown export names each verdict a reader needs to look at.
VERDICT_NAMES = {
    "contradicted": "contradicted (the cited passage says otherwise)",
    "not_confirmed": "not confirmed (the cited passage does not state this)",
    "uncited": "uncited",
}
STATE_WORDS = {
    "changed": "source changed since this answer: re-ask?",
    "removed": "source removed",
}


def source_state(store: Store, chunk_id: str, doc_id: str,
                 hashes: dict[str, str] | None = None) -> SourceState:
    """Whether the bytes ``doc_id`` names are still at one of their paths. ``hashes``
    (path -> sha256) memoises hashing across the sources of one answer."""
    rows = store.live_files(doc_id)
    for path, size, mtime in rows:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        if stat.st_size == size and stat.st_mtime == mtime:
            return SourceState.CURRENT
        if hashes is not None and path in hashes:
            digest = hashes[path]
        else:
            try:
                digest = sha256_file(path)
            except OSError:
                continue
            if hashes is not None:
                hashes[path] = digest
        if digest == doc_id:
            return SourceState.CURRENT
    # Not found as it was. Did its path get other bytes, or did it go away?
    indexed_from = store.document_path(doc_id)
    candidates = [r[0] for r in rows] + ([indexed_from] if indexed_from else [])
    for path in candidates:
        if Path(path).exists():
            return SourceState.CHANGED
    return SourceState.REMOVED


def annotate_staleness(store: Store, record: SavedAnswer) -> SavedAnswer:
    """The saved answer with the state of each of its sources as of now (``source_states``)."""
    states: dict[str, SourceState] = {}
    by_doc: dict[str, SourceState] = {}
    hashes: dict[str, str] = {}
    for source in record.sources:
        if source.doc_id not in by_doc:
            by_doc[source.doc_id] = source_state(store, source.chunk_id, source.doc_id, hashes)
        states[source.id] = by_doc[source.doc_id]
    return dataclasses.replace(record, source_states=states)


# --------------------------------------------------------------------------- audit record


def cited_ids(record: SavedAnswer) -> list[str]:
    """Ids of valid citations (among the sources) in order of first appearance."""
    return record.cited_ids()


def _cited(record: SavedAnswer, source: SourcePayload) -> JsonObject:
    return {
        "id": source.id,
        "spans": [list(span) for span in record.citations[source.id]],
        "chunk_id": source.chunk_id,
        "document": {
            "path": source.doc_path, "title": source.doc_title, "sha256": source.doc_id,
            "version": source.version, "state": record.state(source.id),
        },
        "page": source.page, "page_label": source.page_label,
        "section": source.section,
        "char_start": source.char_start, "char_end": source.char_end,
        "passage": source.text,
    }


def _quoted(record: SavedAnswer, quote: QuotePayload) -> JsonObject:
    """A quote as the audit record keeps it: the document's words and where they stand."""
    source = record.source(quote.id)
    return {
        "id": quote.id, "text": quote.text, "span": list(quote.span),
        "chunk_id": source.chunk_id if source else "",
        "document": {"path": quote.doc_path, "title": source.doc_title if source else "",
                     "sha256": source.doc_id if source else "", "state": record.state(quote.id)},
        "page": quote.page, "page_span": list(quote.page_span),
        "score": round(quote.score, 4), "kind": quote.kind,
    }


def _checked(record: SavedAnswer, claim: ClaimVerdict) -> JsonObject:
    start, end = claim.sentence_span
    ids = list(claim.ids)
    chunks = {s.id: s.chunk_id for s in record.sources}
    return {
        "sentence": record.text[start:end], "sentence_span": [start, end],
        "verdict": str(claim.verdict), "ids": ids,
        "chunk_ids": [chunks[i] for i in ids if i in chunks],
        "score": round(claim.score, 4), "reason": claim.reason,
        "suggested_chunk_id": claim.suggested,
        "support_id": claim.support_id, "support": [list(s) for s in claim.support],
        "quote": claim.quote, "conflict": claim.conflict,
    }


def audit_record(record: SavedAnswer) -> JsonObject:
    """The JSON export: what was asked, answered, cited (verbatim) and checked."""
    citations = [_cited(record, s) for s in (record.source(cid) for cid in record.cited_ids()) if s]
    cited = {c["id"] for c in citations}
    return {
        "answer_id": record.answer_id,
        "created_at": record.created_at,
        "question": record.question,
        "searched": record.asked,  # a follow-up as it was searched
        "conversation_id": record.conversation,
        "answer": record.text,
        "status": str(record.status),
        "no_basis_reason": record.reason or None,
        "model_id": record.model_id,
        "citation_style": str(record.style),
        "scope": list(record.scope),  # asked within these paths (empty: everything)
        "quotes": [_quoted(record, q) for q in record.quotes],  # the document's words, shown first
        "citations": citations,
        "hallucinated": [{"id": cid, "spans": [list(span) for span in record.citations.get(cid, ())]}
                         for cid in record.hallucinated],
        "verdicts": [_checked(record, claim) for claim in record.claims],
        "sources": [
            {"id": s.id, "chunk_id": s.chunk_id, "sha256": s.doc_id, "version": s.version, "path": s.doc_path,
             "page": s.page, "state": record.state(s.id), "cited": s.id in cited}
            for s in record.sources
        ],
    }


def export_json(record: SavedAnswer) -> str:
    return json.dumps(audit_record(record), ensure_ascii=False, indent=2)


# --------------------------------------------------------------------------- Markdown


def _quote(text: str) -> str:
    """A verbatim passage as an indented block quote (continues the footnote)."""
    lines = text.replace("\r\n", "\n").strip("\n").split("\n")
    return "\n".join(f"    > {line}" if line.strip() else "    >" for line in lines)


def _where(source: SourcePayload) -> str:
    title = source.doc_title or Path(source.doc_path).stem
    label = source.page_label or str(source.page)
    where = f"{title} (`{Path(source.doc_path).name}`), p. {label}"
    if label != str(source.page):
        where += f" (page {source.page} of the file)"
    if source.section:
        where += f", {source.section}"
    return where


def _quote_lines(record: SavedAnswer) -> list[str]:
    """The document's own answering sentences, each under the source it is from."""
    lines: list[str] = []
    for quote in record.quotes:
        source = record.source(quote.id)
        where = _where(source) if source else f"`{Path(quote.doc_path).name}`, p. {quote.page}"
        lines += [f"From the document, source [{quote.id}]: {where}", "",
                  f"> {' '.join(quote.text.split())}", ""]
    return lines


def _marked(record: SavedAnswer, number: dict[str, int]) -> str:
    """The answer's text with its markers as footnote references (hallucinated struck through)."""
    text = record.text
    marks = sorted((s[0], s[1], cid) for cid, spans in record.citations.items() for s in spans)
    out: list[str] = []
    pos = 0
    for start, end, cid in marks:
        if start < pos:  # "[1, 3]" is reported once per id with the same span
            if cid in number and start < pos <= end:
                out.append(f"[^{number[cid]}]")
            continue
        out.append(text[pos:start])
        out.append(f"[^{number[cid]}]" if cid in number else f"~~{text[start:end]}~~")
        pos = end
    out.append(text[pos:])
    return "".join(out).strip()


def _checks(record: SavedAnswer) -> list[str]:
    """The "Checks" section: the verdicts counted, and each sentence a reader should look at."""
    if not record.claims:
        return []
    counts: dict[str, int] = {}
    for claim in record.claims:
        counts[str(claim.verdict)] = counts.get(str(claim.verdict), 0) + 1
    lines = ["## Checks", "", "Checked by Folio: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())), ""]
    for claim in record.claims:
        if str(claim.verdict) in VERDICT_NAMES:
            start, end = claim.sentence_span
            said = f" The passage says: “{claim.quote}”" if claim.quote else ""
            lines.append(f"- “{' '.join(record.text[start:end].split())}” — {VERDICT_NAMES[str(claim.verdict)]}:"
                         f" {claim.reason}{said}")
    return [*lines, ""]


def export_markdown(record: SavedAnswer) -> str:
    """The answer with its markers turned into numbered footnotes that name the document,
    page and section and quote the passage verbatim; hallucinated markers struck through."""
    cited = [s for s in (record.source(cid) for cid in record.cited_ids()) if s]
    number = {s.id: n for n, s in enumerate(cited, start=1)}
    lines = [f"# {record.question.strip()}", ""]
    if record.asked.strip() != record.question.strip():
        lines += [f"Searched for: {record.asked.strip()}", ""]
    if record.scope:
        lines += ["Asked within: " + ", ".join(f"`{p}`" for p in record.scope), ""]
    if record.status == AnswerStatus.NO_BASIS or record.reason:
        lines += [f"> **The documents hold no basis for this question — verify manually.** "
                  f"{record.reason}".rstrip(), ""]
    lines += _quote_lines(record)
    lines += [_marked(record, number), ""]
    stale = [s for s in cited if record.state(s.id) in STATE_WORDS]
    lines += [f"> **[^{number[s.id]}] {STATE_WORDS[record.state(s.id)]}** ({Path(s.doc_path).name})" for s in stale]
    if stale:
        lines.append("")
    if record.hallucinated:
        ids = ", ".join(f"[{cid}]" for cid in record.hallucinated)
        lines += [f"*Markers {ids} name no source given to the model.*", ""]
    lines += _checks(record)
    for s in cited:
        state = f"; {STATE_WORDS[record.state(s.id)]}" if record.state(s.id) in STATE_WORDS else ""
        lines += [
            f"[^{number[s.id]}]: {_where(s)} — sha256 {s.doc_id}, version {s.version}, chunk {s.chunk_id}{state}",
            "",
            _quote(s.text),
            "",
        ]
    lines.append(f"_Model: {record.model_id or 'none'}; answer {record.answer_id}; {record.created_at}_")
    return "\n".join(lines) + "\n"


def export_conversation(turns: list[SavedAnswer], fmt: str = "markdown") -> str:
    """A conversation's answers (oldest first): Markdown, one section a turn with its own
    footnotes (numbered "turn.n" so that they stay apart), or a JSON list of audit records."""
    if fmt == "json":
        return json.dumps([audit_record(t) for t in turns], ensure_ascii=False, indent=2) + "\n"
    parts = []
    for number, turn in enumerate(turns, start=1):
        text = re.sub(r"\[\^(\d+)\]", rf"[^{number}.\1]", export_markdown(turn))
        parts.append(text.replace("# ", f"# {number}. ", 1) if text.startswith("# ") else text)
    return "\n---\n\n".join(parts)
