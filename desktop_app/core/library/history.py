"""Saved answers: staleness of their sources, and export as Markdown or JSON. Qt-free.

An answer keeps the chunk ids and document sha256 it cited. Reopening it compares
them with what the library and the disk hold now: the same bytes (current), other
bytes at that path (changed), or nothing (removed). A changed source is never shown
as if the new version said the same thing.

The exports are the audit record: the JSON names the question, the answer, each citation
with its spans, chunk id, document sha256 and version and the verbatim passage, every
sentence's verdict and the model; the Markdown turns markers into footnotes that quote
the passages verbatim.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from desktop_app.core.ids import sha256_file
from desktop_app.core.library.store import Store
from desktop_app.core.types import CitationStyle, SourceState, Verdict

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


def annotate_staleness(store: Store, record: dict[str, Any]) -> dict[str, Any]:
    """Set ``state`` on each source of a saved answer and ``source_states`` (id -> state)."""
    states: dict[str, str] = {}
    by_doc: dict[str, SourceState] = {}
    hashes: dict[str, str] = {}
    for source in record.get("sources", []):
        doc_id = source["doc_id"]
        if doc_id not in by_doc:
            by_doc[doc_id] = source_state(store, source["chunk_id"], doc_id, hashes)
        source["state"] = str(by_doc[doc_id])
        states[source["id"]] = str(by_doc[doc_id])
    record["source_states"] = states
    return record


# --------------------------------------------------------------------------- audit record


def cited_ids(record: dict[str, Any]) -> list[str]:
    """Ids of valid citations (among the sources) in order of first appearance."""
    sources = {s["id"] for s in record.get("sources", [])}
    first: dict[str, int] = {}
    for cid, spans in record.get("citations", {}).items():
        if cid in sources and spans:
            first[cid] = min(int(s[0]) for s in spans)
    return sorted(first, key=first.__getitem__)


def audit_record(record: dict[str, Any]) -> dict[str, Any]:
    """The JSON export: what was asked, answered, cited (verbatim) and checked."""
    text: str = record.get("text", "")
    sources = {s["id"]: s for s in record.get("sources", [])}
    citations = []
    for cid in cited_ids(record):
        s = sources[cid]
        citations.append({
            "id": cid,
            "spans": [list(span) for span in record["citations"][cid]],
            "chunk_id": s["chunk_id"],
            "document": {
                "path": s["doc_path"], "title": s.get("doc_title", ""), "sha256": s["doc_id"],
                "version": s.get("version", 1), "state": s.get("state", ""),
            },
            "page": s["page"], "page_label": s.get("page_label", str(s["page"])),
            "section": s.get("section", ""),
            "char_start": s.get("char_start"), "char_end": s.get("char_end"),
            "passage": s["text"],
        })
    hallucinated = [
        {"id": cid, "spans": [list(span) for span in record.get("citations", {}).get(cid, [])]}
        for cid in record.get("hallucinated", [])
    ]
    verdicts = []
    for claim in record.get("claims", []):
        start, end = claim["sentence_span"]
        ids = list(claim.get("ids", []))
        verdicts.append({
            "sentence": text[start:end], "sentence_span": [start, end],
            "verdict": str(Verdict(claim["verdict"])), "ids": ids,
            "chunk_ids": [sources[i]["chunk_id"] for i in ids if i in sources],
            "score": claim.get("score", 0.0), "reason": claim.get("reason", ""),
            "suggested_chunk_id": claim.get("suggested"),
            "support_id": claim.get("support_id"), "support": claim.get("support", []),
            "quote": claim.get("quote", ""), "conflict": claim.get("conflict", ""),
        })
    return {
        "answer_id": record["answer_id"],
        "created_at": record.get("created_at", ""),
        "question": record["question"],
        "searched": record.get("searched") or record["question"],  # a follow-up as it was searched
        "conversation_id": record.get("conversation_id") or record["answer_id"],
        "answer": text,
        "status": record.get("status", ""),
        "no_basis_reason": record.get("reason") or None,
        "model_id": record.get("model_id", ""),
        "citation_style": record.get("style", CitationStyle.LABEL),
        "scope": list(record.get("scope", [])),  # asked within these paths (empty: everything)
        "citations": citations,
        "hallucinated": hallucinated,
        "verdicts": verdicts,
        "sources": [
            {"id": s["id"], "chunk_id": s["chunk_id"], "sha256": s["doc_id"],
             "version": s.get("version", 1), "path": s["doc_path"], "page": s["page"],
             "state": s.get("state", ""), "cited": s["id"] in {c["id"] for c in citations}}
            for s in record.get("sources", [])
        ],
    }


def export_json(record: dict[str, Any]) -> str:
    return json.dumps(audit_record(record), ensure_ascii=False, indent=2)


# --------------------------------------------------------------------------- Markdown


def _quote(text: str) -> str:
    """A verbatim passage as an indented block quote (continues the footnote)."""
    lines = text.replace("\r\n", "\n").strip("\n").split("\n")
    return "\n".join(f"    > {line}" if line.strip() else "    >" for line in lines)


def _where(source: dict[str, Any]) -> str:
    title = source.get("doc_title") or Path(source["doc_path"]).stem
    label = source.get("page_label") or str(source["page"])
    where = f"{title} (`{Path(source['doc_path']).name}`), p. {label}"
    if label != str(source["page"]):
        where += f" (page {source['page']} of the file)"
    if source.get("section"):
        where += f", {source['section']}"
    return where


def export_markdown(record: dict[str, Any]) -> str:
    """The answer with its markers turned into numbered footnotes that name the document,
    page and section and quote the passage verbatim; hallucinated markers struck through."""
    text: str = record["text"]
    audit = audit_record(record)
    number = {c["id"]: n for n, c in enumerate(audit["citations"], start=1)}
    marks = sorted(
        (int(s[0]), int(s[1]), cid)
        for cid, spans in record.get("citations", {}).items() for s in spans
    )
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
    lines = [f"# {record['question'].strip()}", ""]
    if audit["searched"].strip() != record["question"].strip():
        lines += [f"Searched for: {audit['searched'].strip()}", ""]
    if audit["scope"]:
        lines += ["Asked within: " + ", ".join(f"`{p}`" for p in audit["scope"]), ""]
    if record.get("status") == "no_basis" or audit["no_basis_reason"]:
        lines += [f"> **The documents hold no basis for this question — verify manually.** "
                  f"{audit['no_basis_reason'] or ''}".rstrip(), ""]
    lines += ["".join(out).strip(), ""]
    stale = [c for c in audit["citations"] if c["document"]["state"] in STATE_WORDS]
    for c in stale:
        lines.append(f"> **[^{number[c['id']]}] {STATE_WORDS[c['document']['state']]}** "
                     f"({Path(c['document']['path']).name})")
    if stale:
        lines.append("")
    if audit["hallucinated"]:
        ids = ", ".join(f"[{h['id']}]" for h in audit["hallucinated"])
        lines += [f"*Markers {ids} name no source given to the model.*", ""]
    if audit["verdicts"]:
        counts: dict[str, int] = {}
        for v in audit["verdicts"]:
            counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
        lines += ["## Checks", "", "Checked by Folio: "
                  + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())), ""]
        for v in audit["verdicts"]:
            if v["verdict"] in ("not_confirmed", "contradicted", "uncited"):
                said = f" The passage says: “{v['quote']}”" if v.get("quote") else ""
                lines.append(f"- “{' '.join(v['sentence'].split())}” — {VERDICT_NAMES[v['verdict']]}:"
                             f" {v['reason']}{said}")
        lines.append("")
    sources = {s["id"]: s for s in record.get("sources", [])}
    for c in audit["citations"]:
        doc = c["document"]
        state = f"; {STATE_WORDS[doc['state']]}" if doc["state"] in STATE_WORDS else ""
        lines += [
            f"[^{number[c['id']]}]: {_where(sources[c['id']])} — sha256 {doc['sha256']}, "
            f"version {doc['version']}, chunk {c['chunk_id']}{state}",
            "",
            _quote(c["passage"]),
            "",
        ]
    lines.append(f"_Model: {audit['model_id'] or 'none'}; answer {audit['answer_id']}; "
                 f"{audit['created_at']}_")
    return "\n".join(lines) + "\n"


def export_conversation(turns: list[dict[str, Any]], fmt: str = "markdown") -> str:
    """A conversation's answers (oldest first): Markdown, one section a turn with its own
    footnotes (numbered "turn.n" so that they stay apart), or a JSON list of audit records."""
    if fmt == "json":
        return json.dumps([audit_record(t) for t in turns], ensure_ascii=False, indent=2) + "\n"
    parts = []
    for number, turn in enumerate(turns, start=1):
        text = re.sub(r"\[\^(\d+)\]", rf"[^{number}.\1]", export_markdown(turn))
        parts.append(text.replace("# ", f"# {number}. ", 1) if text.startswith("# ") else text)
    return "\n---\n\n".join(parts)
