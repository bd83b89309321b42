"""Where the seconds before an answer's first word go, with the default model, over the
corpus questions (bench/data/corpus_{en,zh}.json, split by bench/retrieval.py's half()).

Modes:

- ``warm``: the window's path. One KnowledgeBase, warmed up as the window does it when it
  opens (model process started, one prompt head per language read and kept), then each
  question through ``KnowledgeBase.ask``; prints each step of ``stats["first_word"]`` as a
  median, time to first token ÷ prefill_s, and the first visible word.
- ``cold``: the command line's path. A fresh ``folio ask --json --no-keep-alive`` per
  question (interpreter, imports, model load, the whole prompt read); prints the same
  medians, the model's load time and the wall time from starting the command to its first
  visible word. With ``--keep-alive`` each question is also asked through the model kept
  loaded between commands (core/models/keep_alive.py), in alternating order; the command that
  starts the kept model is reported on its own.
- ``threads``: prefill seconds with llama.cpp's n_threads_batch 1 and 2, alternately on
  the same prompts (the machine may be busy with other work: medians and their ratio).
- ``steer``: decode tokens/s with the steering on and off, alternately on the same prompts.
- ``answers``: each question's answer text and citations at temperature 0 as JSON lines,
  with the threads that read its prompt (run it on two commits and diff the text and
  citations: the same whatever the threads).
- ``followup``: what a conversation adds before the first word. For each follow-up pair
  of bench/data/followup_pairs.jsonl (``--half`` by bench/followup.py's split), after its
  first question: the follow-up asked in the conversation (``--follow-up``: the rules and
  the recalled turns) and the same follow-up asked alone but searched for the same
  standalone question (the same sources, no recalled turns, no rules), in alternating
  order; prints the medians of both, of their per-pair difference, and of the extra
  prompt tokens.
- ``history``: the recalled turns' reading time alone, with less noise than ``followup``:
  for each follow-up pair, the prompt of its standalone question (sources as answering
  builds them) packed with the earlier turn recalled and without, both read by the
  default model in alternating order (the worked-example head cached, as in the window);
  the earlier answer is the first 120 characters of the first question's best passage
  (a real answer is cut to that length). Prints the medians and the per-pair added time.

    FOLIO_HOME=/tmp/h FOLIO_MODELS_DIR=... .venv/bin/python bench/first_word.py warm \\
        --db /tmp/corpus.duckdb [--half held] [--max-tokens 64] [--runs 1]

The library is ../shared/corpus indexed with ``folio index ../shared/corpus --db ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
DATA = REPO / "bench" / "data"

from desktop_app.core.types import FIRST_WORD_STEP_NAMES  # noqa: E402

# Each step before the first word, in the order they run (the one list: core/types), then
# the two totals.
SHOWN = tuple(step for step, _ in FIRST_WORD_STEP_NAMES) + ("first_token_s", "first_word_s")


def half(qid: str) -> str:
    """bench/retrieval.py's split: odd trailing number "tune", even "held"."""
    import re

    digits = re.search(r"(\d+)\D*$", qid)
    assert digits is not None, qid
    return "tune" if int(digits.group(1)) % 2 else "held"


LIMIT = 0  # --limit: the first N questions only (0: all)
IDS: list[str] = []  # --ids: these questions only, in this order


