"""Chooses the answer finder's weights and threshold (core/answer/finder.py) on the tuning
half of the labelled questions, and prints both halves.

``dump`` runs search once per question over the corpus library and keeps every candidate
sentence of the retrieved pages with its rule features and its cosine with the question
(the real default embedder), so that ``tune`` can try weights in seconds: it simulates the
finder (the rules rank, the best ``EMBEDDED`` get their meaning, the best of those is the
quote unless it scores under the threshold) and counts, per language, the quotes that hold
the known answer (bench/ledger.py's rule) and the near-domain unanswerable questions left
without a quote. Coordinate search over each weight, tuning half only.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/finder_tune.py dump --db /tmp/corpus.duckdb --out /tmp/finder.pkl
    .venv/bin/python bench/finder_tune.py tune --dump /tmp/finder.pkl
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import eval_sets  # noqa: E402
from ledger import holds_answer, quotes_evidence  # noqa: E402

from desktop_app.core.answer import finder, gate  # noqa: E402


MEASURE = "evidence"  # a quote hits when it quotes the labelled sentence; "answer": holds the answer's keywords
DUMP_EMBEDDED = 48  # sentences per question embedded by the dump (the finder embeds finder.EMBEDDED)


def dump(args: argparse.Namespace) -> None:
    import numpy as np
    from retrieval import _embedder, ensure_library

    from desktop_app.core.search import glossary
    from desktop_app.core.search.retrieve import Retriever

    embedder = _embedder("default")
    store = ensure_library(args.db, eval_sets.CORPUS, embedder)
    retriever = Retriever(store, embedder, glossary=glossary.load_default())
    rows: list[dict[str, Any]] = []
    for language in ("en", "de", "zh"):
        for q in eval_sets.load(language):
            retrieval = retriever.search(q.question, 5)
            lang_code = gate.language_of(retrieval)
            refused = gate.refusal(retrieval) is not None
            pages = store.source_pages([(p.doc_id, p.page) for p in retrieval.passages])
            ordered = finder._pages_of(retrieval.passages, list(pages.values()))
            found = finder.candidates(q.question, retrieval.passages, ordered)
            kind = finder.question_kind(q.question, lang_code)
            scored = finder.score(q.question, lang_code, kind, found, None)
            cosines: list[float] = []
            if scored:  # the best DUMP_EMBEDDED by the rules; the rest read as the least alike
                qv = embedder.embed_queries([q.question])[0]
                sv = embedder.embed_passages([c.text for c in scored[:DUMP_EMBEDDED]])
                cosines = [float(x) for x in np.asarray(sv @ qv).ravel()]
                cosines += [min(cosines)] * (len(scored) - len(cosines))
            rows.append({"q": q, "language": lang_code, "kind": kind, "refused": refused,
                         "cands": [(c.text, dict(c.features), c.page, c.start, c.end) for c in scored],
                         "cos": cosines})
            print(f"{q.id}: {len(scored)} sentences", flush=True)
    args.out.write_bytes(pickle.dumps(rows))


def refeature(rows: list[dict[str, Any]]) -> None:
    """The rule features again with this version's finder.score (the dump's sentences,
    places and cosines kept): a new feature is tried without embedding again."""
    from desktop_app.core.text import words as termlib

    for row in rows:
        q = row["q"]
        cands = row["cands"]
        cos = {(page, start, end): c for (_, _, page, start, end), c in zip(cands, row["cos"], strict=True)}
        by_page: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
        rebuilt = []
        for text, f, page, start, end in cands:
            rebuilt.append(finder.Candidate(page, start, end, text, frozenset(termlib.tokenize(text)),
                                            int(round(1 / f["rank"] - 1)) if f.get("rank") else 0,
                                            f.get("inside", 0.0) == 1.0, f.get("pair", 0.0) == -1.0))
            if f.get("pair", 0.0) != -1.0:
                by_page[page].append((start, end, text))
        asking: dict[tuple[int, int], frozenset[str]] = {}
        for page, pieces in by_page.items():
            pieces.sort()
            for a, b in zip(pieces, pieces[1:], strict=False):
                if finder._ASKS.search(a[2]):
                    asking[(page, b[0])] = frozenset(termlib.tokenize(a[2]))
        first = {page: min(start for start, _, _ in pieces) for page, pieces in by_page.items()}
        rebuilt = [dataclasses.replace(c, asked_before=asking.get((c.page, c.start), frozenset()),
                                       opens_page=first.get(c.page) == c.start) for c in rebuilt]
        scored = finder.score(q.question, row["language"], row["kind"], rebuilt, None)
        row["cands"] = [(c.text, dict(c.features), c.page, c.start, c.end) for c in scored]
        row["cos"] = [cos[(c.page, c.start, c.end)] for c in scored]


def simulate(row: dict[str, Any], weights: dict[str, float], threshold: float, embedded: int) -> str | None:
    cands = row["cands"]
    if row["refused"] or not cands:
        return None
    base = []
    for i, (text, f, *_rest) in enumerate(cands):
        value = sum(weights[k] * v for k, v in f.items() if k != "meaning")
        base.append((value, i))
    base.sort(key=lambda t: -t[0])
    head = base[:embedded]
    cos = [row["cos"][i] for _, i in head]
    middle = sorted(cos)[len(cos) // 2] if cos else 0.0
    rescored = sorted(((v + weights["meaning"] * (row["cos"][i] - middle), i) for v, i in head), key=lambda t: -t[0])
    best, index = rescored[0]
    if best < threshold:
        return None
    return str(cands[index][0])


def evaluate(rows: list[dict[str, Any]], weights: dict[str, float], threshold: float, embedded: int,
             half: str) -> dict[str, tuple[int, int, int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for row in rows:
        q = row["q"]
        if eval_sets.half(q) != half:
            continue
        quote = simulate(row, weights, threshold, embedded)
        tally = out[q.language]
        if q.answerable:
            tally[0] += 1
            hit = quote is not None and (quotes_evidence(quote, q.evidence) if MEASURE == "evidence"
                                         else holds_answer(quote, q.answer))
            tally[1] += int(hit)
        else:
            tally[2] += 1
            tally[3] += int(quote is None)
    return {k: (v[0], v[1], v[2], v[3]) for k, v in out.items()}


def objective(result: dict[str, tuple[int, int, int, int]]) -> float:
    """The worst language's share of quotes holding the answer, plus a quarter of the
    share of unanswerable questions left without a quote below 0.75 as a penalty."""
    worst = min(h / a for a, h, _, _ in result.values() if a)
    silent = sum(n for _, _, _, n in result.values()) / max(1, sum(u for _, _, u, _ in result.values()))
    mean = sum(h for _, h, _, _ in result.values()) / max(1, sum(a for a, _, _, _ in result.values()))
    return worst + mean - max(0.0, 0.75 - silent)


def show(result: dict[str, tuple[int, int, int, int]], title: str) -> None:
    parts = [f"{lang} holds {h}/{a}, no quote for unanswerable {n}/{u}" for lang, (a, h, u, n) in sorted(result.items())]
    print(f"{title}: " + "; ".join(parts))


def tune(args: argparse.Namespace) -> None:
    global MEASURE
    MEASURE = args.measure
    rows = pickle.loads(args.dump.read_bytes())
    refeature(rows)
    weights = dict(finder.WEIGHTS)
    threshold = finder.MIN_SCORE
    embedded = finder.EMBEDDED
    show(evaluate(rows, weights, threshold, embedded, "tune"), "now, tune")
    best = objective(evaluate(rows, weights, threshold, embedded, "tune"))
    grid = [0.0, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    for _round in range(3):
        for name in weights:
            if name == "terms":
                continue  # the scale
            for value in grid:
                trial = {**weights, name: value}
                score = objective(evaluate(rows, trial, threshold, embedded, "tune"))
                if score > best + 1e-9:
                    best, weights = score, trial
        for value in [x / 20 for x in range(0, 40)]:
            score = objective(evaluate(rows, weights, value, embedded, "tune"))
            if score > best + 1e-9:
                best, threshold = score, value
    print("weights:", {k: round(v, 3) for k, v in weights.items()}, "threshold:", threshold)
    show(evaluate(rows, weights, threshold, embedded, "tune"), "chosen, tune")
    show(evaluate(rows, weights, threshold, embedded, "held"), "chosen, held out")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("dump")
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("tune")
    p.add_argument("--dump", type=Path, required=True)
    p.add_argument("--measure", choices=("evidence", "answer"), default="evidence")
    args = parser.parse_args()
    dump(args) if args.command == "dump" else tune(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
