"""Start the window: ``folio [PATH] [--in FILE] [--ask Q] [--open-citation N] [--screenshot F]
[--quit-after]``.

Creates the QApplication and the qasync loop, builds the real facade, and either opens
PATH for the user or runs the automation flow (see ``automation.py``). Works under Xvfb
and with ``QT_QPA_PLATFORM=offscreen``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from desktop_app.core import logs
from desktop_app.core.errors import KnownError
from desktop_app.services.api import KnowledgeBaseAPI

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="folio",
        description="Folio: ask your PDFs; click a citation to see the passage on its page.",
    )
    parser.add_argument("path", nargs="?", help="a folder of documents to open (indexed if needed)")
    parser.add_argument("--ask", metavar="QUESTION", help="ask this question once the folder is indexed")
    parser.add_argument("--in", dest="within", action="append", default=[], metavar="PATH",
                        help="ask within this PDF or folder (repeatable); the question box shows it")
    parser.add_argument(
        "--open-citation", metavar="N", type=int,
        help="open citation N of the answer (1 = first cited; falls back to source N)",
    )
    parser.add_argument("--open-quote", metavar="N", type=int,
                        help="open the answer's quote N (the document's own sentence), its sentence highlighted")
    parser.add_argument("--check", metavar="FILE", type=Path,
                        help="check this text's sentences against the library (File ▸ Check a Text…)")
    parser.add_argument("--screenshot", metavar="FILE.png", help="save a picture of the window")
    parser.add_argument("--quit-after", action="store_true", help="quit when the steps above are done")
    parser.add_argument("--db", metavar="PATH", type=Path, help="library database file")
    parser.add_argument("--model", metavar="default|small|PATH", help="answer model for this session")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output to stderr")
    return parser


def make_knowledge_base(db_path: Path | None, model: str | None) -> KnowledgeBaseAPI:
    """The real facade (imported here: its libraries are heavy).

    ``--model`` must be valid (a wrong path on the command line is refused). Saved settings
    that no longer hold (a model file deleted since) do not stop the window: it starts,
    and the first-run panel says what is missing.
    """
    from desktop_app.core import settings as settings_store
    from desktop_app.services.knowledge_base import KnowledgeBase, preload

    preload()  # here, before the window shows: native imports on a worker thread stall the GUI

    settings = settings_store.load()
    if model:
        settings = settings.replace(answer_model=model)
        settings.validate()
    else:
        try:
            settings.validate()
        except KnownError as error:
            logger.warning("the saved settings do not hold (%s); the window says what is missing", error)
    kb = KnowledgeBase(db_path=db_path, settings=settings)
    kb.models.warm_up()  # before the window shows, for the same reason as preload()
    return kb


def configure_logging(verbose: bool) -> None:
    logs.configure_logging(verbose=verbose, say_without_file=True)


def main(argv: list[str] | None = None) -> int:
    """Run the window; ``argv`` are the arguments without the program name."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    configure_logging(args.verbose)
    if args.open_quote is not None and args.open_quote < 1:
        print("folio: --open-quote counts from 1", file=sys.stderr)
        return 2
    if args.open_citation is not None and args.open_citation < 1:
        print("folio: --open-citation counts from 1", file=sys.stderr)
        return 2
    if args.path and not Path(args.path).is_dir():
        print(f"folio: {args.path} is not a folder", file=sys.stderr)
        return 2

    import qasync
    import shiboken6
    from PySide6.QtWidgets import QApplication

    from desktop_app.ui.qt import theme
    from desktop_app.ui.qt.gc_guard import GuiThreadCollector

    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName("Folio")
    app.setApplicationDisplayName("Folio")
    app.setDesktopFileName("folio")
    app.setQuitOnLastWindowClosed(False)  # the main coroutine decides when to stop
    app.setWindowIcon(theme.icon("folio"))
    previous_handler = theme.route_qt_messages()
    theme.apply_fonts(app)
    holder: list[object] = []
    collector = GuiThreadCollector()
    collector.start()
    try:
        return int(qasync.run(_run(args, holder)))
    except KnownError as error:
        print(f"folio: {error}", file=sys.stderr)
        return 2
    finally:
        collector.stop()
        for widget in holder:  # delete widgets while the QApplication still exists
            if shiboken6.isValid(widget):
                shiboken6.delete(widget)
        theme.restore_qt_messages(previous_handler)


async def _run(args: argparse.Namespace, holder: list[object]) -> int:
    from desktop_app.core import settings as settings_store
    from desktop_app.ui.window.automation import AutomationPlan, run_plan
    from desktop_app.ui.window.main_window import MainWindow

    # A damaged settings.toml is kept aside here, once, and the window says so.
    notice = settings_store.load_checked().notice
    kb = make_knowledge_base(args.db, args.model)
    window = MainWindow(kb, remember_layout=not args.screenshot)
    window.kb_factory = lambda: make_knowledge_base(args.db, args.model)
    holder.append(window)
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    window.closed.connect(lambda: closed.done() or closed.set_result(None))
    previous_sigint = _close_on_sigint(window)
    window.show()
    window.check_library()  # a damaged or busy library shows its banner
    if notice:
        window.show_status(notice)
        window.report(notice, known=True)
    window.watch_answer_model()
    if args.model is None:
        window.setup.check()  # a missing model shows the first-run panel
    code = 0
    try:
        plan = AutomationPlan(
            folder=args.path if (args.ask or args.open_citation or args.screenshot or args.within or args.check
                                 or args.open_quote) else None,
            question=args.ask,
            citation=args.open_citation,
            screenshot=args.screenshot,
            within=tuple(args.within),
            check=str(args.check) if args.check else None,
            quote=args.open_quote,
        )
        if not plan.empty:
            code = await run_plan(window, plan)
            if args.quit_after:
                return code
        elif args.path:
            window.open_folder(args.path)
        if args.quit_after:
            return code
        await closed
        return code
    finally:
        if not closed.done():
            window.close()
        await asyncio.sleep(0)  # let cancelled tasks unwind
        try:
            await kb.close()
        except Exception:  # closing must not hide the exit code
            logger.exception("closing the knowledge base failed")
        if previous_sigint is not None:
            signal.signal(signal.SIGINT, previous_sigint)


def _close_on_sigint(window: object) -> object:
    """Ctrl+C in the terminal closes the window (Qt would otherwise swallow it)."""
    loop = asyncio.get_running_loop()

    def handler(signum: int, frame: object) -> None:
        loop.call_soon_threadsafe(window.close)  # type: ignore[attr-defined]

    try:
        return signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread
        return None