def questions(which: str) -> list[tuple[str, str]]:
    """(id, question) of the corpus questions of one half ("tune", "held") or both ("all"),
    English and Chinese alternating (so that --limit keeps both languages)."""
    by_language: list[list[tuple[str, str]]] = []
    for name in ("corpus_en.json", "corpus_zh.json"):
        by_language.append([(q["id"], q["question"])
                            for q in json.loads((DATA / name).read_text(encoding="utf-8"))["questions"]
                            if which == "all" or half(q["id"]) == which])
    out = [q for pair in itertools.zip_longest(*by_language) for q in pair if q is not None]
    if IDS:
        out = sorted((q for q in out if q[0] in IDS), key=lambda q: IDS.index(q[0]))
    return out[:LIMIT] if LIMIT else out


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(title: str, rows: list[dict[str, Any]]) -> None:
    """Medians of each step over the answered questions, and the acceptance figures."""
    answered = [r for r in rows if r.get("first_word")]
    print(f"\n{title}: {len(answered)} of {len(rows)} questions answered by the model")
    if not answered:
        return
    steps = [r["first_word"] for r in answered]
    for key in SHOWN:
        print(f"  {key:<20} {median([s.get(key, 0.0) for s in steps]):7.2f} s")
    print(f"  {'prefill_tokens':<20} {median([s.get('prefill_tokens', 0) for s in steps]):7.0f}")
    print(f"  {'pack_token_counts':<20} {median([s.get('pack_token_counts', 0) for s in steps]):7.0f}")
    print(f"  {'prefill_threads':<20} {median([s.get('prefill_threads', 0) for s in steps]):7.1f}")
    loads = [s["model_load_ms"] / 1000 for s in steps if s.get("model_load_ms")]
    if loads:
        print(f"  {'model load (process)':<20} {median(loads):7.2f} s  ({len(loads)} loads)")
    ttft = median([s.get("first_token_s", 0.0) for s in steps])
    prefill = median([s.get("prefill_s", 0.0) for s in steps])
    print(f"  median first token ÷ median prefill_s: {ttft / prefill:.2f}" if prefill else "")
    decode = [r["stats"].get("tokens_per_s", 0.0) for r in answered if r["stats"].get("tokens_per_s")]
    print(f"  decode tokens/s (median): {median(decode):.2f}")
    walls = [r["wall_first_word_s"] for r in answered if r.get("wall_first_word_s")]
    if walls:
        print(f"  command start -> first visible word (median): {median(walls):.2f} s")


def _settings(args: argparse.Namespace) -> Any:
    from desktop_app.core.settings import Settings

    return Settings(max_tokens=args.max_tokens, temperature=args.temperature, judge=False)


async def _ask_all(kb: Any, asked: list[tuple[str, str]], runs: int) -> list[dict[str, Any]]:
    rows = []
    for _ in range(runs):
        for qid, question in asked:
            row: dict[str, Any] = {"id": qid, "stats": {}, "text": "", "citations": {}}
            async for event in kb.answers.ask(question):
                if event.event == "answer_finished":
                    row.update(stats=event.stats, first_word=event.stats.get("first_word", {}),
                               text=event.text, citations={k: [list(s) for s in v]
                                                           for k, v in event.citations.items()})
                elif event.event == "no_basis":
                    row["no_basis"] = event.reason
            print(f"  {qid}: first word {row.get('first_word', {}).get('first_word_s', float('nan')):.2f} s,"
                  f" prefill {row['stats'].get('prefill_tokens', 0)} tokens"
                  f" ({row['stats'].get('prefill_threads', 0)} threads)"
                  f" {row['stats'].get('prefill_s', 0.0):.2f} s", flush=True)
            rows.append(row)
    return rows


def warm(args: argparse.Namespace) -> None:
    from desktop_app.services.knowledge_base import KnowledgeBase

    async def run() -> list[dict[str, Any]]:
        kb = KnowledgeBase(args.db, _settings(args))
        begun = time.perf_counter()
        kb.models.warm_up()
        cached = await kb.models.answer_model_ready()
        for _ in range(3):  # the other languages' heads, each its own job on the model's thread
            await kb.bridge.call(kb.bridge.llm_pool, lambda: None)
        print(f"warm-up: model loaded and {cached}-token head read in"
              f" {time.perf_counter() - begun:.1f} s (all heads read)", flush=True)
        try:
            return await _ask_all(kb, questions(args.half), args.runs)
        finally:
            await kb.close()

    report(f"warm path (the window), {args.half} half", asyncio.run(run()))


