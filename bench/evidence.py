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
the old prompt's) and both halves are printed; quote the held-out one.

    FOLIO_HOME=... .venv/bin/python bench/evidence.py --db /tmp/corpus.duckdb
        [--budgets 120,160,200,240,300,400] [--sources 5]
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


def load_questions() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in ("corpus_en.json", "corpus_zh.json"):
        for q in json.loads((DATA / name).read_text(encoding="utf-8"))["questions"]:
            out.append({**q, "half": split_half(q.get("id", ""), q["question"])})
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
    args = parser.parse_args()
    from llama_cpp import Llama

    from desktop_app.core.models.catalog import resolve_answer_model
    llm = Llama(model_path=str(resolve_answer_model("default")), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    kb = open_library(args.db, args.embedder)
    budgets = [int(b) for b in args.budgets.split(",")]
    rows = []
    for q in load_questions():
        retrieval = kb.retriever.search(q["question"], args.sources)
        passages = list(retrieval.passages)
        old = sources_text(q["question"], passages)
        row = {"half": q["half"], "old": (holds(old, q["answer"]), count(old))}
        for budget in budgets:
            kept = evidence.select(q["question"], passages, budget_tokens=budget, count_tokens=count)
            text = sources_text(q["question"], kept)
            row[budget] = (holds(text, q["answer"]), count(text))
        rows.append(row)
    chosen: int | None = None
    for half in ("tune", "held"):
        part = [r for r in rows if r["half"] == half]
        print(f"{half} half: n={len(part)}")
        old_share = sum(r["old"][0] for r in part) / len(part)
        print(f"  old (whole chunks)  holds {old_share:6.1%}  median source tokens "
              f"{statistics.median(r['old'][1] for r in part):5.0f}")
        for budget in budgets:
            share = sum(r[budget][0] for r in part) / len(part)
            tokens = statistics.median(r[budget][1] for r in part)
            print(f"  evidence {budget:4d}       holds {share:6.1%}  median source tokens {tokens:5.0f}")
            if half == "tune" and chosen is None and share >= old_share - 0.02:
                chosen = budget
    print(f"chosen on the tuning half: {chosen} (evidence.EVIDENCE_TOKENS = {evidence.EVIDENCE_TOKENS})")


if __name__ == "__main__":
    main()
