"""The "no basis" decision per language, on the hand-written evaluation sets.

Questions: ``bench/data/eval_{en,de,zh}.json`` (see ``bench/eval_sets.py``): answerable
questions with the page that answers them, and near-domain unanswerable ones (the topic is
in ../shared/corpus, the fact is not). Each set is split by id into a tuning half (odd
numbers) and a held-out half (even numbers): thresholds are chosen on ``tune`` only, and
both halves are printed; quote ``held``. The off-topic questions of
``bench/data/offtopic.json`` are printed beside them for reference (never fitted on).

Index the corpus once into a scratch library with the embedder under test::

    folio index ../shared/corpus --db /tmp/corpus.duckdb

``retrieve`` runs retrieval only (no model): recall@1 and @5 of the answer page, the gate's
signals (coverage, best cosine) and what the gate in the code refuses, per language and
half; ``--fit`` searches the thresholds on the tuning half (at most ``--max-wrong``
answerable refused in each language, then the most unanswerable refused)::

    .venv/bin/python bench/gate.py retrieve --db /tmp/corpus.duckdb [--fit] [--json-out rows.json]

``answers`` runs the whole answer (retrieval, gate, prompt, model, citations, verdicts,
``answering.answer``) and prints per language: answerable questions refused (by the gate /
by the model), unanswerable ones ending in "no basis" (gate / model), the share of
citations on a page that holds the answer (a page the set names, or another page holding
80% of the words of the question's evidence sentence), and the share of factual sentences
carrying a valid marker::

    .venv/bin/python bench/gate.py answers --db /tmp/corpus.duckdb --model default \\
        --half held [--limit 10] [--json-out default.json]
    .venv/bin/python bench/gate.py report default.json [small.json ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_sets  # noqa: E402

from desktop_app.core.answer import answering, gate  # noqa: E402
from desktop_app.core.settings import Settings  # noqa: E402
from desktop_app.core.text import words as termlib  # noqa: E402
from desktop_app.core.types import (  # noqa: E402
    AnswerFailed,
    AnswerFinished,
    AnswerStarted,
    ClaimVerdict,
    NoBasis,
    Steering,
    Verdict,
    all_unsupported,
)
from desktop_app.core.verdicts import Verifier  # noqa: E402

OFFTOPIC = Path(__file__).resolve().parent / "data" / "offtopic.json"
HALVES = ("tune", "held")
COVERAGE_GRID = [round(0.02 * i, 2) for i in range(0, 36)]  # 0 .. 0.70
COSINE_GRID = [round(0.50 + 0.01 * i, 2) for i in range(0, 46)] + [0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45]


def load(languages: Sequence[str]) -> list[dict[str, Any]]:
    """Every question as a row: id, language, half, kind ("a", "u" or "off"), question,
    file, pages."""
    rows = []
    for lang in languages:
        for q in eval_sets.load(lang):
            rows.append({"id": q.id, "lang": lang, "half": eval_sets.half(q), "kind": "a" if q.answerable else "u",
                         "question": q.question, "file": q.file, "pages": list(q.pages),
                         "evidence": list(q.evidence) if isinstance(q.evidence, (list, tuple))
                         else ([q.evidence] if q.answerable else [])})
    for row in json.loads(OFFTOPIC.read_text(encoding="utf-8")):
        if row["lang"] in languages:
            rows.append({"id": row["id"], "lang": row["lang"], "half": "-", "kind": "off",
                         "question": row["question"], "file": "", "pages": []})
    return rows


def open_library(db: Path, embedder_choice: str = "default") -> tuple[Any, Any, str]:
    from desktop_app.core.library.store import Store
    from desktop_app.core.models.catalog import open_embedder
    from desktop_app.core.search.retrieve import Retriever

    if not db.is_file():
        sys.exit(f"{db} does not exist: index ../shared/corpus into it first (see --help)")
    store = Store(db)
    embedder = open_embedder(embedder_choice)
    return store, Retriever(store, embedder), embedder.model_id


def on_page(row: dict[str, Any], doc_path: str, page: int) -> bool:
    return bool(row["file"]) and Path(doc_path).name == row["file"] and page in row["pages"]


def holds_answer(row: dict[str, Any], page_text: str) -> bool:
    """Whether a page other than the named ones states the answer too: it holds 80% of the
    words of one of the question's evidence sentences (a title page repeating the author,
    a summary repeating a figure)."""
    seen = set(termlib.tokenize(page_text))
    for sentence in row.get("evidence", ()):
        wanted = set(termlib.tokenize(sentence))
        if wanted and len(wanted & seen) >= 0.8 * len(wanted):
            return True
    return False


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}% ({part:g}/{whole:g})" if whole else "–"


# --------------------------------------------------------------------------- retrieval


def retrieve(args: argparse.Namespace) -> None:
    if args.from_json:
        rows = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
    else:
        from dataclasses import replace

        from desktop_app.core.search import retrieve as retrieve_mod

        if args.cjk_dense is not None:
            retrieve_mod.CJK_MULTILINGUAL = replace(retrieve_mod.CJK_MULTILINGUAL, dense=args.cjk_dense)
        if args.latin_dense is not None:
            retrieve_mod.LATIN = replace(retrieve_mod.LATIN, dense=args.latin_dense)
        store, retriever, model_id = open_library(args.db, args.embedder)
        k = Settings().sources_per_answer
        rows = load(args.languages.split(","))
        started = time.perf_counter()
        for row in rows:
            found = retriever.search(row["question"], k)
            ranks = [i for i, p in enumerate(found.passages) if on_page(row, p.doc_path, p.page)]
            row.update(coverage=found.coverage, best_cosine=found.best_cosine, cjk=found.cjk, dense=found.embedder,
                       detected=found.language,
                       passages=len(found.passages), rank=ranks[0] if ranks else None,
                       embedder=model_id, unmatched=list(found.unmatched), unmentioned=list(found.unmentioned),
                       documents_language=found.documents_language)
        store.close()
        print(f"retrieved {len(rows)} questions in {time.perf_counter() - started:.0f} s"
              f" (embedder {model_id})")
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    recall_table(rows)
    print("\nthe gate in the code now:")
    refusal_table(rows, refused_by_code)
    if args.fit:
        fit(rows, args.max_wrong)


def recall_table(rows: list[dict[str, Any]]) -> None:
    print("\nanswer page among the sources (answerable questions), recall@1 / recall@5:")
    for lang in sorted({r["lang"] for r in rows}):
        cells = []
        for half in HALVES:
            group = [r for r in rows if r["lang"] == lang and r["half"] == half and r["kind"] == "a"]
            at1 = sum(r["rank"] == 0 for r in group)
            at5 = sum(r["rank"] is not None for r in group)
            cells.append(f"{half} {pct(at1, len(group))} / {pct(at5, len(group))}")
        print(f"  {lang}: " + "   ".join(cells))


def refused_by_code(row: dict[str, Any]) -> bool:
    probe = SimpleNamespace(passages=[None] * row["passages"], coverage=row["coverage"],
                            best_cosine=row["best_cosine"], cjk=row["cjk"], embedder=row.get("dense", ""),
                            language=row.get("detected", ""), unmatched=tuple(row.get("unmatched", ())),
                            unmentioned=tuple(row.get("unmentioned", ())),
                            documents_language=row.get("documents_language", ""))
    return gate.refusal(probe) is not None  # type: ignore[arg-type]


def refusal_table(rows: list[dict[str, Any]], is_refused: Callable[[dict[str, Any]], bool]) -> None:
    for lang in sorted({r["lang"] for r in rows}):
        cells = []
        for half in HALVES:
            group = [r for r in rows if r["lang"] == lang and r["half"] == half]
            a = [r for r in group if r["kind"] == "a"]
            u = [r for r in group if r["kind"] == "u"]
            cells.append(f"{half}: answerable refused {pct(sum(map(is_refused, a)), len(a))},"
                         f" unanswerable refused {pct(sum(map(is_refused, u)), len(u))}")
        off = [r for r in rows if r["lang"] == lang and r["kind"] == "off"]
        tail = f"; off-topic refused {pct(sum(map(is_refused, off)), len(off))}" if off else ""
        print(f"  {lang}: " + " | ".join(cells) + tail)


def gate_rule(coverage: float, cosine: float) -> Callable[[dict[str, Any]], bool]:
    """Refuse when the best passage covers less than ``coverage`` of the question's terms
    and no passage reaches ``cosine``."""
    return lambda r: not r["passages"] or (r["coverage"] < coverage and r["best_cosine"] < cosine)


def fit(rows: list[dict[str, Any]], max_wrong: float) -> None:
    """Per script (CJK questions, Latin-script ones): the thresholds that refuse the most
    unanswerable and off-topic questions of the tuning half while refusing at most
    ``max_wrong`` of its answerable ones; ties go to the lower thresholds."""
    for script, is_cjk in (("latin", False), ("cjk", True)):
        tune = [r for r in rows if r["half"] in ("tune", "-") and bool(r["cjk"]) == is_cjk]
        answerable = [r for r in tune if r["kind"] == "a"]
        unanswerable = [r for r in tune if r["kind"] != "a"]
        if not answerable:
            continue
        best: tuple[float, float, float, float] | None = None
        for c, k in itertools.product(COVERAGE_GRID, COSINE_GRID):
            rule = gate_rule(c, k)
            wrong = sum(map(rule, answerable)) / len(answerable)
            right = sum(map(rule, unanswerable)) / max(1, len(unanswerable))
            if wrong <= max_wrong and (best is None or (right, -wrong, -c, -k) > (best[2], -best[3], -best[0], -best[1])):
                best = (c, k, right, wrong)
        if best is None:
            print(f"\n{script}: no thresholds refuse at most {max_wrong:.0%} of the answerable questions")
            continue
        c, k, right, wrong = best
        print(f"\n{script}: fitted on the tuning half: MIN_COVERAGE={c:.2f} MIN_COSINE={k:.2f}"
              f" (tune: answerable refused {wrong:.0%}, unanswerable + off-topic refused {right:.0%})")
        refusal_table([r for r in rows if bool(r["cjk"]) == is_cjk], gate_rule(c, k))
    print("\nsignals (median coverage / best cosine) by language and kind, tuning half:")
    for lang, kind in itertools.product(sorted({r["lang"] for r in rows}), ("a", "u", "off")):
        group = [r for r in rows if r["lang"] == lang and r["kind"] == kind and r["half"] in ("tune", "-")]
        if group:
            print(f"  {lang} {kind:3}: {statistics.median(r['coverage'] for r in group):.2f} /"
                  f" {statistics.median(r['best_cosine'] for r in group):.3f}  (n={len(group)},"
                  f" lowest answerable {min(r['coverage'] for r in group):.2f} /"
                  f" {min(r['best_cosine'] for r in group):.3f})")


# --------------------------------------------------------------------------- answers


def answers(args: argparse.Namespace) -> None:
    from desktop_app.core.models import catalog as models
    from desktop_app.core.models.generate import LlamaGenerator

    store, retriever, model_id = open_library(args.db)
    pages: dict[str, dict[int, str]] = {}

    def page_text(doc_id: str, page: int) -> str:
        if doc_id not in pages:
            pages[doc_id] = {p.page: p.text for p in store.document_pages(doc_id)}
        return pages[doc_id].get(page, "")

    # The judge (on in the app) only changes verdicts, not what is refused or cited: off here
    # unless --judge (then the "not backed" banner counts as the window would show it).
    settings = Settings(answer_model=args.model, use_grammar=args.grammar, judge=args.judge, abstain=True)
    if args.max_tokens:
        settings = settings.replace(max_tokens=args.max_tokens)
    if args.sources:
        settings = settings.replace(sources_per_answer=args.sources)
    generator = LlamaGenerator(models.resolve_answer_model(args.model),
                               context_tokens=settings.context_tokens, threads=args.threads or settings.threads)
    gate.ABSTAIN_PROBABILITY = args.abstain
    if args.no_steering:  # the baseline of core/models/steer.py: no steering at all
        answering.Steering = lambda **_kw: None  # type: ignore[assignment,misc]
    elif args.no_source_choice:  # Chinese sentences marked, the marker's number the model's own
        answering.Steering = lambda **kw: Steering(**{**kw, "sources": ()})  # type: ignore[assignment,misc]
    measured: dict[str, float] = {}
    ask = generator.reply_logprob

    def recorded(*a: Any, **k: Any) -> float:  # what the model's abstention measured (the
        value = ask(*a, **k)  # first call of a question; the judge's come after it)
        measured.setdefault("logprob", value)
        return value

    generator.reply_logprob = recorded  # type: ignore[method-assign]
    rows = [r for r in load(args.languages.split(",")) if r["kind"] in args.kinds.split(",")
            and (args.half == "all" or r["half"] == args.half)]
    if args.ids:
        rows = [r for r in rows if r["id"] in set(args.ids.split(","))]
    if args.limit:  # at most --limit of each (language, kind), spread over the ids
        chosen = []
        for key in sorted({(r["lang"], r["kind"]) for r in rows}):
            group = [r for r in rows if (r["lang"], r["kind"]) == key]
            chosen += [group[round(i * len(group) / args.limit)] for i in range(min(args.limit, len(group)))]
        rows = chosen
    results = []
    for row in rows:
        events: list[Any] = []
        started = time.perf_counter()
        answering.answer(row["question"], retriever=retriever, store=None, generator_factory=lambda _language: generator,
                         settings=settings, emit=events.append, should_cancel=lambda: False, verifier=Verifier())
        results.append(summarise(row, events, time.perf_counter() - started, page_text))
        r = results[-1]
        r["decline_p"] = round(math.exp(measured.pop("logprob")), 4) if "logprob" in measured else None
        print(f"{r['id']:10} {r['seconds']:5.1f}s gated={int(r['gated'])} no_basis={int(r['no_basis'])}"
              f" cited={len(r['cited'])} on_page={sum(c['on_page'] for c in r['cited'])}"
              f" marked={r['marked']}/{r['factual']} decline_p={r['decline_p']} | {r['text'][:80]!r}",
              flush=True)
    store.close()
    run = {"model": args.model, "model_id": generator.model_id, "embedder": model_id, "half": args.half,
           "grammar": args.grammar, "abstain": args.abstain, "judge": args.judge, "results": results}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(run, ensure_ascii=False, indent=1), encoding="utf-8")
    answer_table([run])


def summarise(row: dict[str, Any], events: list[Any], seconds: float,
              page_text: Callable[[str, int], str] = lambda doc_id, page: "") -> dict[str, Any]:
    started = next((e for e in events if isinstance(e, AnswerStarted)), None)
    finished = next((e for e in events if isinstance(e, AnswerFinished)), None)
    sources = {s.id: s for s in (started.sources if started else ())}
    cited = []
    if finished is not None:
        for cid in finished.citations:
            if cid in sources and cid not in finished.hallucinated:
                s = sources[cid]
                named = on_page(row, s.doc_path, s.page)
                cited.append({"id": cid, "doc": Path(s.doc_path).name, "page": s.page, "named_page": named,
                              "on_page": named or holds_answer(row, page_text(s.doc_id, s.page))})
    verdicts: dict[tuple[int, int], ClaimVerdict] = {}
    for event in events:
        if isinstance(event, ClaimVerdict):
            verdicts[event.sentence_span] = event
    no_basis = any(isinstance(e, NoBasis) for e in events)
    factual = [v for v in verdicts.values() if v.verdict is not Verdict.NOT_FACTUAL]
    valid = set(sources) - set(finished.hallucinated if finished else ())
    marked = sum(1 for v in factual if any(i in valid for i in v.ids))
    return {
        **row, "seconds": seconds, "no_basis": no_basis,
        # refused before the model read anything (the gate: its sources, if any, were not read)
        "gated": bool(no_basis and started is not None and not started.prompt_tokens),
        "failed": next((e.error for e in events if isinstance(e, AnswerFailed)), ""),
        "hit": any(on_page(row, s.doc_path, s.page) for s in sources.values()),
        "cited": cited, "hallucinated": list(finished.hallucinated) if finished else [],
        "factual": 0 if no_basis else len(factual), "marked": 0 if no_basis else marked,
        "verdicts": [str(v.verdict) for v in verdicts.values()], "text": finished.text if finished else "",
        # the window's banner "No statement of this answer is backed by the documents"
        "unbacked": not no_basis and all_unsupported(list(verdicts.values())),
    }


def answer_table(runs: list[dict[str, Any]]) -> None:
    for run in runs:
        res = run["results"]
        print(f"\n{run['model']} ({run['model_id']}), embedder {run['embedder']}, half {run['half']},"
              f" grammar {run.get('grammar', False)}, {len(res)} questions")
        for lang in sorted({r["lang"] for r in res}):
            a = [r for r in res if r["lang"] == lang and r["kind"] == "a"]
            u = [r for r in res if r["lang"] == lang and r["kind"] == "u"]
            cited = [c for r in a for c in r["cited"]]
            print(f"  {lang}: answerable refused {pct(sum(r['no_basis'] for r in a), len(a))}"
                  f" (gate {sum(r['gated'] for r in a)}, model {sum(r['no_basis'] and not r['gated'] for r in a)});"
                  f" unanswerable 'no basis' {pct(sum(r['no_basis'] for r in u), len(u))}"
                  f" (gate {sum(r['gated'] for r in u)}, model {sum(r['no_basis'] and not r['gated'] for r in u)})")
            checks = "judged verdicts" if run.get("judge") else "rule verdicts"
            print(f"      answered but bannered 'no statement backed' ({checks}):"
                  f" answerable {pct(sum(r.get('unbacked', False) for r in a), len(a))},"
                  f" unanswerable {pct(sum(r.get('unbacked', False) for r in u), len(u))}")
            print(f"      citations on an answer page {pct(sum(c['on_page'] for c in cited), len(cited))};"
                  f" answered questions citing one {pct(sum(any(c['on_page'] for c in r['cited']) for r in a if not r['no_basis']), sum(not r['no_basis'] for r in a))};"
                  f" factual sentences with a valid marker {pct(sum(r['marked'] for r in a + u), sum(r['factual'] for r in a + u))};"
                  f" answer page among the sources {pct(sum(r['hit'] for r in a), len(a))}")
        called = [r["seconds"] for r in res if not r["gated"]]
        if called:
            print(f"  median seconds per answer (model called): {statistics.median(called):.1f} (n={len(called)})")
        tally = Counter(v for r in res for v in r["verdicts"])
        print("  verdicts: " + ", ".join(f"{k} {n}" for k, n in tally.most_common()))


def report(args: argparse.Namespace) -> None:
    runs = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.runs]
    answer_table(runs)
    if args.fit_abstain:
        fit_abstain([r for run in runs for r in run["results"]], args.max_wrong)


ABSTAIN_GRID = [0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.01]


def fit_abstain(results: list[dict[str, Any]], max_wrong: float) -> None:
    """The lowest decline probability that adds no more than ``max_wrong`` answerable
    refusals of the tuning half, in any language, to those the gate and the model's own
    written refusals make anyway (from a run made with ``--abstain 1.01``, which records each
    question's probability and the model's own answer); both halves printed."""
    def refused(r: dict[str, Any], cut: float) -> bool:
        return bool(r["no_basis"] or (r.get("decline_p") or 0.0) >= cut)

    def shares(rows: list[dict[str, Any]], cut: float) -> tuple[float, float]:
        a = [r for r in rows if r["kind"] == "a"]
        u = [r for r in rows if r["kind"] == "u"]
        return (sum(refused(r, cut) for r in a) / max(1, len(a)), sum(refused(r, cut) for r in u) / max(1, len(u)))

    tune = [r for r in results if r["half"] == "tune"]
    langs = sorted({r["lang"] for r in results})
    print("\ndecline probability: answerable refused / unanswerable refused, per language (tuning half)")
    chosen = None
    anyway = {lang: shares([r for r in tune if r["lang"] == lang], 2.0)[0] for lang in langs}
    for cut in ABSTAIN_GRID:
        cells = {lang: shares([r for r in tune if r["lang"] == lang], cut) for lang in langs}
        print(f"  >= {cut:4.2f}: " + "  ".join(f"{lang} {a:.0%} / {u:.0%}" for lang, (a, u) in cells.items()))
        if chosen is None and all(a <= anyway[lang] + max_wrong for lang, (a, _) in cells.items()):
            chosen = cut
    print(f"chosen on the tuning half: ABSTAIN_PROBABILITY = {chosen}")
    if chosen is not None:
        for half in HALVES:
            rows = [r for r in results if r["half"] == half]
            if rows:
                print(f"  {half}: " + "  ".join(
                    "{} answerable refused {:.0%}, unanswerable refused {:.0%}".format(lang, *shares(
                        [r for r in rows if r["lang"] == lang], chosen)) for lang in langs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("retrieve", help="retrieval and the gate, no model")
    p.add_argument("--db", type=Path)
    p.add_argument("--languages", default="en,de,zh")
    p.add_argument("--fit", action="store_true", help="fit the gate's thresholds on the tuning half")
    p.add_argument("--embedder", default="default", help="the Settings choice the library was built with")
    p.add_argument("--cjk-dense", type=float, default=None, help="dense weight for Chinese (multilingual)")
    p.add_argument("--latin-dense", type=float, default=None, help="dense weight for English and German")
    p.add_argument("--max-wrong", type=float, default=0.0, help="answerable refusals allowed when fitting")
    p.add_argument("--from-json", default="")
    p.add_argument("--json-out", default="")
    p = sub.add_parser("answers", help="whole answers with a model")
    p.add_argument("--db", type=Path, required=True)
    p.add_argument("--model", default="default")
    p.add_argument("--languages", default="en,de,zh")
    p.add_argument("--half", choices=("tune", "held", "all"), default="held")
    p.add_argument("--limit", type=int, default=0, help="questions per language and kind")
    p.add_argument("--ids", default="", help="only these question ids (comma-separated)")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=0, help="cut answers short (enough to see a refusal)")
    p.add_argument("--grammar", action="store_true", help="answer under the citation grammar")
    p.add_argument("--sources", type=int, default=0, help="sources per answer (0: the Settings default)")
    p.add_argument("--judge", action="store_true", help="run the judge after each answer, as the window does")
    p.add_argument("--no-steering", action="store_true", help="answers without any steering (core/models/steer.py)")
    p.add_argument("--no-source-choice", action="store_true",
                   help="the number inside a marker left to the model (steer.SourceChoice off)")
    p.add_argument("--kinds", default="a,u", help="a (answerable), u (unanswerable) or both")
    p.add_argument("--abstain", type=float, default=gate.ABSTAIN_PROBABILITY,
                   help="decline when the model would say 'no answer' with this probability (1.01: never)")
    p.add_argument("--json-out", default="")
    p = sub.add_parser("report", help="print saved answer runs")
    p.add_argument("runs", nargs="+")
    p.add_argument("--fit-abstain", action="store_true", help="fit ABSTAIN_PROBABILITY on the tuning half")
    p.add_argument("--max-wrong", type=float, default=0.03)
    args = parser.parse_args()
    if args.command == "retrieve" and not (args.db or args.from_json):
        parser.error("retrieve needs --db or --from-json")
    {"retrieve": retrieve, "answers": answers, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