def _command(args: argparse.Namespace, env: dict[str, str], qid: str, question: str, keep: bool) -> dict[str, Any]:
    """One `folio ask --json`: its figures and the wall time to its first visible word."""
    begun = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop_app", "ask", question, "--db", str(args.db), "--json",
         *([] if keep else ["--no-keep-alive"])],
        stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
    assert process.stdout is not None
    row: dict[str, Any] = {"id": qid, "stats": {}}
    written = ""
    for line in process.stdout:
        event = json.loads(line)
        if event["event"] == "token":
            written += event["text"]
            if "wall_first_word_s" not in row and any(ch.isalnum() for ch in written):
                row["wall_first_word_s"] = time.perf_counter() - begun
        elif event["event"] == "answer_finished":
            row.update(stats=event["stats"], first_word=event["stats"].get("first_word", {}))
    process.wait()
    print(f"  {qid} ({'kept model' if keep else 'own model'}): command to first word"
          f" {row.get('wall_first_word_s', float('nan')):.2f} s, in-process first word"
          f" {row.get('first_word', {}).get('first_word_s', float('nan')):.2f} s,"
          f" {row['stats'].get('cached_tokens', 0)} tokens cached", flush=True)
    return row


def cold(args: argparse.Namespace) -> None:
    """With --keep-alive: the first command starts the kept model (reported on its own), then
    each question is asked with the kept model and with a model of its own, in alternating
    order, so that a busy neighbour favours neither."""
    env = dict(os.environ, PYTHONPATH=str(REPO), FOLIO_KEEP_ALIVE="600")
    config = Path(os.environ.get("FOLIO_HOME", "/tmp")) / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(f"max_tokens = {args.max_tokens}\ntemperature = {args.temperature}\n"
                                          "judge = false\n", encoding="utf-8")
    asked = questions(args.half)
    rows: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    first: list[dict[str, Any]] = []
    if args.keep_alive:
        subprocess.run([sys.executable, "-m", "desktop_app", "models", "stop"], env=env, cwd=REPO, check=True)
        first.append(_command(args, env, *asked[0], keep=True))
    try:
        for run in range(args.runs):
            for n, (qid, question) in enumerate(asked):
                order = ((True, False) if (n + run) % 2 == 0 else (False, True)) if args.keep_alive else (False,)
                for keep in order:
                    rows[keep].append(_command(args, env, qid, question, keep))
    finally:
        if args.keep_alive:
            subprocess.run([sys.executable, "-m", "desktop_app", "models", "stop"], env=env, cwd=REPO, check=True)
    report(f"cold path (a fresh `folio ask` each, its own model), {args.half} half", rows[False])
    if args.keep_alive:
        report("the first command, which starts the kept model (not in the medians below)", first)
        report(f"kept model (`folio ask` reusing it), {args.half} half", rows[True])
        pairs = [(a["wall_first_word_s"], b["wall_first_word_s"]) for a, b in zip(rows[True], rows[False], strict=True)
                 if a.get("wall_first_word_s") and b.get("wall_first_word_s")]
        if pairs:
            print(f"\nkept ÷ own model, command start -> first word, median of the per-question ratios:"
                  f" {median([a / b for a, b in pairs]):.2f} ({len(pairs)} questions)")


def _prompts(args: argparse.Namespace, generator: Any) -> list[tuple[list[dict[str, str]], Any]]:
    """The packed prompts (and steering) of the questions, as answering.answer builds them."""
    from desktop_app.core.answer import evidence, gate, prompts
    from desktop_app.core.answer.citations import SourceMap
    from desktop_app.core.text import lang
    from desktop_app.core.types import CitationStyle, Steering
    from desktop_app.services.knowledge_base import KnowledgeBase

    kb = KnowledgeBase(args.db, _settings(args))
    out = []
    for _, question in questions(args.half):
        retrieval = kb.parts.retriever.search(question, 5)
        if gate.refusal(retrieval) is not None:
            continue
        passages = evidence.select(question, retrieval.passages, budget_tokens=280)
        source_map = SourceMap.build(passages, CitationStyle.LABEL)
        packed = prompts.build_prompt(question, [(label, source_map.marker(label), p) for label, p in source_map.items()],
                                      count_tokens=generator.count_tokens, context_tokens=generator.context_tokens,
                                      answer_tokens=args.max_tokens)
        steering = Steering(refusal=prompts.NO_ANSWER[packed.language],
                            mark_sentences=lang.of(packed.language).marks_sentences,
                            sources=tuple((label, evidence.evidence_text(p)) for label, p in source_map.items()))
        out.append((packed.messages, steering))
    asyncio.run(kb.close())
    return out


