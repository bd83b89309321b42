"""Follow-up questions: does a follow-up find its page with the conversation?

Over ``bench/data/followup_pairs.jsonl`` (a first question, an elliptical follow-up, a
hand-written standalone version of the follow-up, and the file and pages of ../shared/corpus
that answer the follow-up; English, Chinese, German), recall@5 of ``Retriever.search`` for:

- ``folio``: the follow-up as Folio searches it after the first question
  (core/answer/followup.py's standalone question);
- ``standalone``: the hand-written standalone question;
- ``words``: the follow-up's words alone (what Folio searched before conversations);

per language and per half (a stable hash of the id: sha256's first byte odd "tune", even
"held"; rules are chosen on "tune", figures quoted from "held"), with the ratios
folio ÷ standalone and words ÷ standalone. Also: how many questions of the existing
question sets (bench/data/corpus_*.json, eval_*.json) the rules would take for a follow-up
when asked after another question, and the rules' time per question.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/followup.py [--db /tmp/corpus.duckdb]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from retrieval import ensure_library  # noqa: E402

from desktop_app.core.answer import followup  # noqa: E402
from desktop_app.core.search.retrieve import Retriever  # noqa: E402

DATA = REPO / "bench" / "data"
SHARED = REPO.parent / "shared"
WAYS = ("folio", "standalone", "words")
LANGUAGES = ("en", "zh", "de")


def half(pair_id: str) -> str:
    """"tune" or "held", by a stable hash of the id."""
    return "tune" if hashlib.sha256(pair_id.encode("utf-8")).digest()[0] % 2 else "held"


def pairs(path: Path = DATA / "followup_pairs.jsonl") -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _hit(passages: Sequence[Any], pair: dict[str, Any], k: int = 5) -> bool:
    return any(Path(p.doc_path).name == pair["file"] and p.page in pair["pages"] for p in passages[:k])


def existing_questions() -> list[str]:
    out = []
    for name in ("corpus_en", "corpus_zh", "eval_en", "eval_zh", "eval_de"):
        path = DATA / f"{name}.json"
        if path.is_file():
            out += [q["question"] for q in json.loads(path.read_text(encoding="utf-8"))["questions"]]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, default=Path("/tmp/folio-bench-retrieval/corpus.duckdb"),
                        help="../shared/corpus indexed (indexed here first when missing)")
    parser.add_argument("--show", action="store_true", help="print each pair's searched text and hits")
    args = parser.parse_args(argv)
    from desktop_app.core.models.catalog import open_embedder

    embedder = open_embedder("default")
    store = ensure_library(args.db, SHARED / "corpus", embedder)
    retriever = Retriever(store, embedder)
    retriever.search("warm up the caches", 5)
    rows = []
    for pair in pairs():
        started = time.perf_counter()
        folio = followup.standalone(pair["follow_up"], [pair["first"]])
        rule_s = time.perf_counter() - started
        queries = {"folio": folio.searched, "standalone": pair["standalone"], "words": pair["follow_up"]}
        hits = {way: _hit(retriever.search(text, 5).passages, pair) for way, text in queries.items()}
        rows.append({"pair": pair, "half": half(pair["id"]), "hits": hits, "rule": folio.rule,
                     "rule_s": rule_s, "searched": folio.searched})
        if args.show:
            marks = " ".join(f"{way}={'Y' if hit else '-'}" for way, hit in hits.items())
            print(f"{pair['id']} [{half(pair['id'])}] {folio.rule or 'as-is':<10} {marks}  {folio.searched}")
    store.close()
    print(f"\n{'half':<5} {'lang':<4} {'n':>3}  {'folio':>6} {'stand.':>6} {'words':>6}  "
          f"{'folio/stand.':>12} {'words/stand.':>12}  rewritten")
    for which in ("tune", "held", "both"):
        for language in (*LANGUAGES, "all"):
            group = [r for r in rows if which in ("both", r["half"]) and language in ("all", r["pair"]["language"])]
            if not group:
                continue
            recall = {way: sum(r["hits"][way] for r in group) / len(group) for way in WAYS}
            ratio = recall["folio"] / recall["standalone"] if recall["standalone"] else float("nan")
            words = recall["words"] / recall["standalone"] if recall["standalone"] else float("nan")
            rewritten = sum(1 for r in group if r["rule"])
            print(f"{which:<5} {language:<4} {len(group):>3}  {recall['folio']:>6.2f} {recall['standalone']:>6.2f}"
                  f" {recall['words']:>6.2f}  {ratio:>12.2f} {words:>12.2f}  {rewritten}/{len(group)}")
    taken = []
    previous = [p["first"] for p in pairs()]
    existing = existing_questions()
    for n, question in enumerate(existing):
        result = followup.standalone(question, [previous[n % len(previous)]])
        if result.rewritten:
            taken.append(question)
    print(f"\nexisting questions taken for a follow-up when asked after another question:"
          f" {len(taken)}/{len(existing)}")
    for question in taken:
        print(f"  {question}")
    print(f"rules' time per question: median {statistics.median(r['rule_s'] for r in rows) * 1e6:.0f} µs,"
          f" max {max(r['rule_s'] for r in rows) * 1e6:.0f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
