"""Load test: a generated folder of many PDFs indexed end to end, then questions asked.

Generates ``--pdfs`` PDFs (default 1,000 of 5-15 pages, about 10,000 pages) of varied
text: sentences drawn from a vocabulary with a Zipf-like word distribution, one topic
per document, and one planted fact per document ("The rated pressure of unit Trizanpelqu
is 7,310 kPa.") on a known page other than the first. The unit's tag is a token that
appears nowhere else: not in any title, file name or page header, not in another
document, and only once in its own, so the search must find the page, not the document. Indexes the folder through the facade
(``KnowledgeBase.index``) with the real embedder, printing progress; then asks
``--questions`` of the planted facts through ``KnowledgeBase.search`` and, with
``--ask N``, N of them through ``KnowledgeBase.ask`` with the small (or ``--model``) GGUF.

Prints: generation and index time (wall and CPU seconds of this process and its parse
workers), pages/s and chunks/s, search latency p50/p95/p99 and the share of questions
whose planted page is in the top 5, answer latency, peak RSS (this process; the largest
child) and the size of the database.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/scale.py [--pdfs 1000] [--questions 50]
        [--ask 0] [--model small] [--work DIR]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from desktop_app.core.settings import Settings  # noqa: E402
from desktop_app.core.types import AnswerFinished, IndexProgress, IndexSummary, NoBasis, TokenDelta  # noqa: E402
from desktop_app.services.knowledge_base import KnowledgeBase  # noqa: E402
from tests.pdfgen import write_pdf  # noqa: E402

COMMON = (
    "the of and to in is that for it as with was on be by are this or not from at which an have "
    "has can we if its their they but these all more other when each must should may will been "
    "during after before between under over into than then also only most such where while both "
    "through about within without against because however therefore although"
).split()
TECHNICAL = (
    "system pressure valve pump seal bearing motor shaft housing flange gasket coupling sensor "
    "controller voltage current circuit relay breaker transformer cable conduit switch panel "
    "temperature coolant flow rate capacity load torque speed cycle interval schedule inspection "
    "maintenance repair replacement failure fault alarm warning limit threshold tolerance "
    "calibration measurement reading record report audit review approval contract supplier "
    "customer delivery invoice payment balance account ledger budget cost estimate revenue "
    "tenant landlord lease deposit notice clause section article schedule appendix annex "
    "permit license zoning parcel boundary survey easement drainage foundation concrete steel "
    "frame beam column slab roof insulation ventilation heating cooling lighting emergency exit "
    "operator technician engineer manager inspector contractor owner authority agency committee"
).split()
VERBS = (
    "checks replaces inspects records reports approves measures adjusts tightens cleans monitors "
    "requires reduces increases limits protects supports connects isolates verifies documents"
).split()
ATTRIBUTES = ("rated pressure", "service interval", "maximum torque", "design load", "nominal voltage",
              "warranty period", "operating temperature", "flow capacity")
UNITS = ("kPa", "hours", "N m", "kN", "V", "months", "degrees C", "litres per minute")
PARTS = ("coupling", "impeller", "gearbox", "manifold", "actuator", "compressor", "heat exchanger", "switchgear")
SYLLABLES = ("ka", "vo", "mor", "len", "tri", "zan", "pel", "qu", "ris", "dom", "sal", "ter", "nix", "bru")


@dataclass(frozen=True)
class Fact:
    pdf: str
    page: int
    question: str
    answer: str


def words(rng: random.Random, n: int, topic: list[str]) -> list[str]:
    pool = COMMON + TECHNICAL + topic * 6
    weights = [1.0 / (1 + i) ** 0.8 for i in range(len(COMMON))] + [0.05] * len(TECHNICAL) + [0.08] * len(topic) * 6
    return rng.choices(pool, weights=weights, k=n)


def sentence(rng: random.Random, topic: list[str]) -> str:
    subject = " ".join(words(rng, rng.randint(2, 4), topic))
    rest = " ".join(words(rng, rng.randint(4, 9), topic))
    return f"{subject.capitalize()} {rng.choice(VERBS)} {rest}."


def unique_word(rng: random.Random, syllables: int, used: set[str]) -> str:
    while True:
        word = "".join(rng.choice(SYLLABLES) for _ in range(syllables)).capitalize()
        if word.lower() not in used:
            used.add(word.lower())
            return word


def generate(folder: Path, pdfs: int, seed: int = 11) -> list[Fact]:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    facts = []
    used: set[str] = set()
    for number in range(pdfs):
        topic = rng.sample(TECHNICAL, 6)
        pages_n = rng.randint(5, 15)
        name = unique_word(rng, 3, used) + f"-{number:04d}"
        tag = unique_word(rng, 4, used)  # the planted fact's own token: nowhere else
        k = rng.randrange(len(ATTRIBUTES))
        value = f"{rng.randint(10, 9999):,}"
        fact_page = rng.randint(2, pages_n)
        pages = []
        for page in range(1, pages_n + 1):
            lines = [f"{page}. {' '.join(topic[:2]).title()} of the {name} {PARTS[k]}"]
            text = " ".join(sentence(rng, topic) for _ in range(18))
            if page == fact_page:
                text += f" The {ATTRIBUTES[k]} of unit {tag} is {value} {UNITS[k]}. "
                text += " ".join(sentence(rng, topic) for _ in range(3))
            line = ""
            for word in text.split():
                if len(line) + len(word) > 88:
                    lines.append(line)
                    line = ""
                line = f"{line} {word}".strip()
            lines.append(line)
            pages.append(lines[:44])
        path = folder / f"{number // 100:02d}" / f"report_{number:04d}.pdf"
        path.parent.mkdir(exist_ok=True)
        write_pdf(path, pages, title=f"{name} {PARTS[k]} report")
        facts.append(Fact(str(path), fact_page, f"What is the {ATTRIBUTES[k]} of unit {tag}?", value))
    return facts


def cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def peak_rss_mb() -> tuple[float, float]:
    """(this process, the largest reaped child) peak resident set, MiB (Linux: KiB units)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 1024 / 1024
    return me.ru_maxrss * scale, kids.ru_maxrss * scale


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