def _generator(batch_threads: int | None = None) -> Any:
    from desktop_app.core.models import catalog
    from desktop_app.core.models.generate import LlamaGenerator

    return LlamaGenerator(catalog.resolve_answer_model("default"), threads=1, batch_threads=batch_threads)


def threads(args: argparse.Namespace) -> None:
    import llama_cpp

    generator = _generator(2)
    llm = generator._llm
    seconds: dict[int, list[float]] = {1: [], 2: []}
    tokens: list[int] = []
    for run in range(args.runs):
        for messages, _ in _prompts(args, generator):
            ids = generator.prompt_tokens(generator.render(messages))[: args.prompt_tokens or None]
            order = (1, 2) if run % 2 == 0 else (2, 1)  # alternate which goes first
            for batch in order:
                llama_cpp.llama_set_n_threads(llm._ctx.ctx, 1, batch)
                llm.reset()
                llm.n_tokens = 0
                generator._heads.clear()
                begun = time.perf_counter()
                generator._prefill(ids, lambda: False)
                seconds[batch].append(time.perf_counter() - begun)
            tokens.append(len(ids))
            print(f"  {len(ids)} tokens: 1 thread {seconds[1][-1]:.2f} s, 2 threads {seconds[2][-1]:.2f} s", flush=True)
    one, two = median(seconds[1]), median(seconds[2])
    print(f"\nprefill of {median(tokens):.0f} tokens (median), {len(seconds[1])} prompts each, alternating:")
    print(f"  n_threads_batch=1: {one:.2f} s ({median(tokens) / one:.0f} tokens/s)")
    print(f"  n_threads_batch=2: {two:.2f} s ({median(tokens) / two:.0f} tokens/s)")
    ratios = [b / a for a, b in zip(seconds[1], seconds[2], strict=True)]
    print(f"  2 ÷ 1 threads, median of the per-prompt ratios: {median(ratios):.2f}")


def steer(args: argparse.Namespace) -> None:
    generator = _generator()
    rates: dict[bool, list[float]] = {True: [], False: []}
    for run in range(args.runs):
        for messages, steering in _prompts(args, generator):
            order = (True, False) if run % 2 == 0 else (False, True)
            for on in order:
                for _ in generator.stream(messages, max_tokens=args.max_tokens, temperature=0.0,
                                          steering=steering if on else None):
                    pass
                assert generator.last_stats is not None
                rates[on].append(generator.last_stats.tokens_per_second)
            print(f"  on {rates[True][-1]:.2f}, off {rates[False][-1]:.2f} tokens/s", flush=True)
    ratios = [a / b for a, b in zip(rates[True], rates[False], strict=True) if b > 0]
    print(f"\ndecode tokens/s over {len(ratios)} answers each, alternating: steering on {median(rates[True]):.2f},"
          f" off {median(rates[False]):.2f}; on ÷ off, median of the per-answer ratios: {median(ratios):.3f}")


def answers(args: argparse.Namespace) -> None:
    """JSON lines of (id, text, citations) through KnowledgeBase.ask, no warm-up (this mode
    runs on older commits too)."""
    from desktop_app.services.knowledge_base import KnowledgeBase

    async def run() -> None:
        kb = KnowledgeBase(args.db, _settings(args))
        if args.warm:
            kb.models.warm_up()
        with open(args.out, "w", encoding="utf-8") as out:
            for qid, question in questions(args.half):
                row: dict[str, Any] = {"id": qid, "text": "", "citations": {}}
                async for event in kb.answers.ask(question):
                    if event.event == "answer_finished":
                        row.update(text=event.text, citations={k: [list(s) for s in v]
                                                               for k, v in event.citations.items()},
                                   prefill_threads=(event.stats or {}).get("prefill_threads", 0))
                    elif event.event == "failed":
                        row["failed"] = event.error
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
                print(f"  {qid}: {row['text'][:70]!r}", flush=True)
        await kb.close()

    asyncio.run(run())


