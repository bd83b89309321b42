"""The command line's answer model, kept loaded between commands. Qt-free, no asyncio.

Each ``folio ask`` used to start a model process, load the model (~1.4 s for the default
GGUF) and read the whole prompt, the fixed head included (system prompt and worked
example, ~335 of ~780 tokens). A kept process does both once: it stays loaded for a few
idle minutes (:data:`IDLE_ENV`, as Ollama's ``keep_alive``) and keeps the heads it has
read, so the next command reads only its question and sources (``bench/first_word.py
cold --keep-alive``; docs/evaluation.md).

One process per user and per (model file, its size and mtime, context size, threads): a
Unix socket named by a hash of those, in a private runtime folder (0700) with an authkey
file (0600). The messages are :mod:`~desktop_app.core.models.worker`'s own, over
``multiprocessing.connection`` (the same send/recv as the window's worker pipe). It
serves one command at a time; another waits for its turn. A command's hang-up (Ctrl+C,
a killed process) is its cancel: the process checks for it between decoded tokens and,
through llama.cpp's abort callback, while it reads the prompt, then waits for the next
command. A socket nobody listens on is removed and a fresh process started; ``folio
models stop`` (:func:`stop_all`) ends them. POSIX only (:func:`supported`). This module is
the command's side; the process is :mod:`~desktop_app.core.models.keep_alive_server`.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.errors import KnownError
from desktop_app.core.models.worker import (
    ModelProcessDied,
    Ready,
    WorkerGenerator,
    death_reason,
)

logger = logging.getLogger(__name__)

IDLE_ENV = "FOLIO_KEEP_ALIVE"  # seconds a kept process waits for the next command; 0: none kept
IDLE_S = 300.0  # Ollama's keep_alive default: long enough for a run of questions
_SOCKET_MAX = 100  # AF_UNIX paths are limited to 108 bytes on Linux
_STOP_WAIT_S = 5.0
_LOG_MAX = 2_000_000  # the kept process's log (llama.cpp's load messages, ~10 kB a start) is rotated past this
# The processes this one started: held (and reaped when they end) so that dropping one does
# not warn that it is still running; it is not this process's to wait for.
_started: list[subprocess.Popen[bytes]] = []


def supported() -> bool:
    return os.name == "posix" and hasattr(socket, "AF_UNIX")


def idle_seconds() -> float:
    """The idle timeout from :data:`IDLE_ENV` (default :data:`IDLE_S`; 0 or less: off)."""
    raw = os.environ.get(IDLE_ENV, "").strip()
    if not raw:
        return IDLE_S
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise KnownError(f"{IDLE_ENV}={raw!r} is not a number of seconds.",
                         f"Set {IDLE_ENV} to seconds (0 keeps no model loaded).") from None


def runtime_dir() -> Path:
    """The private folder of the sockets: under FOLIO_HOME when set (tests isolate there),
    else ``$XDG_RUNTIME_DIR/folio``, else the data folder's ``run``."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if paths.home() is None and xdg:
        folder = Path(xdg) / "folio"
    else:
        folder = paths.data_dir() / "run"
    if len(str(folder)) > _SOCKET_MAX - 20:  # a deep FOLIO_HOME: a short private folder instead
        digest = hashlib.sha256(str(folder).encode()).hexdigest()[:10]
        folder = Path("/tmp") / f"folio-{os.getuid()}-{digest}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.stat().st_uid != os.getuid():
        raise KnownError(f"{folder} belongs to another user.", "Remove it or set XDG_RUNTIME_DIR.")
    folder.chmod(0o700)
    return folder


def authkey(folder: Path) -> bytes:
    """The secret a command proves it is this user's (created once, mode 0600)."""
    path = folder / "authkey"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(32))
    key = path.read_bytes()
    if len(key) != 32:  # a partly written key (two commands racing): wait for the writer
        time.sleep(0.05)
        key = path.read_bytes()
    return key


@dataclass(frozen=True)
class Options:
    model: Path
    context_tokens: int
    threads: int | None
    seed: int
    prompt_lookup: int
    batch_threads: int | None

    def key(self) -> str:
        """Names the process: a changed model file (size, mtime) gets a new one."""
        stat = self.model.stat()
        text = (f"{self.model.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{self.context_tokens}|{self.threads}"
                f"|{self.seed}|{self.prompt_lookup}|{self.batch_threads}")
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def argv(self) -> list[str]:
        return ["--model", str(self.model.resolve()), "--context", str(self.context_tokens),
                "--threads", str(self.threads or 0), "--seed", str(self.seed),
                "--prompt-lookup", str(self.prompt_lookup), "--batch-threads", str(self.batch_threads or 0)]


