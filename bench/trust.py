"""Trust over ../shared/qa: the "no basis" gate and what the answers cite.

Questions (see ``load_cases``):

- ``fb``: FinanceBench questions answerable from the 12 shared filings (gold page 0-based
  in the data, 1-based here);
- ``mm-text``: MMLongBench-Doc questions over the 14 shared documents whose evidence is
  plain text or tables only;
- ``mm-none``: MMLongBench-Doc's unanswerable questions (answer "Not answerable");
- ``off``: off-topic questions (English and Chinese) in ``bench/data/offtopic.json``,
  certainly not answered by the library;
- ``corpus``: the hand-written English, German and Chinese questions of
  ``bench/data/corpus_*.json`` over ../shared/corpus (the gate's side for questions the
  English embedder cannot read; index those PDFs into the same library, e.g. from a
  scratch copy of the folder).

Index the PDFs once into a scratch library (both folders into the same db)::

    folio index ../shared/qa/financebench/pdfs --db /tmp/qa.duckdb
    folio index ../shared/qa/mmlongbench-doc/documents --db /tmp/qa.duckdb

``gate`` retrieves every question (no model) and prints, for a grid of thresholds of
``gate.refusal`` (refuse when the best passage's idf-weighted coverage of
the question's terms is below MIN_COVERAGE and no dense hit reaches MIN_COSINE_ALONE), the
share of each category refused, and the best pair: the most unanswerable/off-topic
questions refused while wrongly refusing at most ``--max-wrong`` of the answerable ones::

    .venv/bin/python bench/trust.py gate --db /tmp/qa.duckdb [--json-out gate.json]

``answers`` runs the whole answer pipeline (``answering.answer``: retrieval, gate, prompt,
stream, citations, verdicts) with a model and prints: share of cited sources on an
evidence page, share of unanswerable questions answered "no basis", share of answerable
ones wrongly refused, hallucinated-label rate, verdict distribution; ``report`` prints
the same table for several saved runs side by side::

    .venv/bin/python bench/trust.py answers --db /tmp/qa.duckdb --model small --limit 20 \\
        --json-out small.json
    .venv/bin/python bench/trust.py answers --db /tmp/qa.duckdb --model default --limit 8 \\
        --json-out default.json
    .venv/bin/python bench/trust.py report small.json default.json
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.core.answer import answering  # noqa: E402
from desktop_app.core.answer import gate as evidence_gate  # noqa: E402
from desktop_app.core.settings import Settings  # noqa: E402
from desktop_app.core.types import (  # noqa: E402
    AnswerFailed,
    AnswerFinished,
    AnswerStarted,
    ClaimVerdict,
    NoBasis,
)
from desktop_app.core.verdicts import Verifier  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
QA = SHARED / "qa"
OFFTOPIC = Path(__file__).resolve().parent / "data" / "offtopic.json"
TEXT_SOURCES = {"Pure-text (Plain-text)", "Table"}
CORPUS = [Path(__file__).resolve().parent / "data" / f"corpus_{lang}.json" for lang in ("en", "zh")]
ANSWERABLE = ("fb", "mm-text", "corpus")
UNANSWERABLE = ("mm-none", "off")
CATEGORIES = ANSWERABLE + UNANSWERABLE
DEFAULT_CATEGORIES = "fb,mm-text,mm-none,off"
COVERAGE_GRID = [round(0.10 + 0.02 * i, 2) for i in range(31)]  # 0.10 .. 0.70
COSINE_GRID = [0.25, 0.30, 0.35, 0.38, 0.40, 0.45, 0.50, 0.55, 0.60, 1.01]  # 1.01: never alone
SHOWN_COSINES = (0.30, 0.35, 0.45, 1.01)


@dataclass(frozen=True)
class Case:
    qid: str
    category: str
    question: str
    doc: str  # file name of the evidence document ("" for off-topic)
    pages: tuple[int, ...]  # 1-based evidence pages (empty when unanswerable)
    gold: str


def load_cases() -> list[Case]:
    if not QA.is_dir():
        sys.exit(f"{QA} is absent: this benchmark needs ../shared/qa")
    cases: list[Case] = []
    fb_dir = QA / "financebench"
    have = {p.stem for p in (fb_dir / "pdfs").glob("*.pdf")}
    for line in (fb_dir / "financebench_open_source.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if row["doc_name"] in have:
            pages = tuple(sorted({int(e["evidence_page_num"]) + 1 for e in row["evidence"]}))
            cases.append(Case(row["financebench_id"], "fb", row["question"], row["doc_name"] + ".pdf",
                              pages, str(row["answer"])))
    mm_dir = QA / "mmlongbench-doc"
    docs = {p.name for p in (mm_dir / "documents").glob("*.pdf")}
    samples = json.loads((mm_dir / "samples.json").read_text(encoding="utf-8"))
    for n, row in enumerate(s for s in samples if s["doc_id"] in docs):
        qid = f"mm-{n:03d}"
        if row["answer"] == "Not answerable" or row["answer_format"] == "None":
            cases.append(Case(qid, "mm-none", row["question"], row["doc_id"], (), ""))
            continue
        sources = set(ast.literal_eval(row["evidence_sources"]))
        if sources and sources <= TEXT_SOURCES:
            pages = tuple(int(p) for p in ast.literal_eval(row["evidence_pages"]))
            cases.append(Case(qid, "mm-text", row["question"], row["doc_id"], pages, str(row["answer"])))
    for row in json.loads(OFFTOPIC.read_text(encoding="utf-8")):
        cases.append(Case(row["id"], "off", row["question"], "", (), ""))
    for path in CORPUS:
        for n, row in enumerate(json.loads(path.read_text(encoding="utf-8"))["questions"]):
            cases.append(Case(f"{path.stem}-{n:02d}", "corpus", row["question"], row["file"],
                              tuple(row["pages"]), row["answer"]))
    return cases


def spread(cases: list[Case], limit: int | None, categories: Sequence[str] = CATEGORIES) -> list[Case]:
    """At most ``limit`` cases per category, evenly spread over each."""
    out: list[Case] = []
    for category in categories:
        group = [c for c in cases if c.category == category]
        if limit is not None and limit < len(group):
            group = [group[round(i * len(group) / limit)] for i in range(limit)]
        out.extend(group)
    return out


def open_library(db: Path) -> tuple[Any, Any]:
    from desktop_app.core.library.store import Store
    from desktop_app.core.models.catalog import open_embedder
    from desktop_app.core.search.retrieve import Retriever

    if not db.is_file():
        sys.exit(f"{db} does not exist: index the shared PDFs into it first (see --help)")
    store = Store(db)
    embedder = open_embedder("default")  # the model id the app stores vectors under
    return store, Retriever(store, embedder)


def on_evidence(case: Case, doc_path: str, page: int) -> bool:
    return bool(case.doc) and Path(doc_path).name == case.doc and page in case.pages


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    –"


# --------------------------------------------------------------------------- gate


def gate(args: argparse.Namespace) -> None:
    if args.from_json:
        gate_table(json.loads(Path(args.from_json).read_text(encoding="utf-8")), args.max_wrong, args.penalty)
        return
    store, retriever = open_library(args.db)
    settings = Settings()
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for case in load_cases():
        found = retriever.search(case.question, settings.sources_per_answer)
        hit = any(on_evidence(case, p.doc_path, p.page) for p in found.passages)
        rows.append({**asdict(case), "coverage": found.coverage, "best_cosine": found.best_cosine,
                     "cjk": found.cjk, "embedder": found.embedder, "passages": len(found.passages), "hit": hit})
    store.close()
    print(f"retrieved {len(rows)} questions in {time.perf_counter() - started:.0f} s")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    gate_table(rows, args.max_wrong, args.penalty)


def refused(row: dict[str, Any], min_coverage: float, min_cosine: float) -> bool:
    """``gate.refusal`` with the given thresholds (for a question the
    embedder did not read, ``min_coverage`` is the lexical-only threshold)."""
    if not row["passages"]:
        return True
    if row["cjk"] or row["best_cosine"] <= 0:
        return bool(row["coverage"] < min_coverage)
    return bool(row["coverage"] < min_coverage and row["best_cosine"] < min_cosine)


def lexical_only(row: dict[str, Any]) -> bool:
    return bool(row["cjk"] or row["best_cosine"] <= 0)


def refused_by_code(row: dict[str, Any]) -> bool:
    probe = SimpleNamespace(passages=[None] * row["passages"], coverage=row["coverage"],
                            best_cosine=row["best_cosine"], cjk=row["cjk"],
                            embedder=row.get("embedder", ""), language="")
    return evidence_gate.refusal(probe) is not None  # type: ignore[arg-type]


def rates(rows: list[dict[str, Any]], is_refused: Callable[[dict[str, Any]], bool]) -> dict[str, float]:
    out: dict[str, float] = {}
    for category in {r["category"] for r in rows}:
        group = [r for r in rows if r["category"] == category]
        out[category] = sum(map(is_refused, group)) / len(group)
    answerable = [r for r in rows if r["category"] in ANSWERABLE]
    unanswerable = [r for r in rows if r["category"] in UNANSWERABLE]
    out["wrong"] = sum(map(is_refused, answerable)) / max(1, len(answerable))
    out["right"] = sum(map(is_refused, unanswerable)) / max(1, len(unanswerable))
    return out


def gate_table(rows: list[dict[str, Any]], max_wrong: float, penalty: float) -> None:
    counts = Counter(r["category"] for r in rows)
    print("\nquestions: " + ", ".join(f"{c} {counts[c]}" for c in CATEGORIES)
          + f" (without a cosine: {sum(lexical_only(r) for r in rows)})")
    print("retrieval hit@5 (an evidence page among the sources): " + ", ".join(
        f"{c} {pct(sum(r['hit'] for r in rows if r['category'] == c), counts[c]).strip()}"
        for c in ANSWERABLE))
    print("\ncoverage / best cosine by category (10th, 50th, 90th percentile):")
    for category in CATEGORIES:
        for alone in (False, True):
            group = [r for r in rows if r["category"] == category and lexical_only(r) == alone]
            if len(group) < 2:
                continue
            for key in ("coverage", "best_cosine") if not alone else ("coverage",):
                q = statistics.quantiles([r[key] for r in group], n=10)
                name = f"{category}{'-lex' if alone else ''}"
                print(f"  {name:10} {key:11} {q[0]:.2f} {q[4]:.2f} {q[8]:.2f}")
    latin = [r for r in rows if not lexical_only(r)]
    alone = [r for r in rows if lexical_only(r)]
    chosen_latin = sweep("Questions the embedder read: refuse when coverage < C and best cosine < K",
                         latin, [(c, k) for k in COSINE_GRID for c in COVERAGE_GRID], max_wrong, penalty)
    chosen_cjk = sweep("Questions it did not read (Chinese, German; best cosine 0): refuse when"
                       " coverage < C", alone, [(c, 1.01) for c in COVERAGE_GRID], max_wrong, penalty)
    now = rates(rows, refused_by_code)
    print(f"\nin the code now (MIN_COVERAGE={evidence_gate.MIN_COVERAGE}, MIN_COSINE_ALONE="
          f"{evidence_gate.MIN_COSINE_ALONE}, MIN_COVERAGE_LEXICAL={evidence_gate.MIN_COVERAGE_LEXICAL}): "
          + ", ".join(f"{x} {pct(now.get(x, 0), 1).strip()}" for x in CATEGORIES if x in now)
          + f"\n  answerable wrongly refused {pct(now['wrong'], 1).strip()},"
          f" unanswerable refused {pct(now['right'], 1).strip()}")
    if chosen_latin and chosen_cjk:
        print(f"calibrated: MIN_COVERAGE={chosen_latin[0]:.2f} MIN_COSINE_ALONE={chosen_latin[1]:.2f}"
              f" MIN_COVERAGE_LEXICAL={chosen_cjk[0]:.2f}")


def sweep(title: str, rows: list[dict[str, Any]], grid: list[tuple[float, float]], max_wrong: float,
          penalty: float) -> tuple[float, float] | None:
    """Print the refusal shares over ``grid`` and the Pareto front; return the chosen pair:
    the most unanswerable refused minus ``penalty`` times the answerable refused, with at
    most ``max_wrong`` answerable refused (ties go to the lower thresholds)."""
    categories = [c for c in CATEGORIES if any(r["category"] == c for r in rows)]
    if not rows:
        return None
    print(f"\n{title}\n{'C':>5} {'K':>5} | " + " ".join(f"{c:>8}" for c in categories)
          + " | answerable wrongly  unanswerable rightly")
    scored = []
    for c, k in grid:
        r = rates(rows, lambda row, c=c, k=k: refused(row, c, k))
        scored.append((c, k, r))
        if (k in SHOWN_COSINES or len({g[1] for g in grid}) == 1) and round(c * 100) % 6 == 4:
            print(f"{c:5.2f} {k:5.2f} | " + " ".join(f"{pct(r[x], 1):>8}" for x in categories)
                  + f" | {pct(r['wrong'], 1):>18} {pct(r['right'], 1):>21}")
    print("Pareto front (fewest answerable refused for each share of unanswerable refused):")
    front: dict[float, tuple[float, float, dict[str, float]]] = {}
    for c, k, r in scored:
        key = round(r["right"], 3)
        if key not in front or r["wrong"] < front[key][2]["wrong"]:
            front[key] = (c, k, r)
    best_wrong = 2.0
    for key in sorted(front, reverse=True):
        c, k, r = front[key]
        if r["wrong"] < best_wrong:
            best_wrong = r["wrong"]
            print(f"  C={c:.2f} K={k:.2f}: unanswerable refused {pct(r['right'], 1).strip():>6},"
                  f" answerable refused {pct(r['wrong'], 1).strip():>6}  ("
                  + ", ".join(f"{x} {pct(r[x], 1).strip()}" for x in categories) + ")")
    eligible = [s for s in scored if s[2]["wrong"] <= max_wrong]
    if not eligible:
        return None
    c, k, r = max(eligible, key=lambda s: (s[2]["right"] - penalty * s[2]["wrong"], -s[0], -s[1]))
    print(f"chosen (at most {max_wrong:.0%} answerable refused, penalty {penalty:g}): C={c:.2f}"
          f" K={k:.2f} -> unanswerable refused {r['right']:.0%}, answerable refused {r['wrong']:.0%}")
    return c, k


# --------------------------------------------------------------------------- answers


def answers(args: argparse.Namespace) -> None:
    from desktop_app.core.models import catalog as models
    from desktop_app.core.models.generate import LlamaGenerator

    store, retriever = open_library(args.db)
    settings = Settings(answer_model=args.model, judge=args.judge)
    if args.max_tokens:
        settings = settings.replace(max_tokens=args.max_tokens)
    generator = LlamaGenerator(models.resolve_answer_model(args.model),
                               context_tokens=settings.context_tokens, threads=args.threads or settings.threads)
    results: list[dict[str, Any]] = []
    for case in spread(load_cases(), args.limit, args.categories.split(",")):
        events: list[Any] = []
        started = time.perf_counter()
        answering.answer(case.question, retriever=retriever, store=store if args.judge else None,
                         generator_factory=lambda _language: generator, settings=settings, emit=events.append,
                         should_cancel=lambda: False, verifier=Verifier())
        results.append(summarise(case, events, time.perf_counter() - started))
        r = results[-1]
        print(f"{case.category:8} {case.qid:24} {r['seconds']:5.1f}s no_basis={int(r['no_basis'])}"
              f" cited={len(r['cited'])} on_page={sum(c['on_evidence'] for c in r['cited'])}"
              f" halluc={len(r['hallucinated'])} {dict(Counter(r['verdicts']))}", flush=True)
    store.close()
    run = {"model": args.model, "model_id": generator.model_id, "judge": args.judge, "results": results}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(run, ensure_ascii=False, indent=1), encoding="utf-8")
    answer_table([run])


def summarise(case: Case, events: list[Any], seconds: float) -> dict[str, Any]:
    started = next((e for e in events if isinstance(e, AnswerStarted)), None)
    finished = next((e for e in events if isinstance(e, AnswerFinished)), None)
    sources = {s.id: s for s in (started.sources if started else ())}
    cited = []
    if finished is not None:
        for cid in finished.citations:
            if cid in sources and cid not in finished.hallucinated:
                s = sources[cid]
                cited.append({"id": cid, "doc": Path(s.doc_path).name, "page": s.page,
                              "on_evidence": on_evidence(case, s.doc_path, s.page)})
    verdicts: dict[tuple[int, int], str] = {}
    for event in events:
        if isinstance(event, ClaimVerdict):  # a judge's update replaces the rule verdict
            verdicts[event.sentence_span] = str(event.verdict)
    return {
        **asdict(case), "seconds": seconds,
        "no_basis": any(isinstance(e, NoBasis) for e in events),
        "gated": bool(started is not None and not started.sources),
        "failed": next((e.error for e in events if isinstance(e, AnswerFailed)), ""),
        "hit": any(on_evidence(case, s.doc_path, s.page) for s in sources.values()),
        "cited": cited, "hallucinated": list(finished.hallucinated) if finished else [],
        "verdicts": list(verdicts.values()), "text": finished.text if finished else "",
    }


def answer_table(runs: list[dict[str, Any]]) -> None:
    def column(run: dict[str, Any]) -> dict[str, str]:
        res = run["results"]
        answerable = [r for r in res if r["category"] in ANSWERABLE]
        unanswerable = [r for r in res if r["category"] in UNANSWERABLE]
        cited = [c for r in answerable for c in r["cited"]]
        markers = sum(len(r["cited"]) + len(r["hallucinated"]) for r in res)
        verdicts = Counter(v for r in res for v in r["verdicts"])
        total_verdicts = sum(verdicts.values())
        called = [r["seconds"] for r in res if not r["gated"]]
        out = {
            f"questions ({'/'.join(present)})": "/".join(str(sum(r["category"] == c for r in res)) for c in present),
            "cited sources on an evidence page": f"{pct(sum(c['on_evidence'] for c in cited), len(cited))} of {len(cited)}",
            "  answers citing an evidence page": pct(sum(any(c["on_evidence"] for c in r["cited"]) for r in answerable), len(answerable)),
            "  evidence page among the sources": pct(sum(r["hit"] for r in answerable), len(answerable)),
            "unanswerable answered 'no basis'": pct(sum(r["no_basis"] for r in unanswerable), len(unanswerable)),
            "  of them by the gate (no model call)": pct(sum(r["gated"] for r in unanswerable), len(unanswerable)),
            "  mm-none / off": " / ".join(pct(sum(r["no_basis"] for r in unanswerable if r["category"] == c),
                                              sum(r["category"] == c for r in unanswerable)).strip() for c in UNANSWERABLE),
            "answerable wrongly refused": pct(sum(r["no_basis"] for r in answerable), len(answerable)),
            "  by the gate / by the model": " / ".join(pct(sum(r["no_basis"] and r["gated"] == g for r in answerable),
                                                           len(answerable)).strip() for g in (True, False)),
            "hallucinated-label rate": f"{pct(sum(len(r['hallucinated']) for r in res), markers)} of {markers}",
            "answers without any citation (answered)": pct(
                sum(not r["cited"] and not r["no_basis"] for r in res), sum(not r["no_basis"] for r in res)),
        }
        for v in ("supported", "not_confirmed", "contradicted", "uncited", "not_factual"):
            out[f"verdict {v}"] = pct(verdicts[v], total_verdicts)
        out["median s per answer (model called)"] = f"{statistics.median(called):.1f}" if called else "–"
        return out

    present = [c for c in CATEGORIES if any(r["category"] == c for run in runs for r in run["results"])]
    columns = [column(run) for run in runs]
    width = max(len(k) for k in columns[0])
    names = [f"{run['model']}{' +judge' if run.get('judge') else ''}" for run in runs]
    cell = max(18, *(len(v) for c in columns for v in c.values()))
    print("\n" + " " * width + " | " + " | ".join(f"{n:>{cell}}" for n in names))
    for key in columns[0]:
        print(f"{key:<{width}} | " + " | ".join(f"{c[key]:>{cell}}" for c in columns))


def report(args: argparse.Namespace) -> None:
    answer_table([json.loads(Path(f).read_text(encoding="utf-8")) for f in args.runs])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("gate", help="calibrate the no-basis gate (retrieval only)")
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--max-wrong", type=float, default=0.05, help="share of answerable refusals allowed")
    p.add_argument("--penalty", type=float, default=3.0,
                   help="how many answered unanswerable questions one wrong refusal is worth")
    p.add_argument("--from-json", default="", help="re-print the table from a --json-out file")
    p.add_argument("--json-out", default="")
    p = sub.add_parser("answers", help="answer the questions with a model")
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--model", default="small")
    p.add_argument("--limit", type=int, default=None, help="questions per category")
    p.add_argument("--max-tokens", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--judge", action="store_true", help="also run the judge on unsure sentences")
    p.add_argument("--categories", default=DEFAULT_CATEGORIES, help="comma-separated")
    p.add_argument("--json-out", default="")
    p = sub.add_parser("report", help="print saved answer runs side by side")
    p.add_argument("runs", nargs="+")
    args = parser.parse_args()
    {"gate": gate, "answers": answers, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
