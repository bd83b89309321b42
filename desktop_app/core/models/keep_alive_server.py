"""The kept answer model's own process (core/models/keep_alive.py starts it): it loads the model,
then serves one command at a time over its Unix socket until it has been idle for the
given seconds or gets SIGTERM (``folio models stop``). Qt-free, no asyncio.

    python -m desktop_app.core.models.keep_alive_server --model M.gguf --context 4096 --socket S --idle 300
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core import logs
from desktop_app.core.errors import KnownError
from desktop_app.core.models.keep_alive import Hello, Options, authkey, pid_file, reusable_bind
from desktop_app.core.models.worker import Request, answer, ready_of, serve_requests

if TYPE_CHECKING:
    from desktop_app.core.models.generate import LlamaGenerator

logger = logging.getLogger(__name__)

_CHECK_GAP_S = 0.01  # the hang-up check runs at most this often during a prefill (a select each)


class _HungUp:
    """True once the command being served has hung up (its socket reads EOF): its cancel;
    also once the process is told to stop. Checked at most every _CHECK_GAP_S, since
    llama.cpp asks between graph nodes."""

    def __init__(self) -> None:
        self.connection: Connection | None = None
        self._checked = 0.0
        self._gone = False
        self.busy = False  # a request is being answered (llama.cpp may be running)
        self.stopping = False  # SIGTERM came (folio models stop)

    def terminate(self, *_: object) -> None:
        """SIGTERM: exit now when idle; when busy, cancel the request and exit after it (an
        exception raised inside llama.cpp's abort callback would be swallowed by ctypes)."""
        self.stopping = True
        if not self.busy:
            sys.exit(0)

    def serving(self, connection: Connection) -> None:
        self.connection, self._gone, self._checked = connection, False, 0.0

    def __call__(self) -> bool:
        if self.stopping:
            return True
        now = time.monotonic()
        if self._gone or now - self._checked < _CHECK_GAP_S or self.connection is None:
            return self._gone
        self._checked = now
        try:  # nothing is sent during a request: readable means the caller's end closed
            self._gone = self.connection.poll(0)
        except (OSError, EOFError):
            self._gone = True
        return self._gone


def serve(options: Options, socket_path: Path, idle_s: float) -> int:
    """The kept process: load the model, then serve commands until idle for ``idle_s``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    hung_up = _HungUp()
    signal.signal(signal.SIGTERM, hung_up.terminate)  # the finally blocks remove the socket
    pid_path = pid_file(socket_path, os.getpid())
    pid_path.write_text(str(os.getpid()), encoding="utf-8")  # `folio models stop` finds it loading too
    try:
        return _serve(options, socket_path, idle_s, hung_up)
    finally:
        pid_path.unlink(missing_ok=True)


def _serve(options: Options, socket_path: Path, idle_s: float, hung_up: _HungUp) -> int:
    from desktop_app.core.models.generate import LlamaGenerator

    failed = socket_path.with_suffix(".failed")
    begun = time.perf_counter()
    try:
        generator = LlamaGenerator(options.model, context_tokens=options.context_tokens, threads=options.threads,
                                   seed=options.seed, prompt_lookup=options.prompt_lookup,
                                   batch_threads=options.batch_threads)
    except KnownError as exc:
        failed.write_text(f"{exc.message}\n{exc.hint}", encoding="utf-8")
        return 1
    if hung_up.stopping:  # told to stop while loading (in a callback, where exiting is swallowed)
        return 0
    generator.abort_reading_when(hung_up)
    key = authkey(socket_path.parent)
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if not reusable_bind(listening, socket_path):  # another command's process won the race
        logger.info("kept model not started: %s is served by another process", socket_path)
        listening.close()
        return 0
    listening.listen(8)
    listening.settimeout(idle_s)  # accept() times out when no command came for idle_s
    logger.info("kept model %s loaded in %.1f s, serving at %s", options.model.name,
                time.perf_counter() - begun, socket_path)
    ready, served = ready_of(generator), 0
    try:
        while True:
            try:
                accepted, _ = listening.accept()
            except TimeoutError:
                logger.info("kept model idle for %.0f s: exiting", idle_s)
                return 0
            accepted.setblocking(True)
            generator.asker_pid = _peer_pid(accepted)
            connection = Connection(accepted.detach())
            try:  # as multiprocessing's Listener.accept does with an authkey
                deliver_challenge(connection, key)
                answer_challenge(connection, key)
                hung_up.serving(connection)
                generator.restart_sampling()
                connection.send(Hello(ready, os.getpid(), served))
                served += 1
                stop = _serve_command(connection, generator, hung_up)
            except (OSError, EOFError, AuthenticationError) as exc:  # a caller that gave up, or a stranger
                logger.info("a command's connection failed: %s", exc)
                stop = False
            finally:
                connection.close()
            if stop:
                logger.info("kept model asked to stop")
                return 0
    finally:  # the name first: once it is gone a new command starts a new process, not this one's
        socket_path.unlink(missing_ok=True)
        listening.close()


def _peer_pid(connected: socket.socket) -> int | None:
    """The pid of the command at the other end (Linux's SO_PEERCRED), or None where the system
    does not say: its threads, still returning from the request, are not other work when the
    prompt's threads are chosen (cores.free_cores)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        pid, _, _ = struct.unpack("3i", connected.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except (OSError, struct.error):
        return None
    return pid if pid > 0 else None


def _serve_command(connection: Connection, generator: LlamaGenerator, hung_up: _HungUp) -> bool:
    """The worker's requests from one command until it hangs up (False) or the process is
    to stop (True)."""

    def answer_one(connection: Connection, generator: LlamaGenerator, request: Request,
                   cancelled: Callable[[], bool]) -> bool:
        hung_up.busy = True
        try:
            return answer(connection, generator, request, cancelled) and not hung_up.stopping
        finally:
            hung_up.busy = False

    return serve_requests(connection, generator, hung_up, answer_one) or hung_up.stopping


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Folio's kept answer model process (started by folio ask)")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--context", type=int, required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--prompt-lookup", type=int, default=0)
    parser.add_argument("--batch-threads", type=int, default=0)
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--idle", type=float, required=True)
    args = parser.parse_args(argv)
    # stderr is the kept process's own log file (keep_alive.py opens it).
    logs.configure_logging(console_level=logging.INFO, console_format=logs.LINE_FORMAT, to_file=False)
    options = Options(args.model, args.context, args.threads or None, args.seed, args.prompt_lookup,
                      args.batch_threads or None)
    return serve(options, args.socket, args.idle)


if __name__ == "__main__":
    sys.exit(main())
