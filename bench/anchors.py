"""The gate's anchors (core/text/anchors.py) over every question set, retrieval only.

For each set and half (ids ending in an odd number: tuning; even: held-out), how many
questions the anchor rules refuse (a number no passage states, a name the library never
mentions), with the ids, the anchors and the question, so that a rule is chosen on the
tuning half and the held-out half is quoted::

    .venv/bin/python bench/anchors.py --corpus-db /tmp/corpus.duckdb \\
        --fb-db /tmp/financebench.duckdb --mm-db /tmp/mmlongbench.duckdb [--half tune]

Each library is one built by ``folio index`` over ../shared/corpus,
../shared/qa/financebench/pdfs and ../shared/qa/mmlongbench-doc/documents (any may be left
out). FinanceBench and MMLongBench-Doc questions come from bench/trust.py (``fb`` and
``mm-text`` answerable, ``mm-none`` "Not answerable").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gate  # noqa: E402
import trust  # noqa: E402
from retrieval import half  # noqa: E402

from desktop_app.core.settings import Settings  # noqa: E402


def questions(which: str) -> list[tuple[str, str, str]]:
    """(id, category, question) of one set: "corpus", "fb" or "mm"."""
    if which == "corpus":
        return [(r["id"], f"corpus-{r['lang']}-{r['kind']}", r["question"]) for r in gate.load(["en", "de", "zh"])]
    wanted = ("fb",) if which == "fb" else ("mm-text", "mm-none")
    return [(c.qid, c.category, c.question) for c in trust.load_cases() if c.category in wanted]


def run(db: Path, which: str, halves: list[str]) -> None:
    store, retriever, _ = gate.open_library(db)
    k = Settings().sources_per_answer
    groups: dict[tuple[str, str], list[Any]] = {}
    for qid, category, question in questions(which):
        if half(qid) not in halves:
            continue
        found = retriever.search(question, k)
        refused = (qid, found.unmatched, found.unmentioned, question[:90]) if found.unmatched or found.unmentioned else None
        groups.setdefault((category, half(qid)), []).append(refused)
    store.close()
    for (category, which_half), rows in sorted(groups.items()):
        hits = [r for r in rows if r is not None]
        print(f"{category:14} {which_half}: refused by the anchors {len(hits)} of {len(rows)}")
        for qid, numbers, names, question in hits:
            print(f"    {qid}: numbers {list(numbers)} names {list(names)} | {question}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus-db", type=Path)
    parser.add_argument("--fb-db", type=Path)
    parser.add_argument("--mm-db", type=Path)
    parser.add_argument("--half", choices=("tune", "held", "both"), default="both")
    args = parser.parse_args()
    halves = ["tune", "held"] if args.half == "both" else [args.half]
    for which, db in (("corpus", args.corpus_db), ("fb", args.fb_db), ("mm", args.mm_db)):
        if db is not None:
            run(db, which, halves)


if __name__ == "__main__":
    main()
