"""Old path vs new path through the real facade (bench/answer.py --facade, bench/citing.py
--folio): retrieval, evidence, prompt, the model in its worker process, the citation
tracker and the verifier, all in one process, as ``KnowledgeBase.ask`` runs them.

- old path: whole chunks (Settings.evidence_tokens = 0), no prompt-lookup draft;
- new path: the Settings defaults (evidence.select under EVIDENCE_TOKENS, the draft as
  Settings.prompt_lookup says).

Questions: bench/data/corpus_en.json and corpus_zh.json (hand-written, with the file and
pages that hold each answer) over ../shared/corpus indexed into ``--db``; the held-out half
by default (bench/evidence.py's split). For each question the two paths run back to back,
the order alternating, with the same model, threads and KV cache state (the fixed head of
the prompt cached, as after the window's priming), so the machine's load hits both alike.

Per answer: seconds to the sources on screen (AnswerStarted), to the first token and to
AnswerFinished; prompt tokens and cached tokens (AnswerFinished.stats); and the citation
figures of bench/citing.py over Folio's own retrieval, refusals counted: the share of the
answer's sentences with a valid marker, whether it cites the page that holds the answer,
and the share of its valid citations that point at that page.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from evidence import load_questions  # noqa: E402

from desktop_app.core.answer import prompts  # noqa: E402
from desktop_app.core.text.sentences import split_sentences  # noqa: E402
from desktop_app.core.text.words import question_language  # noqa: E402


def answer_row(question: dict[str, Any], events: list[tuple[float, Any]], start: float) -> dict[str, Any]:
    """The figures of one answer from its timed events."""
    started = first = finished_at = None
    sources: dict[str, Any] = {}
    text, citations, hallucinated, stats, no_basis = "", {}, [], {}, False
    for at, event in events:
        kind = event.event
        if kind == "answer_started" and started is None:
            started = at - start
            sources = {s.id: s for s in event.sources}
        elif kind == "token" and event.text and first is None:
            first = at - start
        elif kind == "answer_finished":
            finished_at = at - start
            text, citations, hallucinated, stats = event.text, event.citations, event.hallucinated, event.stats
        elif kind == "no_basis":
            no_basis = True
    refused = no_basis or any(p.lower().rstrip(".。") in text.lower() for p in prompts.NO_ANSWER.values())
    valid = {cid: spans for cid, spans in citations.items() if cid not in hallucinated and cid in sources}
    sentences = [s for s in split_sentences(text) if any(ch.isalnum() for ch in s.text)]
    marked = sum(1 for s in sentences
                 if any(s.start <= span[0] < s.end + 1 for spans in valid.values() for span in spans))
    on_page = [cid for cid in valid
               if Path(sources[cid].doc_path).name == question["file"] and sources[cid].page in question["pages"]]
    cites = sum(len(v) for v in valid.values())
    cites_on_page = sum(len(valid[cid]) for cid in on_page)
    return {
        "question": question["question"], "id": question.get("id", ""), "half": question["half"],
        "sources_s": started, "first_token_s": first, "total_s": finished_at,
        "prompt_tokens": stats.get("prompt_tokens", 0), "cached_tokens": stats.get("cached_tokens", 0),
        "tokens_per_s": stats.get("tokens_per_s", 0.0), "draft_accept_rate": stats.get("draft_accept_rate", 0.0),
        "completion_tokens": stats.get("completion_tokens", 0),
        "refused": refused, "sentences": len(sentences), "marked": marked,
        "marked_share": (marked / len(sentences)) if sentences and not refused else 0.0,
        "cites_page": bool(on_page), "citations": cites, "citations_on_page": cites_on_page,
        "sources": len(sources), "text": text,
    }


async def _ask(kb: Any, question: dict[str, Any]) -> dict[str, Any]:
    events: list[tuple[float, Any]] = []
    start = time.perf_counter()
    async for event in kb.answers.ask(question["question"]):
        events.append((time.perf_counter(), event))
    return answer_row(question, events, start)


def run(db: Path, *, model: str = "default", threads: int = 2, half: str = "held", limit: int | None = None,
        embedder: str = "default", max_tokens: int | None = None, rows_out: Path | None = None,
        evidence_tokens: int | None = None, prompt_lookup: int | None = None) -> list[dict[str, Any]]:
    """Ask every question on both paths, interleaved; returns one row per answer (with
    ``path`` "old" or "new") and appends each to ``rows_out`` as it comes."""
    from desktop_app.core.settings import Settings
    from desktop_app.services.knowledge_base import KnowledgeBase

    # No judge: it runs after AnswerFinished and evicts the cached head the next question reads.
    new = Settings(answer_model=model, threads=threads, embedder=embedder, judge=False)
    if max_tokens:
        new = new.replace(max_tokens=max_tokens)
    if evidence_tokens is not None:
        new = new.replace(evidence_tokens=evidence_tokens)
    if prompt_lookup is not None:
        new = new.replace(prompt_lookup=prompt_lookup)
    old = new.replace(evidence_tokens=0, prompt_lookup=0)
    questions = [q for q in load_questions(["corpus"]) if half == "all" or q["half"] == half][:limit]
    questions.sort(key=lambda q: question_language(q["question"]))  # one switch of head
    rows: list[dict[str, Any]] = []

    async def main() -> None:
        kb_new = KnowledgeBase(db, new)
        # One model process when both paths decode alike; the draft needs its own.
        shared = new.prompt_lookup == old.prompt_lookup
        kb_old = KnowledgeBase(db, old, generator=kb_new.models.generator() if shared else None)
        kbs = {"old": kb_old, "new": kb_new}
        for kb in kbs.values():
            await asyncio.wrap_future(kb.models.prime_answer_model())
        language = ""
        for n, question in enumerate(questions):
            lang = question_language(question["question"])
            if lang != language:  # the head of this language's prompt cached, untimed, for both
                for kb in ([kb_new] if shared else list(kbs.values())):
                    generator = kb.models.generator()
                    head = prompts.build_prompt("", [], count_tokens=generator.count_tokens,
                                                context_tokens=generator.context_tokens,
                                                answer_tokens=new.max_tokens, language=lang)
                    generator.prime(head.messages)
                language = lang
            for path in (("old", "new") if n % 2 == 0 else ("new", "old")):
                row = {"path": path, **await _ask(kbs[path], question)}
                rows.append(row)
                print(f"{n + 1:2d} {path}: sources {row['sources_s'] or 0:5.2f} s, first token "
                      f"{row['first_token_s'] or float('nan'):6.1f} s, whole {row['total_s'] or float('nan'):6.1f} s, "
                      f"prompt {row['prompt_tokens']} ({row['cached_tokens']} cached), "
                      f"{row['tokens_per_s']:.1f} tok/s, marked {row['marked']}/{row['sentences']}, "
                      f"page {'yes' if row['cites_page'] else 'no'}{' REFUSED' if row['refused'] else ''}"
                      f" | {question['question'][:40]}", flush=True)
                if rows_out is not None:
                    with rows_out.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        for kb in kbs.values():
            await kb.close()

    asyncio.run(main())
    return rows


def _median(rows: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in rows if r[key] is not None]
    return statistics.median(values) if values else float("nan")


def paired(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The old and new rows of the questions both paths answered, in the same order."""
    by = {(r["path"], r["question"]): r for r in rows}
    both = [q for (p, q) in by if p == "old" and ("new", q) in by]
    return [by[("old", q)] for q in both], [by[("new", q)] for q in both]


