"""Prompt-lookup decoding: tokens/s with and without it, and the same text at temperature 0.

For each corpus question (bench/data/corpus_*.json over ../shared/corpus indexed into
``--db``) the prompt Folio builds (Folio's retrieval, evidence.select, prompts.build_prompt)
is answered twice by one ``LlamaGenerator`` at temperature 0: without a draft and with
llama-cpp-python's ``LlamaPromptLookupDecoding`` (generate.LOOKUP_TOKENS a step), the
order alternating per question so the machine's load hits both alike, each with a cold
cache. Prints per question decode tokens/s of both, the draft's accept rate and whether
the texts are identical; then medians and the ratio.

    FOLIO_HOME=... .venv/bin/python bench/lookup.py --db /tmp/corpus.duckdb
        [--model default|small|PATH] [--threads 2] [--limit 12] [--max-tokens 200] [--lookup 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from evidence import load_questions  # noqa: E402

from desktop_app.core.answer import evidence, prompts  # noqa: E402
from desktop_app.core.answer.citations import SourceMap  # noqa: E402
from desktop_app.core.models import catalog  # noqa: E402
from desktop_app.core.models.generate import LOOKUP_TOKENS, LlamaGenerator, _CountingLookup  # noqa: E402


def run_one(gen: LlamaGenerator, messages: list[dict[str, str]], draft: _CountingLookup | None,
            max_tokens: int) -> tuple[str, float, float, float]:
    """(text, decode tokens/s, seconds to first token, accept rate) with ``draft`` or none."""
    llm = gen._llm
    llm.draft_model = draft
    llm._logits_all = draft is not None
    gen._draft = draft
    llm.reset()
    text = "".join(gen.stream(messages, max_tokens=max_tokens, temperature=0.0))
    stats = gen.last_stats
    assert stats is not None
    return text, stats.tokens_per_second, stats.seconds_to_first_token, stats.draft_accept_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--model", default="default")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--lookup", type=int, default=LOOKUP_TOKENS)
    parser.add_argument("--half", default="tune", help="tune | held | all")
    parser.add_argument("--embedder", default="default", help="the embedder the library was indexed with")
    args = parser.parse_args()
    from evidence import open_library

    path = catalog.resolve_answer_model(args.model)
    gen = LlamaGenerator(path, threads=args.threads, prompt_lookup=args.lookup)
    draft = gen._draft
    kb = open_library(args.db, args.embedder)
    questions = [q for q in load_questions(["corpus"]) if args.half == "all" or q["half"] == args.half][: args.limit]
    rows = []
    for n, q in enumerate(questions):
        retrieval = kb.parts.retriever.search(q["question"], 5)
        kept = evidence.select(q["question"], retrieval.passages, count_tokens=gen.count_tokens)
        source_map = SourceMap.build(kept)
        packed = prompts.build_prompt(
            q["question"], [(label, source_map.marker(label), p) for label, p in source_map.items()],
            count_tokens=gen.count_tokens, context_tokens=gen.context_tokens, answer_tokens=args.max_tokens)
        result = {}
        for side in (("off", "on") if n % 2 == 0 else ("on", "off")):
            result[side] = run_one(gen, packed.messages, draft if side == "on" else None, args.max_tokens)
        same = result["on"][0] == result["off"][0]
        rows.append((result["off"][1], result["on"][1], result["on"][3], same))
        print(f"{n + 1:2d} off {result['off'][1]:5.1f} tok/s  on {result['on'][1]:5.1f} tok/s  "
              f"accept {result['on'][3]:4.0%}  identical {same}  ({len(result['on'][0])} chars) "
              f"{q['question'][:50]}", flush=True)
    off = statistics.median(r[0] for r in rows)
    on = statistics.median(r[1] for r in rows)
    ratios = [r[1] / r[0] for r in rows if r[0] > 0]
    print(f"n={len(rows)} ({args.model}, {args.threads} threads, {args.lookup} draft tokens): "
          f"decode tokens/s median off {off:.1f}, on {on:.1f}; median per-question ratio "
          f"{statistics.median(ratios):.2f}; median accept rate {statistics.median(r[2] for r in rows):.0%}; "
          f"identical texts {sum(r[3] for r in rows)}/{len(rows)}")


if __name__ == "__main__":
    main()
