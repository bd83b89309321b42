"""How much evidence does a prompt need? Chooses evidence.EVIDENCE_TOKENS without a model.

For each corpus question (bench/data/corpus_en.json and corpus_zh.json, over
../shared/corpus indexed into ``--db``) Folio's own retrieval gives the passages an answer
would get (sources_per_answer of them); the bench then measures, for the old prompt
(whole chunks, each cut to 600 characters / 200 tokens around the question's terms,
prompts.format_source) and for evidence.select at several budgets:

- holds: the share of questions whose gold answer is in what the model would read (at
  least half of the gold answer's terms, or its figures, in the prompt's sources);
- tokens: the median tokens of the sources (the answer model's own tokenizer).

Questions are split by id into a tuning half and a held-out half (bench/retrieval.py's rule); the
budget is chosen on the tuning half (the smallest whose "holds" is within 2 points of
the old prompt's) and both halves are printed; quote the held-out one. Each budget is
measured with this version's order of units and the previous one (``context_first``).

    FOLIO_HOME=... .venv/bin/python bench/evidence.py --db /tmp/corpus.duckdb
        [--budgets 120,160,200,240,300,400] [--sources 5] [--sets corpus,eval]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.core.answer import evidence, prompts  # noqa: E402
from desktop_app.core.answer.citations import SourceMap  # noqa: E402
from desktop_app.core.text import words as termlib  # noqa: E402
from desktop_app.core.types import Passage  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
_FIGURE = re.compile(r"\d[\d,.]*\d|\d")


def split_half(qid: str, question: str) -> str:
    """'tune' or 'held' as bench/retrieval.py splits its sets: by the id's trailing number
    (odd: tuning); a question without an id by a hash of its text."""
    digits = re.search(r"(\d+)$", qid or "")
    if digits:
        return "tune" if int(digits.group(1)) % 2 else "held"
    return "tune" if hashlib.sha256(question.encode("utf-8")).digest()[0] % 2 == 0 else "held"


def load_questions(sets: list[str]) -> list[dict[str, Any]]:
    """``corpus``: bench/data/corpus_{en,zh}.json; ``eval``: the answerable questions of
    bench/data/eval_{en,de,zh}.json (bench/eval_sets.py, split by id the same way)."""
    out: list[dict[str, Any]] = []
    if "corpus" in sets:
        for name in ("corpus_en.json", "corpus_zh.json"):
            for q in json.loads((DATA / name).read_text(encoding="utf-8"))["questions"]:
                out.append({**q, "set": "corpus", "half": split_half(q.get("id", ""), q["question"])})
    if "eval" in sets:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import eval_sets

        for lang in eval_sets.LANGUAGES:
            for e in eval_sets.load(lang):
                if e.answerable:
                    out.append({"question": e.question, "answer": e.answer, "set": f"eval_{lang}",
                                "half": eval_sets.half(e)})
    return out


def holds(text: str, gold: str) -> bool:
    """Whether ``text`` holds the gold answer: all its figures, or half of its terms."""
    norm = " ".join(text.split())
    figures = [f.replace(",", "") for f in _FIGURE.findall(gold)]
    if figures and all(f in norm.replace(",", "") for f in figures):
        return True
    wanted = set(termlib.tokenize(gold))
    if not wanted:
        return gold.strip() in norm
    return len(wanted & set(termlib.tokenize(norm))) >= 0.5 * len(wanted)


def open_library(db: Path, embedder: str) -> Any:
    from desktop_app.core.settings import Settings
    from desktop_app.services.knowledge_base import KnowledgeBase

    return KnowledgeBase(db, Settings(embedder=embedder))


def sources_text(question: str, passages: list[Passage]) -> str:
    source_map = SourceMap.build(passages)
    return "\n\n".join(prompts.format_source(source_map.marker(label), p, question)
                       for label, p in source_map.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--budgets", default="120,160,200,240,300,400")
    parser.add_argument("--sources", type=int, default=5)
    parser.add_argument("--embedder", default="default", help="the embedder the library was indexed with")
    parser.add_argument("--sets", default="corpus,eval", help="corpus, eval (bench/data/eval_*.json) or both")
    args = parser.parse_args()
    from llama_cpp import Llama

    from desktop_app.core.models.catalog import resolve_answer_model
    llm = Llama(model_path=str(resolve_answer_model("default")), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    kb = open_library(args.db, args.embedder)
    budgets = [int(b) for b in args.budgets.split(",")]
    rows = []
    for q in load_questions(args.sets.split(",")):
        retrieval = kb.parts.retriever.search(q["question"], args.sources)
        passages = list(retrieval.passages)
        old = sources_text(q["question"], passages)
        row = {"half": q["half"], "set": q["set"], "old": (holds(old, q["answer"]), count(old))}
        for budget in budgets:
            for name, first in (("", False), ("p", True)):  # this version's order; the previous one
                kept = evidence.select(q["question"], passages, budget_tokens=budget, count_tokens=count,
                                       context_first=first)
                text = sources_text(q["question"], kept)
                row[f"{name}{budget}"] = (holds(text, q["answer"]), count(text))
        rows.append(row)
    chosen: int | None = None
    for half in ("tune", "held"):
        part = [r for r in rows if r["half"] == half]
        print(f"{half} half: n={len(part)} (" + ", ".join(
            f"{s} {sum(r['set'] == s for r in part)}" for s in sorted({r['set'] for r in part})) + ")")
        old_share = sum(r["old"][0] for r in part) / len(part)
        print(f"  old (whole chunks)  holds {old_share:6.1%}  median source tokens "
              f"{statistics.median(r['old'][1] for r in part):5.0f}")
        for budget in budgets:
            for name, label in (("p", "previous order"), ("", "this order    ")):
                key = f"{name}{budget}"
                share = sum(r[key][0] for r in part) / len(part)
                tokens = statistics.median(r[key][1] for r in part)
                per_set = ", ".join(f"{s} {sum(r[key][0] for r in part if r['set'] == s)}"
                                    for s in sorted({r["set"] for r in part}))
                print(f"  evidence {budget:4d}, {label} holds {share:6.1%} ({per_set})"
                      f"  median source tokens {tokens:5.0f}")
                if half == "tune" and not name and chosen is None and share >= old_share - 0.03:
                    chosen = budget
    print(f"chosen on the tuning half: {chosen} (the smallest within 3 points of whole chunks;"
          f" evidence.EVIDENCE_TOKENS = {evidence.EVIDENCE_TOKENS})")


if __name__ == "__main__":
    main()