def timing_report(rows: list[dict[str, Any]]) -> str:
    old, new = paired(rows)
    # Timing only where the model ran on both paths (the evidence gate refuses some
    # questions before any prompt is built: nothing to time there).
    ran = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a["prompt_tokens"] and b["prompt_tokens"]]
    old, new = [old[i] for i in ran], [new[i] for i in ran]
    n = len(old)
    if not n:
        return "no question reached the model on both paths"
    lines = [f"n={n} questions the model answered on both paths, old and new path interleaved"]
    for key, label in (("sources_s", "sources on screen"), ("first_token_s", "first token"), ("total_s", "whole answer")):
        o, w = _median(old, key), _median(new, key)
        ratios = [b[key] / a[key] for a, b in zip(old, new, strict=True) if a[key] and b[key]]
        lines.append(f"  {label:<18} median old {o:7.2f} s  new {w:7.2f} s  ratio of medians {w / o:.2f}"
                     f"  (median per-question ratio {statistics.median(ratios) if ratios else float('nan'):.2f})")
    for key in ("prompt_tokens", "cached_tokens", "completion_tokens", "tokens_per_s"):
        lines.append(f"  {key:<18} median old {_median(old, key):7.1f}    new {_median(new, key):7.1f}")
    read_old = statistics.median(r["prompt_tokens"] - r["cached_tokens"] for r in old) if old else float("nan")
    read_new = statistics.median(r["prompt_tokens"] - r["cached_tokens"] for r in new) if new else float("nan")
    lines.append(f"  {'tokens read':<18} median old {read_old:7.1f}    new {read_new:7.1f} (prompt minus cached)")
    lines.append(f"  draft accept rate  median new {_median(new, 'draft_accept_rate'):.0%}")
    return "\n".join(lines)


def quality_report(rows: list[dict[str, Any]]) -> str:
    old, new = paired(rows)
    lines = [f"n={len(old)} questions (Folio's own retrieval; refusals count as answers without markers)"]
    for name, part in (("old", old), ("new", new)):
        if not part:
            continue
        refused = sum(r["refused"] for r in part)
        marked = statistics.mean(r["marked_share"] for r in part)
        pages = sum(r["cites_page"] for r in part) / len(part)
        cites = sum(r["citations"] for r in part)
        on_page = sum(r["citations_on_page"] for r in part) / cites if cites else 0.0
        lines.append(f"  {name}: sentences with a valid marker {marked:6.1%}, answers citing the evidence page "
                     f"{pages:6.1%}, citations on the evidence page {on_page:6.1%} ({cites} citations), "
                     f"refused {refused}/{len(part)}")
    return "\n".join(lines)
