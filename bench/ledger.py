"""Where each answer is lost: the loss ledger, without a model (minutes) or with one.

For every question with a known answer in the labelled sets (bench/data/eval_{en,de,zh}.json
over ../shared/corpus, bench/eval_sets.py; split by id: odd = tuning, even = held out) it
follows the path an answer takes and says where the answer was lost:

- ``page``: no source comes from a page that states the answer (search lost it);
- ``source``: the page was retrieved but the answering sentence is in no source the model
  would be given (the right page, the wrong chunk);
- ``finder``: it is in a source, but the answer finder did not quote it;
- ``read``: quoted, but the quote is not whole in what the model reads (must be zero);
- ``kept``: the quote holds the answering sentence and the model reads it.

"The answering sentence" is the question's ``evidence`` (copied from the page); a source
holds it when the normalised evidence is inside the normalised source text, a quote when
it holds at least 60% of the evidence's terms. The quote *holds the answer* when it holds
every keyword of the known answer: each number (thousands separators and trailing zeros
aside), each Latin-script content word (stemmed), and for Chinese 60% of the answer's
character bigrams. Near-domain unanswerable questions (``-u-``) count how often a quote is
shown anyway (the gate's refusals show none).

    FOLIO_MODELS_DIR=... .venv/bin/python bench/ledger.py --db /tmp/corpus.duckdb
        [--half tune|held|both] [--languages en,de,zh] [--show-misses] [--min-score X]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import eval_sets  # noqa: E402

from desktop_app.core.answer import evidence, finder, gate  # noqa: E402
from desktop_app.core.text import words as termlib  # noqa: E402
from desktop_app.core.types import Found, Passage, Quote  # noqa: E402

STAGES = ("page", "source", "finder", "read", "kept")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUMBER.findall(eval_sets.normalise(text)):
        n = m.replace(",", "")
        if "." in n:
            n = n.rstrip("0").rstrip(".")
        out.add(n)
    return out


def _bigrams(text: str) -> set[str]:
    runs = re.findall(r"[\u3400-\u9fff]+", text)
    return {run[i:i + 2] for run in runs for i in range(len(run) - 1)} | {r for r in runs if len(r) == 1}


def holds_answer(text: str, answer: str) -> bool:
    """Every keyword of ``answer`` in ``text`` (see the module's docstring)."""
    norm = eval_sets.normalise(text)
    if not _numbers(answer) <= _numbers(norm):
        return False
    latin = re.sub(r"[\u3400-\u9fff]", " ", answer)
    words = {t for t in termlib.tokenize(latin) if not t.isdigit() and not _CJK.search(t)}
    have = set(termlib.tokenize(norm))
    if not words <= have:
        return False
    grams = _bigrams(answer)
    return not grams or len(grams & _bigrams(norm)) >= 0.6 * len(grams)


def holds_evidence(text: str, items: tuple[str, ...]) -> bool:
    norm = eval_sets.normalise(text)
    return any(eval_sets.normalise(e) in norm for e in items)


def quotes_evidence(quote: str, items: tuple[str, ...]) -> bool:
    have = set(termlib.tokenize(quote))
    for e in items:
        want = set(termlib.tokenize(e))
        if want and len(want & have) >= 0.6 * len(want):
            return True
    return False


@dataclass
class Row:
    q: eval_sets.Question
    stage: str = ""
    quoted: bool = False
    holds: bool = False  # the quote holds the answer
    refused: bool = False
    quote: str = ""
    find_ms: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)


def run_question(q: eval_sets.Question, retriever: Any, page_finder: finder.PageFinder, k: int) -> Row:
    row = Row(q)
    retrieval = retriever.search(q.question, k)
    language = gate.language_of(retrieval)
    refused = gate.refusal(retrieval)
    row.refused = refused is not None
    started = time.perf_counter()
    found = Found() if refused else page_finder.find(q.question, language, retrieval.passages)
    quotes: tuple[Quote, ...] = found.quotes
    row.find_ms = (time.perf_counter() - started) * 1000
    row.quoted = bool(quotes)
    row.quote = " | ".join(qt.text for qt in quotes)
    if not q.answerable:
        return row
    row.holds = any(holds_answer(qt.text, q.answer) for qt in quotes) or (
        len(quotes) > 1 and holds_answer(" ".join(qt.text for qt in quotes), q.answer))
    passages, must = finder.with_quotes(retrieval.passages, found)
    read = evidence.select(q.question, passages, must=must)
    on_page = [p for p in retrieval.passages if Path(p.doc_path).name == q.file and p.page in q.pages]
    if not on_page:
        row.stage = "page"
    elif not any(holds_evidence(p.text, q.evidence) for p in passages):
        row.stage = "source"
    elif not any(quotes_evidence(qt.text, q.evidence) for qt in quotes):
        row.stage = "finder"
    elif not all(any(" ".join(qt.text.split()) in " ".join(evidence.evidence_text(p).split()) for p in read)
                 for qt in quotes):
        row.stage = "read"  # a quote the model does not read whole (must never happen)
    else:
        row.stage = "kept"
    # Before the finder: was the sentence in a retrieved chunk at all?
    row.notes["in_chunk"] = any(holds_evidence(p.text, q.evidence) for p in retrieval.passages)
    row.notes["read_before"] = any(holds_evidence(evidence.evidence_text(p), q.evidence)
                                   for p in evidence.select(q.question, retrieval.passages))
    row.notes["read_after"] = any(holds_evidence(evidence.evidence_text(p), q.evidence) for p in read)
    return row