def pid_file(socket_path: Path, pid: int) -> Path:
    return socket_path.with_name(f"{socket_path.stem}.{pid}.pid")


@dataclass(frozen=True)
class Hello:
    """What a kept process says to each command it serves."""

    ready: Ready
    pid: int
    served: int  # commands served before this one


# ---------------------------------------------------------------------------- the command's side


def _connect(socket_path: Path) -> socket.socket | None:
    """A connected socket, or None when no process listens there (a stale socket is removed)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(socket_path))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.ECONNREFUSED:  # the process behind it is gone
            logger.info("removing the stale socket %s", socket_path)
            socket_path.unlink(missing_ok=True)
        elif exc.errno != errno.ENOENT:
            raise
        return None
    return sock


def reusable_bind(listening: socket.socket, socket_path: Path) -> bool:
    """Bind to ``socket_path`` unless a live process listens there (False); a stale socket
    file is removed first."""
    for _ in range(2):
        try:
            listening.bind(str(socket_path))
            return True
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
        sock = _connect(socket_path)  # removes a stale file
        if sock is not None:
            sock.close()
            return False
    return False


def _handshake(sock: socket.socket, key: bytes, deadline: float, alive: Callable[[], bool]) -> Connection:
    """Prove the authkey and read the process's Hello; it answers once the command before
    this one is done, so this waits (until ``deadline``) while ``alive()``."""
    connection = Connection(sock.detach())
    try:
        while not connection.poll(0.1):
            if time.monotonic() > deadline or not alive():
                raise KnownError("The kept answer model did not answer.", "Run `folio models stop` and ask again.")
        answer_challenge(connection, key)
        deliver_challenge(connection, key)
    except BaseException:
        connection.close()
        raise
    return connection


class KeepAliveGenerator(WorkerGenerator):
    """A :class:`~desktop_app.core.models.worker.WorkerGenerator` whose model process
    outlives the command: it connects to the kept process for these options, or starts one
    (detached: its own session, so Ctrl+C in the terminal does not reach it)."""

    def __init__(self, model_path: Path | str, *, context_tokens: int = 4096, threads: int | None = None,
                 seed: int = 42, prompt_lookup: int = 0, batch_threads: int | None = None,
                 idle_s: float = IDLE_S, wait: bool = True, load_timeout_s: float = 600.0) -> None:
        self._kept = Options(Path(model_path), context_tokens, threads, seed, prompt_lookup, batch_threads)
        self._idle_s = idle_s
        self._folder = runtime_dir()
        self.socket_path = self._folder / f"{self._kept.key()}.sock"
        self._spawned: subprocess.Popen[bytes] | None = None
        self._pending: socket.socket | None = None
        self._server_pid: int | None = None
        self.reused = False  # the model was loaded already (by an earlier command)
        super().__init__(model_path, context_tokens=context_tokens, threads=threads, seed=seed,
                         prompt_lookup=prompt_lookup, batch_threads=batch_threads, wait=wait,
                         load_timeout_s=load_timeout_s)

    @property
    def pid(self) -> int | None:
        return self._server_pid

    def is_alive(self) -> bool:
        return (self._connection is not None and not self._connection.closed) or self._loading_since is not None

    def _start(self) -> None:
        self._loading_since = time.perf_counter()
        self._pending = _connect(self.socket_path)
        if self._pending is None:
            self.socket_path.with_suffix(".failed").unlink(missing_ok=True)
            log_path = paths.log_dir() / "kept-model.log"
            if log_path.exists() and log_path.stat().st_size > _LOG_MAX:
                log_path.replace(log_path.with_suffix(".log.1"))
            log = open(log_path, "ab")  # noqa: SIM115 - the child's stderr
            try:
                self._spawned = subprocess.Popen(
                    [sys.executable, "-m", "desktop_app.core.models.keep_alive_server", *self._kept.argv(),
                     "--socket", str(self.socket_path), "--idle", str(self._idle_s)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                    start_new_session=True, close_fds=True)
            finally:
                log.close()
            _started[:] = [p for p in _started if p.poll() is None] + [self._spawned]
            logger.info("kept answer model %d loading %s", self._spawned.pid, self.path.name)

    def _spawned_alive(self) -> bool:
        """False once the process this command started has failed. One that exits 0 lost
        the race for the socket to another command's: that one's process serves."""
        return self._spawned is None or self._spawned.poll() in (None, 0)

    def wait_ready(self) -> float:
        if self._loading_since is None:
            return 0.0
        waiting = time.perf_counter()
        deadline = time.monotonic() + self._load_timeout_s
        try:
            try:
                connection, hello = self._hello(deadline)
            except (EOFError, OSError) as exc:
                if self._spawned is not None:
                    raise
                # The process ended between the connection and its answer (its idle time ran
                # out just then, or it was stopped): start a fresh one, once.
                logger.info("kept answer model gone while connecting (%s); starting one", exc)
                self._start()
                connection, hello = self._hello(deadline)
        except (EOFError, OSError, AuthenticationError) as exc:
            self._loading_since = None
            self._kill()
            raise ModelProcessDied(f"The kept answer model could not be reached ({exc}).",
                                   "Run `folio models stop` and ask again.") from exc
        except BaseException:
            self._loading_since = None
            self._kill()
            raise
        started, self._loading_since = self._loading_since, None
        self._connection, self._server_pid = connection, hello.pid
        self.reused = self._spawned is None or hello.pid != self._spawned.pid or hello.served > 0
        self.load_s = 0.0 if self.reused else time.perf_counter() - started
        self._spawned = None  # detached: it is not this command's to wait for
        ready = hello.ready
        self.model_id, self.context_tokens = ready.model_id, ready.context_tokens
        self.threads, self.batch_threads = ready.threads, ready.batch_threads
        self._template, self._bos, self._eos = ready.chat_template, ready.bos, ready.eos
        if self._vocab is None:
            from desktop_app.core.models.generate import Vocabulary

            self._vocab = Vocabulary(self.path)
        return time.perf_counter() - waiting

    def _hello(self, deadline: float) -> tuple[Connection, Hello]:
        """Connect (once the process this command started listens) and read its Hello."""
        while self._pending is None:
            if not self._spawned_alive():
                raise self._failed_to_load()
            if self._spawned is not None and self._spawned.poll() == 0 and not self.socket_path.exists():
                self._spawned = None  # it lost a race to a process that is gone by now: start another
                self._start()
                continue
            if time.monotonic() > deadline:
                raise KnownError(f"The answer model {self.path.name} took too long to load.",
                                 "Pick a smaller GGUF file.")
            time.sleep(0.02)
            self._pending = _connect(self.socket_path)
        sock, self._pending = self._pending, None
        connection = _handshake(sock, authkey(self._folder), deadline, self._spawned_alive)
        try:
            hello = connection.recv()
        except BaseException:
            connection.close()
            raise
        assert isinstance(hello, Hello), hello
        return connection, hello

    def _failed_to_load(self) -> KnownError:
        failed = self.socket_path.with_suffix(".failed")
        if failed.exists():
            message, _, hint = failed.read_text(encoding="utf-8").partition("\n")
            return KnownError(message, hint)
        exitcode = self._spawned.returncode if self._spawned is not None else None
        message, hint = death_reason(exitcode)
        return ModelProcessDied(f"The answer model {self.path.name} could not be loaded: its process {message}.",
                                hint)

    def _ask_to_stop(self) -> bool:
        """Hang up: the kept process takes that as the cancel and serves the next command."""
        self._kill()
        return False

    def _kill(self) -> None:
        if self._pending is not None:
            self._pending.close()
            self._pending = None
        if self._connection is not None:
            self._connection.close()
        self._connection = None

    def _died(self, loading: bool) -> ModelProcessDied:
        self._kill()
        return ModelProcessDied("The kept answer model's process ended while it was working.",
                                "Ask again (a fresh one starts).")

    def close(self) -> None:
        """Hang up (the kept process stays loaded for the next command)."""
        self._kill()
        self._loading_since = None
        if self._vocab is not None:
            self._vocab.close()
            self._vocab = None


def _is_kept(pid: int, socket_path: Path) -> bool:
    """Whether ``pid`` is alive and the kept process of ``socket_path`` (a pid file left by
    a killed process may name another program by now)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        return str(socket_path).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # no /proc (macOS): its socket answering says it is there
        sock = _connect(socket_path)
        if sock is not None:
            sock.close()
        return sock is not None


def stop_all() -> list[int]:
    """End every kept model process of this user, loading, idle or busy (``folio models
    stop``), and remove what dead ones left; the pids stopped."""
    if not supported():
        return []
    stopped = []
    folder = runtime_dir()
    for pid_file in sorted(folder.glob("*.*.pid")):
        key, _, pid_text = pid_file.stem.partition(".")
        socket_path = folder / f"{key}.sock"
        if not pid_text.isdigit() or not _is_kept(int(pid_text), socket_path):
            pid_file.unlink(missing_ok=True)
            continue
        os.kill(int(pid_text), signal.SIGTERM)
        deadline = time.monotonic() + _STOP_WAIT_S
        while pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        stopped.append(int(pid_text))
    _started[:] = [p for p in _started if p.poll() is None]
    for socket_path in folder.glob("*.sock"):
        sock = _connect(socket_path)  # removes a stale socket
        if sock is not None:
            sock.close()
    return stopped
