"""Saved answers: staleness of their sources, and export as Markdown or JSON. Qt-free.

An answer keeps the chunk ids and document sha256 it cited. Reopening it compares
them with what the library and the disk hold now: the same bytes (current), other
bytes at that path (changed), or nothing (removed). A changed source is never shown
as if the new version said the same thing.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from desktop_app.core.ids import sha256_file
from desktop_app.core.store import Store
from desktop_app.core.types import SourceState

logger = logging.getLogger(__name__)


def source_state(store: Store, chunk_id: str, doc_id: str) -> SourceState:
    rows = store.query(
        "SELECT path, size, mtime FROM files WHERE doc_id = ? AND NOT removed ORDER BY path", [doc_id]
    )
    for path, size, mtime in rows:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        if stat.st_size == size and stat.st_mtime == mtime:
            return SourceState.CURRENT
        if sha256_file(path) == doc_id:
            return SourceState.CURRENT
    # Not found as it was. Did its path get other bytes, or did it go away?
    doc = store.query("SELECT path FROM documents WHERE doc_id = ?", [doc_id])
    candidates = [r[0] for r in rows] + ([doc[0][0]] if doc else [])
    for path in candidates:
        if Path(path).exists():
            return SourceState.CHANGED
    return SourceState.REMOVED


def annotate_staleness(store: Store, record: dict[str, Any]) -> dict[str, Any]:
    states: dict[str, str] = {}
    for source in record.get("sources", []):
        state = source_state(store, source["chunk_id"], source["doc_id"])
        source["state"] = str(state)
        states[source["id"]] = str(state)
    record["source_states"] = states
    return record


def export_json(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, indent=2)


def export_markdown(record: dict[str, Any]) -> str:
    """The answer with its markers turned into footnotes that quote the passages."""
    text: str = record["text"]
    sources = {s["id"]: s for s in record.get("sources", [])}
    spans: list[tuple[int, int, str]] = []
    for cid, cspans in record.get("citations", {}).items():
        for start, end in cspans:
            spans.append((start, end, cid))
    spans.sort()
    out: list[str] = []
    pos = 0
    used: list[str] = []
    for start, end, cid in spans:
        if start < pos:
            continue
        out.append(text[pos:start])
        if cid in sources:
            if cid not in used:
                used.append(cid)
            out.append(f"[^{cid}]")
        else:
            out.append(f"~~{text[start:end]}~~ (not among the sources)")
        pos = end
    out.append(text[pos:])
    lines = [f"# {record['question']}", "", "".join(out).strip(), ""]
    verdicts = record.get("claims", [])
    if verdicts:
        counts: dict[str, int] = {}
        for claim in verdicts:
            counts[claim["verdict"]] = counts.get(claim["verdict"], 0) + 1
        lines.append("Checked by Folio: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
        lines.append("")
    for cid in used:
        s = sources[cid]
        where = f"{Path(s['doc_path']).name}, p. {s['page_label']}"
        if s.get("section"):
            where += f", {s['section']}"
        state = s.get("state")
        if state and state != "current":
            where += f" — source {state} since this answer"
        quote = " ".join(s["text"].split())
        lines.append(f"[^{cid}]: {where} (sha256 {s['doc_id'][:12]}…): \"{quote}\"")
    lines.append("")
    lines.append(f"_Model: {record.get('model_id', '')}; answer id {record['answer_id']}; {record.get('created_at', '')}_")
    return "\n".join(lines) + "\n"