def followup_cost(args: argparse.Namespace) -> None:
    from followup import half as pair_half
    from followup import pairs

    from desktop_app.core.answer.followup import standalone
    from desktop_app.services.knowledge_base import KnowledgeBase

    chosen = [p for p in pairs() if args.half == "all" or pair_half(p["id"]) == args.half]
    chosen = chosen[:LIMIT] if LIMIT else chosen

    async def one(kb: Any, question: str, **how: Any) -> dict[str, Any]:
        row: dict[str, Any] = {}
        async for event in kb.answers.ask(question, **how):
            if event.event == "answer_started":
                row["answer_id"], row["searched"] = event.answer_id, event.searched
            elif event.event == "answer_finished":
                row["first_word"] = event.stats.get("first_word", {})
                row["stats"] = event.stats
        return row

    async def run() -> list[tuple[dict[str, Any], dict[str, Any]]]:
        kb = KnowledgeBase(args.db, _settings(args))
        kb.models.warm_up()
        await kb.models.answer_model_ready()
        for _ in range(3):
            await kb.bridge.call(kb.bridge.llm_pool, lambda: None)
        out = []
        try:
            for n, pair in enumerate(chosen):
                first = await one(kb, pair["first"])
                if "answer_id" not in first:
                    continue
                # The same standalone question both ways (as the facade makes it); which goes
                # first alternates, so that a warm cache or a busy neighbour favours neither.
                searched = standalone(pair["follow_up"], [first["searched"]]).searched
                if n % 2:
                    alone = await one(kb, pair["follow_up"], searched=searched)
                    conversation = await one(kb, pair["follow_up"], follow_up=first["answer_id"])
                else:
                    conversation = await one(kb, pair["follow_up"], follow_up=first["answer_id"])
                    alone = await one(kb, pair["follow_up"], searched=searched)
                a, b = conversation.get("first_word", {}), alone.get("first_word", {})
                if a.get("first_word_s") and b.get("first_word_s"):
                    out.append((a, b))
                    print(f"  {pair['id']}: conversation {a['first_word_s']:.2f} s ({a.get('prefill_tokens', 0)}"
                          f" tokens), alone {b['first_word_s']:.2f} s ({b.get('prefill_tokens', 0)} tokens),"
                          f" rules+history read {a.get('follow_up_s', 0.0) * 1000:.1f} ms", flush=True)
        finally:
            await kb.close()
        return out

    rows = asyncio.run(run())
    print(f"\nfollow-ups answered both ways: {len(rows)} of {len(chosen)} ({args.half} half, {os.cpu_count()} cores)")
    if rows:
        added = [a["first_word_s"] - b["first_word_s"] for a, b in rows]
        print(f"  first word, in the conversation: median {median([a['first_word_s'] for a, _ in rows]):.2f} s")
        print(f"  first word, alone (same search): median {median([b['first_word_s'] for _, b in rows]):.2f} s")
        print(f"  added by the conversation (per pair): median {median(added):.2f} s, max {max(added):.2f} s")
        print(f"  extra prompt tokens read: median"
              f" {median([a.get('prefill_tokens', 0) - b.get('prefill_tokens', 0) for a, b in rows]):.0f}")
        print(f"  follow_up_s (answers file + rules): median {median([a.get('follow_up_s', 0.0) for a, _ in rows]) * 1000:.1f} ms")
        print(f"  prefill_s: conversation {median([a.get('prefill_s', 0.0) for a, _ in rows]):.2f} s,"
              f" alone {median([b.get('prefill_s', 0.0) for _, b in rows]):.2f} s")


