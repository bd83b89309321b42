"""``folio ask``: one answer streamed to the terminal — the document's own quote first, then
the model's words, its sources and the answer id — or, with ``--json``, one event a line as
the facade yields them. No Qt here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_app.core.types import (
    AnswerCancelled,
    AnswerFailed,
    AnswerFinished,
    AnswerQuoted,
    AnswerStarted,
    CitationFound,
    ClaimVerdict,
    NoBasis,
    TokenDelta,
)
from desktop_app.services.answer_stats import first_word_line, stats_line


async def run(args: argparse.Namespace, make_kb: Callable[[argparse.Namespace], Any]) -> int:
    """Stream one answer to the terminal (or one JSON event a line); the exit status: 0, 2 for
    the environment's fault (a model that cannot load or crashed), 1 for a bug."""
    kb = make_kb(args)
    sources: dict[str, Any] = {}
    failed = 0
    refused = False
    try:
        async for event in kb.answers.ask(args.question, style=args.style, max_tokens=args.max_tokens,
                                  scope=args.within, follow_up=args.follow_up, searched=args.searched,
                                  quote_only=args.quote_only):
            if args.json:
                print(json.dumps(event.to_json(), ensure_ascii=False), flush=True)
                if isinstance(event, AnswerFailed):
                    failed = 2 if event.known else max(failed, 1)
                continue
            if isinstance(event, AnswerStarted):
                sources = {s.id: s for s in event.sources}
                if event.scope:
                    print(f"(asked within: {', '.join(event.scope)})", flush=True)
                if event.searched and event.searched != event.question:
                    print(f"(searched for: {event.searched})", flush=True)
                if event.also_searched:
                    print(f"(also searched for: {event.also_searched})", flush=True)
            elif isinstance(event, AnswerQuoted):  # the document's own words, before the model's
                for quote in event.quotes:
                    source = sources.get(quote.id)
                    where = f"{document_name(source.doc_title, source.doc_path)}, {source.where}" if source else ""
                    print(f"From the document [{quote.id}] {where}:\n  \u201c{' '.join(quote.text.split())}\u201d\n",
                          flush=True)
            elif isinstance(event, TokenDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, NoBasis):
                refused = True
                print(f"\n[no basis] {event.reason}")
            elif isinstance(event, AnswerFinished):
                print()
                cited = [cid for cid in event.citations if cid in sources]
                if cited:
                    print("\nSources:")
                elif refused and sources:  # the passages the refusal was decided on
                    print("\nPassages read:")
                    cited = list(sources)
                for cid in cited:
                    s = sources[cid]
                    section = f", {s.section}" if s.section else ""
                    print(f"  [{cid}] {document_name(s.doc_title, s.doc_path)}, {s.where}{section}")
                if event.hallucinated:
                    print("  Not among the sources given to the model: "
                          + ", ".join(f"[{h}]" for h in event.hallucinated))
                if not args.quote_only:  # a quote alone is a search: nothing is saved
                    print(f"  (answer id {event.answer_id})")
                if getattr(args, "stats", False):
                    print(f"  {stats_line(event.stats)}")
                    if event.stats.get("first_word"):
                        print(f"  {first_word_line(event.stats)}")
            elif isinstance(event, ClaimVerdict):
                pass
            elif isinstance(event, CitationFound):
                pass
            elif isinstance(event, AnswerFailed):
                print(f"\nfolio: {event.error}", file=sys.stderr)
                # The environment's fault (a model that cannot load or crashed): 2, as for
                # every KnownError; a bug: 1.
                failed = 2 if event.known else max(failed, 1)
            elif isinstance(event, AnswerCancelled):
                print("\n(stopped)")
    finally:
        await kb.close()
    return failed


def document_name(title: str, path: str) -> str:
    """"Hypertext Transfer Protocol -- HTTP/1.1 (en_rfc2616_http11.pdf)": the title and the
    file's name (the name alone when the title is the name)."""
    name = Path(path).name
    return f"{title} ({name})" if title and title != Path(path).stem else name