async def index(kb: KnowledgeBase, folder: Path) -> IndexSummary:
    summary = None
    last = 0.0
    async for event in kb.library.index(folder):
        if isinstance(event, IndexProgress) and time.monotonic() - last > 30:
            last = time.monotonic()
            eta = f", ETA {event.eta_seconds:.0f} s" if event.eta_seconds else ""
            print(f"  {event.files_done}/{event.files_total} files, {event.pages_done} pages,"
                  f" {event.chunks_done} chunks, {event.elapsed:.0f} s{eta}", flush=True)
        elif isinstance(event, IndexSummary):
            summary = event
    assert summary is not None
    return summary


async def main_async(args: argparse.Namespace) -> int:
    work = Path(args.work or tempfile.mkdtemp(prefix="folio-scale-"))
    folder, db = work / "docs", work / "library.duckdb"
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; work dir {work}", flush=True)
    t0 = time.perf_counter()
    facts = generate(folder, args.pdfs)
    print(f"generated {args.pdfs} PDFs in {time.perf_counter() - t0:.1f} s", flush=True)

    kb = KnowledgeBase(db, Settings(answer_model=args.model))
    try:
        (c0, k0), w0 = cpu(), time.perf_counter()
        summary = await index(kb, folder)
        (c1, k1), wall = cpu(), time.perf_counter() - w0
        cpu_s = (c1 - c0) + (k1 - k0)
        print(f"indexed {summary.documents} documents, {summary.pages} pages, {summary.chunks} chunks,"
              f" {len(summary.failed)} failed in {wall:.1f} s wall, {cpu_s:.1f} CPU-s ({k1 - k0:.1f} in parse"
              f" workers): {summary.pages / wall:.2f} pages/s, {summary.chunks / wall:.2f} chunks/s;"
              f" {summary.chunks / cpu_s:.2f} chunks/CPU-s; load {os.getloadavg()[0]:.1f}", flush=True)

        rng = random.Random(5)
        asked = rng.sample(facts, min(args.questions, len(facts)))
        await kb.library.search("warm up the retriever", 5)
        latencies, hits = [], 0
        for fact in asked:
            began = time.perf_counter()
            passages = await kb.library.search(fact.question, 5)
            latencies.append((time.perf_counter() - began) * 1000)
            hits += any(p.doc_path == fact.pdf and p.page == fact.page for p in passages)
        print(f"search over {summary.chunks} chunks, {len(asked)} questions: p50 {percentile(latencies, 50):.1f} ms,"
              f" p95 {percentile(latencies, 95):.1f} ms, p99 {percentile(latencies, 99):.1f} ms;"
              f" planted page in the top 5 for {hits}/{len(asked)}", flush=True)

        answer_times, first_token = [], []
        for fact in asked[: args.ask]:
            began = time.perf_counter()
            first = None
            text = ""
            async for event in kb.answers.ask(fact.question):
                if isinstance(event, TokenDelta) and first is None:
                    first = time.perf_counter() - began
                if isinstance(event, AnswerFinished):
                    text = event.text
                elif isinstance(event, NoBasis):
                    text = "(no basis) " + event.reason
            answer_times.append(time.perf_counter() - began)
            first_token.append(first if first is not None else float("nan"))
            verdict = "states" if fact.answer in text else "lacks"
            print(f"  ask {fact.question!r}: {answer_times[-1]:.1f} s; {verdict} the planted value"
                  f" {fact.answer}: {text[:120]!r}", flush=True)
        if answer_times:
            print(f"answers ({args.model} model): median {statistics.median(answer_times):.1f} s,"
                  f" first token median {statistics.median(first_token):.1f} s", flush=True)
    finally:
        await kb.close()
    rss_self, rss_child = peak_rss_mb()
    size = sum(p.stat().st_size for p in work.glob("library.duckdb*"))
    print(f"peak RSS: this process {rss_self:.0f} MiB, largest parse worker {rss_child:.0f} MiB;"
          f" database {size / 2**20:.1f} MiB", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdfs", type=int, default=1000)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--ask", type=int, default=0, help="also answer N questions with the GGUF")
    parser.add_argument("--model", default="small", help="answer model for --ask: small | default | PATH")
    parser.add_argument("--work", type=Path, default=None, help="where to put the PDFs and the library")
    args = parser.parse_args(argv)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
