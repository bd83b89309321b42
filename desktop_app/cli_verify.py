"""``folio verify``: check a text against the library, or a batch of claims. No Qt here.

    folio verify FILE [--db PATH] [--json]       an exported answer, or a Markdown/text draft
    folio verify --claims FILE.jsonl             {"sentence", "passages": [{"label", "text"}],
                                                 "ids"} per line -> one verdict line per line
    [--judge/--no-judge] [--model default|small|PATH.gguf]   the answer model's second opinion

``FILE`` may be ``-`` (standard input). Exit status: 0 when the input was read (whatever
the verdicts), 2 when it cannot be read or the library cannot be opened.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from desktop_app.core.errors import KnownError
from desktop_app.core.types import CheckFinished, SentenceCheck, TextToCheck

SENTENCE_CHARS = 70  # the sentence as the human output shows it
QUOTE_CHARS = 90  # the passage quote as the human output shows it


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "verify", help="check a text (an exported answer or your own draft) against the library",
        description="Each sentence gets its best supporting passage in the library (file, page,"
                    " quote) and a verdict: supported (the passage states it), contradicted (it says"
                    " otherwise: a number, a negation, a party or a condition), not_confirmed (the"
                    " passage does not state it), not_factual.",
    )
    p.add_argument("file", type=Path, nargs="?", help="Markdown or plain text; - reads standard input")
    p.add_argument("--claims", type=Path, default=None, metavar="FILE.jsonl",
                   help='one {"sentence", "passages": [{"label", "text"}], "ids"} per line;'
                        " prints one JSON verdict per line (no library needed)")
    p.add_argument("--db", type=Path, default=None, help="library database (default: in the data dir)")
    p.add_argument("--json", action="store_true", help="one JSON event per line")
    p.add_argument("--judge", action=argparse.BooleanOptionalAction, default=None,
                   help="ask the answer model about the sentences the rules are unsure of"
                        " (default: Settings, on; without the model installed, the rules alone)")
    p.add_argument("--model", default=None, help="the judge's model: default | small | PATH.gguf")


def _read(path: Path) -> str:
    try:
        if str(path) == "-":
            return sys.stdin.read()
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise KnownError(f"{path} does not exist.") from None
    except IsADirectoryError:
        raise KnownError(f"{path} is a folder, not a text file.") from None
    except UnicodeDecodeError:
        raise KnownError(f"{path} is not UTF-8 text.", "Save it as UTF-8 Markdown or plain text.") from None
    except OSError as exc:
        raise KnownError(f"{path} cannot be read: {exc.strerror or exc}.") from None


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


async def run(args: argparse.Namespace, make_kb: Any) -> int:
    if args.claims is not None:
        if args.file is not None:
            raise KnownError("Give either FILE or --claims FILE.jsonl, not both.")
        return await _claims(args, make_kb)
    if args.file is None:
        raise KnownError("Name the text to check: folio verify FILE (or --claims FILE.jsonl).")
    text = _read(args.file)
    kb = make_kb(args)
    counts: dict[str, int] = {}
    try:
        async for event in kb.checking.check_text(text, args.file.name, judge=args.judge):
            if args.json:
                sys.stdout.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
                continue
            if isinstance(event, TextToCheck):
                kind = "an answer exported by Folio" if event.exported else "a text"
                title = f" “{event.title}”" if event.title else ""
                print(f"Checking {kind}{title}: {len(event.sentences)} sentences.")
            elif isinstance(event, SentenceCheck):
                print(_line(event))
            elif isinstance(event, CheckFinished):
                counts = event.counts
        sys.stdout.flush()
    finally:
        await kb.close()
    if not args.json:
        print(", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items())) or "No sentences.")
    return 0


def _line(check: SentenceCheck) -> str:
    """`` 3 supported    rfc6455.pdf p. 31   “If 126, the following 2 bytes…”  ← sentence``."""
    verdict = str(check.verdict)
    if check.source is None and not check.where:
        where = "—"
    else:
        where = check.where + ("" if check.from_citation or not check.cited else " (not the cited one)")
    quote = f"“{_short(check.quote, QUOTE_CHARS)}”" if check.quote else ""
    return (f"{check.index + 1:>3} {verdict:<13} {where:<28} {quote}  ← {_short(check.sentence, SENTENCE_CHARS)}"
            .rstrip())


async def _claims(args: argparse.Namespace, make_kb: Any) -> int:
    lines = _read(args.claims).splitlines()
    kb = make_kb(args)
    try:
        async for result in kb.checking.check_claims(lines, judge=args.judge):
            sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    finally:
        await kb.close()
    return 0
