"""Does the local model cite? FinanceBench questions answerable from ../shared's PDFs.

For each question the sources are built without Folio's index, so that only the prompt
and the model are measured: the PDF pages (pypdf) around the evidence page plus a few
random pages of the same filing, cut into ~1,000-character windows, ranked by a BM25
over those windows (best first, like retrieval) with the window that holds the gold
evidence kept within the top 3. "Unanswerable" cases ask a question over another
company's filing: the right reply is the refusal.

Prints one line per question and, for the answerable ones, the share of answer sentences
that carry a valid marker (target: >= 80% with the default model), the share of answers
with at least one, the hallucinated-label rate, a correctness proxy (the answer holds
the gold answer's key figure or words), refusals, and median time to first token and
tokens/s.

    .venv/bin/python bench/citing.py [--model default|small|PATH] [--limit 12 | --all]
        [--unanswerable 3] [--sources 3] [--chars 600] [--passage-tokens 200] [--grammar]
        [--prompts-dir DIR] [--zh] [--json-out FILE] [--rescore FILE]

``--folio --db CORPUS.duckdb`` measures citing with Folio's own retrieval instead (no
oracle passage forced in, refusals counted): the old path (whole chunks) and the new one
(evidence) through ``KnowledgeBase.ask`` over the corpus questions, interleaved
(bench/facade.py, the same run as ``bench/answer.py --facade``; ``--limit N``: the first N
questions of the half); ``--folio-rows FILE`` re-reports the rows such a run wrote.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.core.answer import prompts  # noqa: E402
from desktop_app.core.answer.citations import SourceMap, citation_grammar, find_markers  # noqa: E402
from desktop_app.core.text import words as terms  # noqa: E402
from desktop_app.core.types import Passage  # noqa: E402
from desktop_app.core.verdicts.verify import split_sentences  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
FINANCEBENCH = SHARED / "qa" / "financebench"
WINDOW_CHARS = 1000
GOLD_WITHIN = 3  # the evidence window is kept among the first this many sources
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_COMMON = frozenset(
    "yes no company fy2022 fy2023 fy2021 fy2024 year years answer here assumes refers months "
    "ended although period fiscal between from during which what there been this that".split()
)


@dataclass(frozen=True)
class Case:
    qid: str
    question: str
    gold: str
    doc_name: str  # the filing the sources come from
    pages: tuple[int, ...]  # 0-based evidence pages (empty: unanswerable)
    evidence: str
    folder: Path = FINANCEBENCH / "pdfs"


# A few Chinese questions over a Chinese quarterly report in ../shared/corpus (FinanceBench
# is English): (id, question, key, 0-based page); the last is asked over another file.
ZH_REPORT = "zh_report_dbdq_2018q1"
ZH_CASES = [
    ("zh-revenue", "东北电气2018年第一季度的营业收入是多少？", r"4,?755,?785", 2),
    ("zh-holders", "报告期末普通股股东总数是多少？", r"79,?053", 3),
    ("zh-head", "东北电气的公司负责人是谁？", r"刘道骐", 1),
    ("zh-hkscc", "香港中央结算（代理人）有限公司的持股比例是多少？", r"29\.43", 3),
    ("zh-cashflow", "2018年第一季度经营活动产生的现金流量净额是多少？", r"4,?194,?229", 2),
]


def load_zh_cases(unanswerable: int) -> list[Case]:
    corpus = SHARED / "corpus"
    if not (corpus / f"{ZH_REPORT}.pdf").is_file():
        sys.exit(f"{corpus} is absent: the Chinese cases need ../shared/corpus")
    cases = [Case(qid, q, key, ZH_REPORT, (page,), "", corpus) for qid, q, key, page in ZH_CASES]
    for qid, q, _, _ in ZH_CASES[:unanswerable]:
        cases.append(Case(qid + "-x", q, "", "zh_manual_ctex", (), "", corpus))
    return cases


def load_cases(limit: int | None, unanswerable: int) -> list[Case]:
    if not FINANCEBENCH.is_dir():
        sys.exit(f"{FINANCEBENCH} is absent: this benchmark needs ../shared/qa/financebench")
    have = {p.stem for p in (FINANCEBENCH / "pdfs").glob("*.pdf")}
    rows = [json.loads(line) for line in (FINANCEBENCH / "financebench_open_source.jsonl").open()]
    rows = [r for r in rows if r["doc_name"] in have]
    picked = rows if limit is None or limit >= len(rows) else [
        rows[round(i * len(rows) / limit)] for i in range(limit)
    ]
    cases = [
        Case(r["financebench_id"], r["question"], r["answer"], r["doc_name"],
             tuple(sorted({e["evidence_page_num"] for e in r["evidence"]})),
             " ".join(e["evidence_text"] for e in r["evidence"]))
        for r in picked
    ]
    # Unanswerable: a question asked over another company's filing.
    others = [r for r in rows if r not in picked] or rows
    docs = sorted(have)
    for i, r in enumerate(others[: max(0, unanswerable) * 5 : 5]):
        company = r["doc_name"].split("_")[0]
        wrong = next(d for d in docs[i * 3 :] + docs if not d.startswith(company))
        cases.append(Case(r["financebench_id"] + "-x", r["question"], "", wrong, (), ""))
    return cases


_page_cache: dict[str, list[str]] = {}


def page_texts(doc_name: str, folder: Path = FINANCEBENCH / "pdfs") -> list[str]:
    """Whitespace-normalised pypdf text per page (cached in the temp dir: pypdf is slow)."""
    if doc_name not in _page_cache:
        pdf = folder / f"{doc_name}.pdf"
        cache = Path(tempfile.gettempdir()) / "folio-bench-pages" / f"{doc_name}-{pdf.stat().st_size}.json"
        if cache.is_file():
            _page_cache[doc_name] = json.loads(cache.read_text(encoding="utf-8"))
        else:
            from pypdf import PdfReader

            reader = PdfReader(pdf)
            _page_cache[doc_name] = [" ".join((p.extract_text() or "").split()) for p in reader.pages]
            cache.parent.mkdir(exist_ok=True)
            cache.write_text(json.dumps(_page_cache[doc_name]), encoding="utf-8")
    return _page_cache[doc_name]


def windows(text: str, size: int = WINDOW_CHARS) -> list[tuple[int, int]]:
    spans, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            space = text.rfind(" ", start + size // 2, end)
            end = space if space > start else end
        spans.append((start, end))
        start = end + 1
    return spans


def _bm25(query: list[str], docs: list[list[str]]) -> list[float]:
    n = len(docs)
    avg = sum(len(d) for d in docs) / max(1, n)
    df = Counter(t for d in docs for t in set(d))
    scores = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in set(query):
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * len(d) / avg))
        scores.append(s)
    return scores


def passages_for(case: Case, count: int, seed: int = 7) -> list[Passage]:
    pages = page_texts(case.doc_name, case.folder)
    rng = random.Random(f"{seed}:{case.qid}")
    near = {p + d for p in case.pages for d in (-2, -1, 0, 1, 2)}
    pool = sorted(near | set(rng.sample(range(len(pages)), min(6, len(pages)))))
    if not case.pages:  # another filing: its pages that look most like the question
        pool = list(range(len(pages)))
    cands: list[tuple[int, int, int]] = [
        (p, a, b) for p in pool if 0 <= p < len(pages) for a, b in windows(pages[p])
        if b - a > 80
    ]
    scores = _bm25(terms.tokenize(case.question), [terms.tokenize(pages[p][a:b]) for p, a, b in cands])
    order = sorted(range(len(cands)), key=lambda i: -scores[i])
    if case.pages:
        evidence = set(terms.tokenize(case.evidence or pages[case.pages[0]]))
        gold = max((i for i, (p, _, _) in enumerate(cands) if p in case.pages),
                   key=lambda i: len(evidence.intersection(terms.tokenize(pages[cands[i][0]][cands[i][1]:cands[i][2]]))))
        if order.index(gold) >= GOLD_WITHIN:
            order.remove(gold)
            order.insert(GOLD_WITHIN - 1, gold)
    out = []
    for rank, i in enumerate(order[:count]):
        p, a, b = cands[i]
        out.append(Passage(
            chunk_id=f"{case.doc_name}:{p + 1}:{a}", doc_id=case.doc_name, doc_path=str(case.folder / f"{case.doc_name}.pdf"),
            doc_title=case.doc_name.replace("_", " "), page=p + 1, page_label=str(p + 1), section="",
            char_start=a, char_end=b, score=1.0 / (rank + 1), text=pages[p][a:b],
        ))
    return out


def _numbers(text: str) -> set[float]:
    out = set()
    for m in _NUMBER.findall(text):
        try:
            out.add(round(float(m.replace(",", "")), 2))
        except ValueError:
            continue
    return out


# The gold answer's key figure or phrase per question (a regex, case-insensitive): the
# correctness proxy. Questions not listed fall back to the gold's figures or key words.
KEYS = {
    "03029": r"1,?577", "04672": r"8\.7", "00438": r"34\.6|36\.8|declin|decreas", "00591": r"improv|increas",
    "06655": r"93\.\d", "08135": r"30\.8", "00799": r"0\.69|improv", "01079": r"czech|shanghai|new zealand",
    "01148": r"packag", "00684": r"declin|decreas", "01928": r"2,?018", "01930": r"flat|\b0(\.0)?%|unchanged",
    "00685": r"consistent|1\.1", "01077": r"current health|yardbird|two peaks", "01275": r"operating",
    "00288": r"declin|decreas|drop", "00460": r"969|982|declin|decreas", "01902": r"entertainment",
    "01488": r"consumer health|kenvue", "01490": r"20(\.0)? billion", "01491": r"13\.2", "00382": r"las vegas",
    "01911": r"negative|zero", "01912": r"china|macau", "01474": r"strong",
    "01476": r"1 percentage|one percentage|1 point|8%", "00283": r"77\.78|77\.8", "00724": r"developed rest of",
    "02419": r"upjohn", "00601": r"marketing|incentive", "00603": r"new stores|\b47\b", "00605": r"\b36",
    "00606": r"increas",
}


def correct(answer: str, gold: str, qid: str = "") -> bool:
    """Proxy: the answer holds the key of :data:`KEYS`; else the gold's key figures (if
    any) or at least half its key words."""
    key = KEYS.get(qid.removeprefix("financebench_id_")) or (gold if qid.startswith("zh-") else None)
    if key is not None:
        return re.search(key, answer, re.IGNORECASE) is not None
    first = re.split(r"(?<=[.!?])\s", gold.strip(), maxsplit=1)[0]
    gold_numbers = {n for n in _numbers(first) if n not in (2021, 2022, 2023, 2024, 2017, 2016, 2018)}
    if gold_numbers:
        got = _numbers(answer)
        return any(any(math.isclose(g, a, rel_tol=0.006) or math.isclose(g, a / 1000, rel_tol=0.006) or
                       math.isclose(g, a * 1000, rel_tol=0.006) for a in got) for g in gold_numbers)
    words = {w for w in terms.tokenize(first) if len(w) > 3 and w not in _COMMON}
    found = set(terms.tokenize(answer))
    return bool(words) and len(words & found) >= max(1, len(words) // 2)


def score_answer(text: str, labels: set[str], language: str) -> dict[str, float | int | bool]:
    refused = prompts.NO_ANSWER[language].rstrip(".。").lower() in text.lower()
    sentences = [s for s in split_sentences(text) if any(c.isalnum() for c in s.text)]
    cited = 0
    markers = find_markers(text, "label")
    for s in sentences:
        if any(i in labels for i, _ in find_markers(s.text, "label")):
            cited += 1
    bad = sum(1 for i, _ in markers if i not in labels)
    return {"sentences": len(sentences), "cited": cited, "markers": len(markers), "bad": bad,
            "refused": refused and not any(i in labels for i, _ in markers)}


def run(args: argparse.Namespace) -> list[dict[str, object]]:
    from desktop_app.core.models import catalog as models
    from desktop_app.core.models import generate
    from desktop_app.core.models.generate import LlamaGenerator

    if args.repeat_penalty is not None:
        generate.REPEAT_PENALTY = args.repeat_penalty
    path = models.resolve_answer_model(args.model)
    gen = LlamaGenerator(path, context_tokens=args.context, threads=args.threads)
    if args.zh:
        cases = load_zh_cases(args.unanswerable)
    else:
        cases = load_cases(None if args.all else (args.limit or 12), args.unanswerable)
    rows: list[dict[str, object]] = []
    for case in cases:
        passages = passages_for(case, args.sources)
        source_map = SourceMap.build(passages, "label")
        packed = prompts.build_prompt(
            case.question, [(lab, source_map.marker(lab), p) for lab, p in source_map.items()],
            count_tokens=gen.count_tokens, context_tokens=gen.context_tokens, answer_tokens=args.max_tokens,
            prompts_dir=args.prompts_dir, passage_chars=args.chars, passage_tokens=args.passage_tokens or None,
        )
        grammar = None
        if args.grammar:
            grammar = citation_grammar(packed.labels, every_sentence=True,
                                       refusals=[prompts.NO_ANSWER[packed.language]])
        started = time.perf_counter()
        text = "".join(gen.stream(packed.messages, max_tokens=args.max_tokens, temperature=args.temperature,
                                  grammar=grammar))
        stats = gen.last_stats
        assert stats is not None
        scored = score_answer(text, set(packed.labels), packed.language)
        gold_pages = {p + 1 for p in case.pages}
        cited_pages = {source_map.resolve(i).page for i, _ in find_markers(text, "label")  # type: ignore[union-attr]
                       if i in packed.labels}
        row = {
            "qid": case.qid, "answerable": bool(case.pages), **scored,
            "correct": bool(case.pages) and correct(text, case.gold, case.qid),
            "cites_gold_page": bool(cited_pages & gold_pages),
            "prompt_tokens": stats.prompt_tokens, "ttft": round(stats.seconds_to_first_token, 2),
            "tps": round(stats.tokens_per_second, 2), "seconds": round(time.perf_counter() - started, 1),
            "answer": text,
        }
        rows.append(row)
        flag = "ok " if row["correct"] else ("REF" if scored["refused"] else "-- ")
        print(f"{case.qid:<26} {'ans' if case.pages else 'UNA'} {flag} cited {scored['cited']}/{scored['sentences']}"
              f" bad {scored['bad']} prompt {stats.prompt_tokens} ttft {stats.seconds_to_first_token:5.1f}s"
              f" {stats.tokens_per_second:4.1f} tok/s | {' '.join(text.split())[:150]}", flush=True)
    return rows


def summarise(rows: list[dict[str, object]]) -> dict[str, float]:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    spoken = [r for r in ans if not r["refused"]]
    sentences = sum(int(r["sentences"]) for r in spoken)  # type: ignore[call-overload]
    markers = sum(int(r["markers"]) for r in rows)  # type: ignore[call-overload]

    def share(k: int, n: int) -> float:
        return round(k / n, 3) if n else float("nan")

    return {
        "answerable": len(ans),
        "sentences_cited": share(sum(int(r["cited"]) for r in spoken), sentences),  # type: ignore[call-overload]
        "answers_with_marker": share(sum(1 for r in spoken if int(r["markers"]) > int(r["bad"])), len(spoken)),  # type: ignore[call-overload]
        "hallucinated_rate": share(sum(int(r["bad"]) for r in rows), markers),  # type: ignore[call-overload]
        "correct": share(sum(1 for r in ans if r["correct"]), len(ans)),
        "cites_gold_page": share(sum(1 for r in ans if r["cites_gold_page"]), len(ans)),
        "false_refusals": sum(1 for r in ans if r["refused"]),
        "unanswerable": len(una),
        "refused_unanswerable": sum(1 for r in una if r["refused"]),
        "median_ttft_s": statistics.median(float(r["ttft"]) for r in rows),  # type: ignore[arg-type]
        "median_prompt_tokens": statistics.median(int(r["prompt_tokens"]) for r in rows),  # type: ignore[call-overload]
        "median_tokens_per_s": statistics.median(float(r["tps"]) for r in rows),  # type: ignore[arg-type]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="default", help="default | small | PATH.gguf")
    parser.add_argument("--limit", type=int, default=None,
                        help="answerable questions (spread over the 33; default 12); --folio: the first N of the half (default all)")
    parser.add_argument("--all", action="store_true", help="all 33 answerable questions")
    parser.add_argument("--unanswerable", type=int, default=3, help="questions asked over another filing")
    parser.add_argument("--zh", action="store_true", help="the Chinese cases instead of FinanceBench")
    parser.add_argument("--sources", type=int, default=3, help="sources per answer")
    parser.add_argument("--chars", type=int, default=prompts.MAX_PASSAGE_CHARS, help="characters per source")
    parser.add_argument("--passage-tokens", type=int, default=prompts.MAX_PASSAGE_TOKENS,
                        help="tokens per source (0: no cap)")
    parser.add_argument("--grammar", action="store_true", help="constrain with citation_grammar(every_sentence)")
    parser.add_argument("--prompts-dir", type=Path, default=None, help="a folder of prompt templates")
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--temperature", type=float, default=0.1)
    parser.add_argument("--repeat-penalty", type=float, default=None)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--json-out", type=Path, default=None, help="write rows and summary here")
    parser.add_argument("--rescore", type=Path, default=None, help="re-score the rows of a --json-out file")
    parser.add_argument("--folio", action="store_true", help="Folio's own retrieval, old vs new path (bench/facade.py)")
    parser.add_argument("--db", type=Path, default=None, help="--folio: ../shared/corpus indexed here")
    parser.add_argument("--embedder", default="default", help="--folio: the embedder the library was indexed with")
    parser.add_argument("--half", default="held", help="--folio: tune | held | all")
    parser.add_argument("--folio-rows", type=Path, default=None, help="--folio: report the rows of this file")
    args = parser.parse_args()
    if args.folio or args.folio_rows:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import facade

        if args.folio_rows:
            folio_rows = [json.loads(line) for line in args.folio_rows.read_text(encoding="utf-8").splitlines() if line]
        else:
            if args.db is None:
                raise SystemExit("--folio needs --db (../shared/corpus indexed with folio index)")
            folio_rows = facade.run(args.db, model=args.model, threads=args.threads or 2, half=args.half,
                                    limit=None if args.all else args.limit,
                                    embedder=args.embedder, rows_out=args.json_out)
        print(facade.quality_report(folio_rows))
        print(facade.timing_report(folio_rows))
        return
    if args.rescore:
        rows = json.loads(args.rescore.read_text())["rows"]
        for row in rows:
            gold = next((c.gold for c in load_cases(None, 0) + load_zh_cases(0) if c.qid == row["qid"]), "")
            row["correct"] = bool(row["answerable"]) and correct(str(row["answer"]), gold, str(row["qid"]))
        print(json.dumps(summarise(rows), indent=1))
        return
    rows = run(args)
    summary = summarise(rows)
    print(json.dumps(summary, indent=1))
    if args.json_out:
        args.json_out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                             "summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