def history_cost(args: argparse.Namespace) -> None:
    from followup import half as pair_half
    from followup import pairs

    from desktop_app.core.answer import evidence, prompts
    from desktop_app.core.answer.citations import SourceMap
    from desktop_app.core.answer.followup import standalone
    from desktop_app.core.settings import Settings
    from desktop_app.core.types import CitationStyle
    from desktop_app.services.knowledge_base import KnowledgeBase

    chosen = [p for p in pairs() if args.half == "all" or pair_half(p["id"]) == args.half]
    chosen = chosen[:LIMIT] if LIMIT else chosen
    kb = KnowledgeBase(args.db, _settings(args))
    generator = _generator(Settings().threads)
    built = []
    for pair in chosen:
        searched = standalone(pair["follow_up"], [pair["first"]]).searched
        first = kb.parts.retriever.search(pair["first"], 5).passages
        retrieval = kb.parts.retriever.search(searched, 5)
        passages = evidence.select(searched, retrieval.passages, budget_tokens=280)
        source_map = SourceMap.build(passages, CitationStyle.LABEL)
        sources = [(label, source_map.marker(label), p) for label, p in source_map.items()]
        earlier = " ".join(first[0].text.split())[:prompts.RECALLED_ANSWER_CHARS] if first else ""
        both = [prompts.build_prompt(pair["follow_up"], sources, count_tokens=generator.count_tokens,
                                     context_tokens=generator.context_tokens, answer_tokens=args.max_tokens,
                                     focus=searched, history=recalled)
                for recalled in ([(pair["first"], earlier)], [])]
        built.append((pair["id"], [generator.prompt_tokens(generator.render(p.messages)) for p in both]))
    asyncio.run(kb.close())
    seconds: dict[bool, list[float]] = {True: [], False: []}
    extra: list[int] = []
    speed: list[float] = []  # tokens/s reading the prompt without the earlier turn
    for run in range(args.runs):
        for n, (pair_id, (with_turns, without)) in enumerate(built):
            order = (True, False) if (n + run) % 2 == 0 else (False, True)
            shared = next((i for i, (a, b) in enumerate(zip(with_turns, without, strict=False)) if a != b),
                          min(len(with_turns), len(without)))
            for recalled in order:
                ids = with_turns if recalled else without
                generator._prefill(ids[: shared + 1], lambda: False)  # the head both share, cached
                begun = time.perf_counter()
                generator._prefill(ids, lambda: False)
                seconds[recalled].append(time.perf_counter() - begun)
            extra.append(len(with_turns) - len(without))
            speed.append((len(without) - shared) / seconds[False][-1])
            print(f"  {pair_id}: with the earlier turn {seconds[True][-1]:.2f} s, without {seconds[False][-1]:.2f} s"
                  f" ({len(without) - shared} tokens read, +{extra[-1]} with the turn;"
                  f" load {os.getloadavg()[0]:.1f})", flush=True)
    added = [a - b for a, b in zip(seconds[True], seconds[False], strict=True)]
    print(f"\nreading the prompt after the cached head, {len(added)} prompts, {args.half} half,"
          f" {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}:")
    print(f"  with the earlier turn recalled: median {median(seconds[True]):.2f} s")
    print(f"  without: median {median(seconds[False]):.2f} s")
    print(f"  added per prompt: median {median(added):.2f} s (+{median(extra):.0f} tokens)")
    print(f"  reading speed without: median {median(speed):.1f} tokens/s; the extra tokens at that speed:"
          f" median {median([e / v for e, v in zip(extra, speed, strict=True)]):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("warm", "cold", "threads", "steer", "answers", "followup",
                                                     "history"))
    parser.add_argument("--db", type=Path, required=True, help="../shared/corpus indexed with folio index")
    parser.add_argument("--half", choices=("tune", "held", "all"), default="held")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--out", type=Path, help="answers: the JSON lines file")
    parser.add_argument("--warm", action="store_true", help="answers: warm up as the window does first")
    parser.add_argument("--keep-alive", action="store_true",
                        help="cold: also ask each question through the kept model (core/models/keep_alive.py)")
    parser.add_argument("--limit", type=int, default=0, help="the first N questions only")
    parser.add_argument("--prompt-tokens", type=int, default=0, help="threads: read only the first N tokens")
    parser.add_argument("--ids", default="", help="comma-separated question ids: these only, in this order")
    args = parser.parse_args()
    global LIMIT, IDS
    LIMIT, IDS = args.limit, [i for i in args.ids.split(",") if i]
    {"warm": warm, "cold": cold, "threads": threads, "steer": steer, "answers": answers,
     "followup": followup_cost, "history": history_cost}[args.mode](args)


if __name__ == "__main__":
    main()
