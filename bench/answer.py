"""Answer speed inside Folio vs llama.cpp alone, on the same rendered prompt.

For each model (small, default) it times, interleaved and each with a cold KV cache:

- Folio: ``LlamaGenerator.stream(messages)`` (template rendering, token count, the first
  chunk pulled eagerly, cancellation checks, stats), timed from the call to each delta;
- llama.cpp alone: ``Llama.create_completion(prompt, stream=True)`` on the same ``Llama``
  instance (so the same weights, buffers and threads), with the prompt Folio rendered and
  the same sampling;
- with ``--grammar``: Folio again under the citation grammar (``citation_grammar(labels,
  every_sentence=True)``), to show what constrained sampling costs;
- with ``--while-indexing``: everything above again while ``folio index`` indexes
  ``../shared/corpus`` in another process (restarted on a fresh library whenever it
  finishes), so both sides share the machine with ingestion, as in the window;
- with ``--facade-vs-alone``: ``KnowledgeBase.ask`` on a library of one FinanceBench PDF
  indexed into a temporary FOLIO_HOME (retrieval, prompt, stream, citations, checks),
  against llama.cpp alone on the prompt the facade built (interleaved too).

Prints the median time to first token and decode tokens/s of each, and Folio's ratio to
llama.cpp alone (tokens/s Folio ÷ alone, and time to first token alone ÷ Folio; target
>= 0.95 for both).

``--facade`` is the headline instead (bench/facade.py): the old path (whole chunks, no
draft) and the new path (evidence, Settings' draft) through ``KnowledgeBase.ask`` over the
corpus questions, interleaved per question with the same model and threads; prints the
median seconds to the sources on screen, to the first token and to the whole answer, the
median prompt tokens, the ratios new ÷ old, and the citation figures of both paths.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/answer.py [--models small,default]
        [--runs 3] [--max-tokens 48] [--threads 1] [--grammar] [--facade-vs-alone] [--while-indexing]
    FOLIO_HOME=... .venv/bin/python bench/answer.py --facade --db CORPUS.duckdb
        [--models default] [--threads 2] [--half held|tune|all] [--limit N] [--rows-out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from desktop_app.core.answer import prompts  # noqa: E402
from desktop_app.core.answer.citations import SourceMap, citation_grammar  # noqa: E402
from desktop_app.core.models import generate  # noqa: E402
from desktop_app.core.models.generate import LlamaGenerator  # noqa: E402

Timing = tuple[float, float, int]  # (seconds to first token, decode tokens/s, tokens)


def _time_stream(start: float, deltas: Iterable[str]) -> Timing:
    """Time to the first visible text and the rate of visible deltas after it (empty chunks,
    which llama-cpp-python sends while it holds back a possible stop string or half a
    character, are not counted on either side)."""
    first = None
    count = 0
    for text in deltas:
        if not text:
            continue
        count += 1
        if first is None:
            first = time.perf_counter()
    end = time.perf_counter()
    if first is None:
        return float("nan"), float("nan"), 0
    rate = (count - 1) / (end - first) if count > 1 and end > first else float("nan")
    return first - start, rate, count


def time_folio(gen: LlamaGenerator, messages: Sequence[dict[str, str]], max_tokens: int,
               grammar: str | None = None) -> Timing:
    gen._llm.reset()  # cold prompt, like llama.cpp alone
    start = time.perf_counter()
    return _time_stream(start, gen.stream(messages, max_tokens=max_tokens, temperature=0.0, grammar=grammar))


def time_alone(llm: Any, prompt: str, max_tokens: int, stop: list[str]) -> Timing:
    llm.reset()
    start = time.perf_counter()
    chunks = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, top_p=generate.TOP_P,
                                   repeat_penalty=generate.REPEAT_PENALTY, stream=True, stop=stop)
    return _time_stream(start, (chunk["choices"][0]["text"] for chunk in chunks))


def sample_prompt(gen: LlamaGenerator, sources: int) -> tuple[list[dict[str, str]], list[str]]:
    """A FinanceBench question with its sources (bench/citing.py), else a synthetic one."""
    try:
        import citing

        case = citing.load_cases(1, 0)[0]
        question, passages = case.question, citing.passages_for(case, sources)
    except SystemExit:
        from desktop_app.core.types import Passage

        question = "What was the capital expenditure in 2018?"
        passages = [Passage(f"c{i}", "d", "r.pdf", "Annual report", i, str(i), "", 0, 900, 1.0,
                            "Purchases of property, plant and equipment were $1,577 million in 2018. " * 12)
                    for i in range(1, sources + 1)]
    source_map = SourceMap.build(passages)
    packed = prompts.build_prompt(
        question, [(lab, source_map.marker(lab), p) for lab, p in source_map.items()],
        count_tokens=gen.count_tokens, context_tokens=gen.context_tokens, answer_tokens=320)
    return packed.messages, packed.labels


def _median(values: Iterable[float]) -> float:
    return statistics.median(values)


def report(name: str, folio: list[Timing], alone: list[Timing]) -> None:
    f_ttft, a_ttft = _median(t[0] for t in folio), _median(t[0] for t in alone)
    f_tps, a_tps = _median(t[1] for t in folio), _median(t[1] for t in alone)
    print(f"  {name:<22} first token {f_ttft:6.2f} s | {f_tps:5.2f} tok/s"
          f"   alone: {a_ttft:6.2f} s | {a_tps:5.2f} tok/s"
          f"   ratio tok/s {f_tps / a_tps:.3f}, first token {a_ttft / f_ttft:.3f}", flush=True)
    print(f"  {'':<22} runs: Folio {[(round(t[0], 1), round(t[1], 1)) for t in folio]}"
          f" alone {[(round(t[0], 1), round(t[1], 1)) for t in alone]}", flush=True)


def interleave(runs: int, folio: Callable[[], Timing], alone: Callable[[], Timing]) -> tuple[list[Timing], list[Timing]]:
    ours: list[Timing] = []
    theirs: list[Timing] = []
    for i in range(runs):  # alternate who goes first, so drifting load hits both alike
        pair = (folio, alone) if i % 2 == 0 else (alone, folio)
        results = [fn() for fn in pair]
        ours.append(results[0] if i % 2 == 0 else results[1])
        theirs.append(results[1] if i % 2 == 0 else results[0])
    return ours, theirs


def bench_model(choice: str, args: argparse.Namespace) -> None:
    from desktop_app.core.models import catalog as models

    path = models.resolve_answer_model(choice)
    gen = LlamaGenerator(path, context_tokens=args.context, threads=args.threads)
    llm = gen._llm  # llama.cpp alone: the same instance, driven directly
    messages, labels = sample_prompt(gen, args.sources)
    prompt = gen.render(messages)
    stop = [s for s in (gen._eos, "<|im_end|>", "<|endoftext|>") if s]
    print(f"{choice}: {path.name}, {gen.threads} thread(s), prompt {gen.count_tokens(prompt)} tokens,"
          f" {args.max_tokens} new tokens at most, {args.runs} runs", flush=True)
    folio, alone = interleave(args.runs, lambda: time_folio(gen, messages, args.max_tokens),
                              lambda: time_alone(llm, prompt, args.max_tokens, stop))
    report("LlamaGenerator.stream", folio, alone)
    if args.grammar:
        grammar = citation_grammar(labels, every_sentence=True, refusals=[prompts.NO_ANSWER["en"]])
        constrained = [time_folio(gen, messages, args.max_tokens, grammar) for _ in range(args.runs)]
        report("stream + grammar", constrained, alone)
    if args.facade_vs_alone:
        bench_facade(gen, llm, stop, args)


def bench_facade(gen: LlamaGenerator, llm: Any, stop: list[str], args: argparse.Namespace) -> None:
    """KnowledgeBase.ask on one indexed PDF vs llama.cpp alone on the prompt ask built."""
    import citing

    from desktop_app.core.settings import Settings
    from desktop_app.services.knowledge_base import KnowledgeBase

    seen: list[list[dict[str, str]]] = []
    original = gen.stream

    def recording_stream(messages: Sequence[dict[str, str]], **kwargs: Any) -> Any:
        seen.append(list(messages))
        gen._llm.reset()  # cold prompt, like llama.cpp alone
        return original(messages, **kwargs)

    gen.stream = recording_stream  # type: ignore[method-assign]
    case = citing.load_cases(12, 0)[7]  # the Johnson & Johnson 8-K: a small filing
    with tempfile.TemporaryDirectory() as home:
        os.environ["FOLIO_HOME"] = home
        folder = Path(home) / "docs"
        folder.mkdir()
        (folder / f"{case.doc_name}.pdf").symlink_to(citing.FINANCEBENCH / "pdfs" / f"{case.doc_name}.pdf")
        settings = Settings(max_tokens=args.max_tokens, temperature=0.0, threads=gen.threads)
        kb = KnowledgeBase(Path(home) / "library.duckdb", settings, generator=gen)

        async def index_and_ask() -> tuple[list[Timing], list[Timing]]:
            async for _ in kb.library.index(folder):
                pass
            timings, alone = [], []
            for i in range(args.runs):
                if i:  # between two asks, on the prompt the first one built
                    alone.append(time_alone(llm, gen.render(seen[0]), args.max_tokens, stop))
                start = time.perf_counter()
                first, count, end = None, 0, start
                async for event in kb.answers.ask(case.question):
                    if event.event == "token" and event.text:
                        count += 1
                        first = first or time.perf_counter()
                        end = time.perf_counter()
                assert first is not None, "the facade gave no answer"
                timings.append((first - start, (count - 1) / (end - first) if count > 1 else float("nan"), count))
            alone.append(time_alone(llm, gen.render(seen[0]), args.max_tokens, stop))
            await kb.close()
            return timings, alone

        folio, alone = asyncio.run(index_and_ask())
    gen.stream = original  # type: ignore[method-assign]
    print(f"  facade prompt: {gen.count_tokens(gen.render(seen[0]))} tokens")
    report("KnowledgeBase.ask", folio, alone)


@contextlib.contextmanager
def background_indexing() -> Any:
    """``folio index ../shared/corpus`` in a loop in another process, each pass into a
    fresh library, until the block ends."""
    corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus"
    if not corpus.is_dir():
        raise SystemExit(f"{corpus} is absent: --while-indexing indexes it")
    stop = threading.Event()
    passes = [0]

    def loop(scratch: str) -> None:
        while not stop.is_set():
            db = Path(scratch) / f"busy{passes[0]}.duckdb"
            with subprocess.Popen([sys.executable, "-m", "desktop_app", "index", str(corpus), "--db", str(db)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
                while proc.poll() is None:
                    if stop.wait(0.2):
                        proc.terminate()
                        proc.wait(30)
                        return
            passes[0] += 1
            db.unlink(missing_ok=True)

    with tempfile.TemporaryDirectory() as scratch:
        worker = threading.Thread(target=loop, args=(scratch,), daemon=True)
        worker.start()
        time.sleep(8)  # past start-up: parsing and embedding are under way
        try:
            yield
        finally:
            stop.set()
            worker.join(60)
            print(f"  (indexing ran alongside: {passes[0]} complete pass(es) of the corpus)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="small,default", help="comma-separated: small, default, PATH.gguf")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--sources", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="default: cores - 1 (Folio's default)")
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--grammar", action="store_true", help="also time Folio under the citation grammar")
    parser.add_argument("--facade-vs-alone", action="store_true",
                        help="also time KnowledgeBase.ask on one indexed PDF against llama.cpp alone")
    parser.add_argument("--while-indexing", action="store_true",
                        help="also time everything while folio index runs in another process")
    parser.add_argument("--facade", action="store_true",
                        help="old path vs new path through KnowledgeBase.ask over the corpus questions")
    parser.add_argument("--db", type=Path, default=None, help="--facade: ../shared/corpus indexed here")
    parser.add_argument("--embedder", default="default", help="--facade: the embedder the library was indexed with")
    parser.add_argument("--half", default="held", help="--facade: tune | held | all")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--rows-out", type=Path, default=None, help="--facade: append each answer's row here")
    parser.add_argument("--report", type=Path, default=None, help="--facade: only report the rows of this file")
    args = parser.parse_args()
    if args.facade or args.report:
        import json

        import facade

        if args.report:
            rows = [json.loads(line) for line in args.report.read_text(encoding="utf-8").splitlines() if line]
        else:
            if args.db is None:
                raise SystemExit("--facade needs --db (../shared/corpus indexed with folio index)")
            rows = facade.run(args.db, model=args.models.split(",")[-1].strip(), threads=args.threads or 2,
                              half=args.half, limit=args.limit, embedder=args.embedder,
                              rows_out=args.rows_out)
        print(facade.timing_report(rows))
        print(facade.quality_report(rows))
        return
    for choice in args.models.split(","):
        bench_model(choice.strip(), args)
    if args.while_indexing:
        print("while indexing ../shared/corpus in another process:", flush=True)
        with background_indexing():
            for choice in args.models.split(","):
                bench_model(choice.strip(), args)


if __name__ == "__main__":
    main()