def _share(rows: list[Row], test: Any) -> str:
    return f"{sum(1 for r in rows if test(r))}/{len(rows)}" if rows else "-"


def report(rows: list[Row], title: str) -> None:
    answerable = [r for r in rows if r.q.answerable]
    unanswerable = [r for r in rows if not r.q.answerable]
    stages = Counter(r.stage for r in answerable)
    paged = [r for r in answerable if r.stage != "page"]
    print(f"\n{title}: {len(answerable)} answerable, {len(unanswerable)} near-domain unanswerable")
    print("  lost at:  " + "  ".join(f"{s} {stages.get(s, 0)}" for s in STAGES))
    print(f"  sentence in a retrieved chunk (before the finder): {_share(answerable, lambda r: r.notes.get('in_chunk'))}")
    print(f"  sentence in a source, page retrieved: {_share(paged, lambda r: r.stage in ('finder', 'read', 'kept'))}")
    print(f"  model reads the sentence: before {_share(answerable, lambda r: r.notes.get('read_before'))}"
          f"  after {_share(answerable, lambda r: r.notes.get('read_after'))}")
    print(f"  quote holds the answer: {_share(answerable, lambda r: r.holds)}"
          f"  (quoted {_share(answerable, lambda r: r.quoted)})")
    print(f"  unanswerable with no quote: {_share(unanswerable, lambda r: not r.quoted)}"
          f"  (gate refused {_share(unanswerable, lambda r: r.refused)})")
    times = [r.find_ms for r in rows if r.find_ms]
    if times:
        print(f"  finder ms: median {statistics.median(times):.0f}, max {max(times):.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="library of ../shared/corpus (built if missing)")
    parser.add_argument("--half", choices=("tune", "held", "both"), default="both")
    parser.add_argument("--languages", default="en,de,zh")
    parser.add_argument("--sources", type=int, default=5)
    parser.add_argument("--min-score", type=float, default=finder.MIN_SCORE)
    parser.add_argument("--no-meaning", action="store_true", help="the finder's rules alone, no embedder")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--json", type=Path, help="write every row here")
    args = parser.parse_args()

    from retrieval import _embedder, ensure_library

    from desktop_app.core.search import glossary
    from desktop_app.core.search.retrieve import Retriever

    embedder = _embedder("default")
    store = ensure_library(args.db, eval_sets.CORPUS, embedder)
    retriever = Retriever(store, embedder, glossary=glossary.load_default())
    page_finder = finder.PageFinder(store, None if args.no_meaning else embedder, min_score=args.min_score)
    halves = ("tune", "held") if args.half == "both" else (args.half,)
    by_half: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for language in args.languages.split(","):
        for q in eval_sets.load(language):
            h = eval_sets.half(q)
            if h in halves:
                by_half[(h, language)].append(run_question(q, retriever, page_finder, args.sources))
    for (h, language), rows in sorted(by_half.items()):
        report(rows, f"{language} {h}")
        if args.show_misses:
            for r in rows:
                if r.q.answerable and (r.stage != "kept" or not r.holds):
                    print(f"    {r.q.id} [{r.stage}{' holds' if r.holds else ''}] {r.q.question[:70]}\n"
                          f"       answer: {r.q.answer[:80]}\n       quote: {r.quote[:200]}")
                if not r.q.answerable and r.quoted:
                    print(f"    {r.q.id} [quoted] {r.q.question[:70]}\n       quote: {r.quote[:160]}")
    for h in halves:
        report([r for (hh, _), rows in by_half.items() if hh == h for r in rows], f"all languages, {h}")
    if args.json:
        args.json.write_text(json.dumps([{"id": r.q.id, "stage": r.stage, "quoted": r.quoted, "holds": r.holds,
                                          "refused": r.refused, "quote": r.quote, **r.notes} for rows in by_half.values()
                                         for r in rows], ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Passage", "holds_answer", "main"]
