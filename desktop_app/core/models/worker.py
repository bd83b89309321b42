"""The answer model in its own process. Qt-free, no asyncio.

A GGUF the user picks can be malformed or too big, and llama.cpp can abort, hit an
illegal instruction or run out of memory: in the window's process any of these would
take the window and the conversation down. :class:`WorkerGenerator` is the caller's
stand-in for a :class:`~desktop_app.core.models.generate.LlamaGenerator` that lives in a
``spawn`` worker process (the KV cache and the primed prompt head live there too).

The worker answers one request at a time over a duplex pipe, in typed messages (the
dataclasses below); a streamed answer comes back as one message per text delta. Tokens
are counted on the caller's side, with the model's vocabulary loaded without its weights. Cancellation is a shared flag: the worker checks it
between decoded tokens, and during the prompt llama.cpp's abort callback checks it
between graph nodes, so Stop takes effect within a fraction of a second even in the
middle of a 128-token prefill step. When the worker dies, the call in progress raises
:class:`ModelProcessDied` naming the cause (signal, out of memory, illegal instruction)
and the next call starts a fresh worker.

Figures: ``bench/worker.py`` (decode tokens/s through the worker against in-process).
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models.generate import Vocabulary, render_chat_template
from desktop_app.core.models.speed import SpeedMeter
from desktop_app.core.stages import Deltas, Message
from desktop_app.core.types import GenerationStats, Steering

if TYPE_CHECKING:
    from multiprocessing.context import SpawnProcess

    from desktop_app.core.models.generate import LlamaGenerator

logger = logging.getLogger(__name__)

_POLL_S = 0.05  # how often the caller checks for cancellation while it waits
_CANCEL_GRACE_S = 3.0  # a cancelled worker that has not answered by then is killed
_LOAD_TIMEOUT_S = 600.0
# Names a signal the worker sends itself on start, before loading the model: how the tests
# make a real worker die the way llama.cpp does (SIGILL on a CPU it was not built for,
# SIGABRT on a failed assertion).
FAULT_ENV = "FOLIO_TEST_LLM_WORKER_FAULT"


class ModelProcessDied(KnownError):
    """The answer model's process ended while it was working."""


def death_reason(exitcode: int | None) -> tuple[str, str]:
    """What a worker's exit code says, and what the user can do: (message, hint)."""
    if exitcode is not None and exitcode < 0:
        try:
            sig = signal.Signals(-exitcode)
        except ValueError:
            return f"was stopped by signal {-exitcode}", "Ask again; if it recurs, pick another GGUF file."
        if sig is signal.SIGKILL:
            return ("was killed (SIGKILL), most likely because the machine ran out of memory",
                    "Pick a smaller GGUF or a smaller context window in Settings, or close other programs.")
        if sig is signal.SIGILL:
            return ("stopped on an illegal CPU instruction (SIGILL): llama.cpp was built for CPU"
                    " features this machine cannot run",
                    "Rebuild it for a portable CPU baseline with `make llama-rebuild` (README, Troubleshooting).")
        if sig in (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE):
            return (f"crashed ({sig.name}): llama.cpp could not handle this model file",
                    "Check that the GGUF file is complete and made for llama.cpp, or pick another one.")
        return f"was stopped ({sig.name})", "Ask again; if it recurs, pick another GGUF file."
    return (f"stopped unexpectedly (exit code {exitcode})",
            "Ask again; if it recurs, pick another GGUF file.")


# ---------------------------------------------------------------------------- the messages
# Requests go to the worker one at a time; it answers each with Ok, Failed or Stopped, and a
# Stream request with Streaming, then Delta after Delta, then Done (or Failed, Stopped).


@dataclass(frozen=True)
class Count:
    text: str


@dataclass(frozen=True)
class PromptTokens:
    prompt: str


@dataclass(frozen=True)
class CheckGrammar:
    grammar: str


@dataclass(frozen=True)
class Prime:
    messages: list[Message]


@dataclass(frozen=True)
class ReplyLogprob:
    messages: list[Message]
    reply: str


@dataclass(frozen=True)
class Stream:
    messages: list[Message]
    max_tokens: int
    temperature: float
    grammar: str | None = None
    steering: Steering | None = None


Request = Count | PromptTokens | CheckGrammar | Prime | ReplyLogprob | Stream


@dataclass(frozen=True)
class Ready:
    model_id: str
    context_tokens: int
    threads: int
    batch_threads: int
    chat_template: str
    bos: str
    eos: str


# What a request's Ok carries: a count (Count, Prime), the prompt's tokens (PromptTokens),
# a log probability (ReplyLogprob), or nothing (CheckGrammar).
OkValue = int | float | list[int] | None


@dataclass(frozen=True)
class Ok:
    value: OkValue


@dataclass(frozen=True)
class Failed:
    message: str
    hint: str


@dataclass(frozen=True)
class Stopped:  # the request was cancelled
    stats: GenerationStats | None = None


@dataclass(frozen=True)
class Streaming:  # the first token is out
    pass


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class Done:
    stats: GenerationStats | None


Reply = Ready | Ok | Failed | Stopped | Streaming | Delta | Done


# ---------------------------------------------------------------------------- the worker


def _worker_main(connection: Connection, flag: ctypes.c_int, path: str, context_tokens: int,
                 threads: int | None, seed: int, prompt_lookup: int = 0,
                 batch_threads: int | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
    from desktop_app.core.models.generate import LlamaGenerator

    fault = os.environ.get(FAULT_ENV)
    if fault:  # tests: the real worker dies the way llama.cpp does (SIGILL, SIGABRT)
        import llama_cpp  # noqa: F401 - as far as a real load gets before it faults

        os.kill(os.getpid(), signal.Signals[fault])

    try:
        generator = LlamaGenerator(path, context_tokens=context_tokens, threads=threads, seed=seed,
                                   prompt_lookup=prompt_lookup, batch_threads=batch_threads)
    except KnownError as exc:
        connection.send(Failed(exc.message, exc.hint))
        return
    cancelled: Callable[[], bool] = lambda: bool(flag.value)  # noqa: E731
    generator.abort_reading_when(cancelled)
    connection.send(ready_of(generator))
    serve_requests(connection, generator, cancelled)


def ready_of(generator: LlamaGenerator) -> Ready:
    return Ready(generator.model_id, generator.context_tokens, generator.threads, generator.batch_threads,
                 generator.chat_template, generator.bos_text, generator.eos_text)


def serve_requests(connection: Connection, generator: LlamaGenerator, cancelled: Callable[[], bool],
                   answer_one: Callable[[Connection, LlamaGenerator, Request, Callable[[], bool]], bool] | None = None,
                   ) -> bool:
    """Answer requests until the caller hangs up (False) or sends None (True: stop).
    ``answer_one`` (default :func:`answer`) serves one request; False ends the loop."""
    serve_one = answer_one or answer
    while True:
        try:
            request: Request | None = connection.recv()
        except (EOFError, OSError):
            return False
        if request is None:
            return True
        if not serve_one(connection, generator, request, cancelled):
            return False


def answer(connection: Connection, generator: LlamaGenerator, request: Request, cancelled: Callable[[], bool]) -> bool:
    """Serve one request; False when the caller hung up."""
    try:
        try:
            _serve(connection, generator, request, cancelled)
        except KnownError as exc:
            connection.send(Failed(exc.message, exc.hint))
        except Cancelled:
            connection.send(Stopped(generator.last_stats))
    except (BrokenPipeError, OSError):
        return False
    return True


def _serve(connection: Connection, generator: LlamaGenerator, request: Request, cancelled: Callable[[], bool]) -> None:
    match request:
        case Count(text):
            connection.send(Ok(generator.count_tokens(text)))
        case PromptTokens(prompt):
            connection.send(Ok(generator.prompt_tokens(prompt)))
        case CheckGrammar(grammar):
            generator.check_grammar(grammar)
            connection.send(Ok(None))
        case Prime(messages):
            connection.send(Ok(generator.prime(messages, cancelled)))
        case ReplyLogprob(messages, reply):
            connection.send(Ok(generator.reply_logprob(messages, reply, cancelled)))
        case Stream():
            _serve_stream(connection, generator, request, cancelled)


def _serve_stream(connection: Connection, generator: LlamaGenerator, request: Stream, cancelled: Callable[[], bool]) -> None:
    deltas = generator.stream(request.messages, max_tokens=request.max_tokens,
                              temperature=request.temperature, grammar=request.grammar,
                              should_cancel=cancelled, steering=request.steering)
    connection.send(Streaming())
    try:
        for delta in deltas:
            connection.send(Delta(delta))
    except Cancelled:
        connection.send(Stopped(generator.last_stats))
        return
    except (RuntimeError, ValueError) as exc:  # llama.cpp failed mid-answer
        connection.send(Failed(f"The model failed while writing ({exc}).",
                               "Ask again, or pick another GGUF file."))
        return
    connection.send(Done(generator.last_stats))


# ---------------------------------------------------------------------------- the caller's side


class WorkerGenerator:
    """A :class:`~desktop_app.core.stages.Generator` whose model runs in a worker process.

    Call it from one thread at a time (the facade's ``folio-llm`` thread), as the
    in-process generator. Construction starts the worker; with ``wait=True`` (the default)
    it also waits for the model to load and raises KnownError (or :class:`ModelProcessDied`)
    if that fails; with ``wait=False`` the caller does other work meanwhile and calls
    :meth:`wait_ready`. Tokens are counted here, with the model's own vocabulary
    (:class:`~desktop_app.core.models.generate.Vocabulary`): no round trip to the worker.
    """

    scores_replies = True

    def __init__(self, model_path: Path | str, *, context_tokens: int = 4096,
                 threads: int | None = None, seed: int = 42,
                 load_timeout_s: float = _LOAD_TIMEOUT_S, prompt_lookup: int = 0,
                 batch_threads: int | None = None, wait: bool = True) -> None:
        self.path = Path(model_path)
        self._options = (context_tokens, threads, seed, prompt_lookup, batch_threads)
        self.speed = SpeedMeter()  # this machine's prompt and decode tokens/s, answer by answer
        self._load_timeout_s = load_timeout_s
        self._context = multiprocessing.get_context("spawn")
        self._flag: ctypes.c_int = self._context.RawValue(ctypes.c_int, 0)  # shared, unlocked: Value(..., lock=False)
        self._process: SpawnProcess | None = None
        self._connection: Connection | None = None
        self._loading_since: float | None = None  # a started worker not yet ready
        self._vocab: Vocabulary | None = None
        self._counts: dict[str, int] = {}
        self.last_stats: GenerationStats | None = None
        self.model_id = self.path.stem
        self.context_tokens = context_tokens
        self.threads = threads or 1
        self.batch_threads = batch_threads or 1
        self.load_s = 0.0  # the last start: from spawning the worker to its model loaded
        self._template = ""
        self._bos = self._eos = ""
        self._start()
        if wait:
            self.wait_ready()

    # -- process life

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def is_alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    @property
    def ready(self) -> bool:
        return self._loading_since is None and self.is_alive()

    def _start(self) -> None:
        parent, child = self._context.Pipe(duplex=True)
        context_tokens, threads, seed, prompt_lookup, batch_threads = self._options
        self._flag.value = 0
        process = self._context.Process(
            target=_worker_main,
            args=(child, self._flag, str(self.path), context_tokens, threads, seed, prompt_lookup,
                  batch_threads),
            name="folio-llm", daemon=True,
        )
        self._loading_since = time.perf_counter()
        process.start()
        child.close()
        self._process, self._connection = process, parent
        logger.info("answer model worker %d loading %s", process.pid, self.path.name)

    def wait_ready(self) -> float:
        """Wait for a starting worker's model to load; returns the seconds waited (0.0 when
        it was ready). Raises KnownError (ModelProcessDied) when loading fails."""
        if self._loading_since is None:
            return 0.0
        waiting = time.perf_counter()
        try:
            reply = self._receive(time.monotonic() + self._load_timeout_s, loading=True)
        except BaseException:
            self._loading_since = None
            self._kill()
            raise
        started, self._loading_since = self._loading_since, None
        if isinstance(reply, Failed):
            self._kill()
            raise KnownError(reply.message, reply.hint)
        assert isinstance(reply, Ready), reply
        self.load_s = time.perf_counter() - started
        self.model_id = reply.model_id
        self.context_tokens = reply.context_tokens
        self.threads, self.batch_threads = reply.threads, reply.batch_threads
        self._template, self._bos, self._eos = reply.chat_template, reply.bos, reply.eos
        if self._vocab is None:
            self._vocab = Vocabulary(self.path)
        return time.perf_counter() - waiting

    def _ensure(self) -> Connection:
        if self._loading_since is None and (not self.is_alive() or self._connection is None):
            if self._process is not None:
                logger.info("answer model worker gone; starting a fresh one")
            self._start()
        self.wait_ready()
        assert self._connection is not None
        return self._connection

    def _kill(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            except OSError:
                pass
        if self._process is not None and self._process.is_alive():
            self._process.kill()
        if self._process is not None:
            self._process.join(1.0)
        self._connection = None

    def close(self) -> None:
        """Stop the worker (it frees the model's memory)."""
        process = self._process
        if self._connection is not None and process is not None and process.is_alive():
            try:
                self._connection.send(None)
            except OSError:
                pass
            process.join(2.0)
        self._kill()
        self._process = None
        self._loading_since = None
        if self._vocab is not None:
            self._vocab.close()
            self._vocab = None

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self._kill()
        except Exception:
            pass

    def _died(self, loading: bool) -> ModelProcessDied:
        process = self._process
        if process is not None:
            process.join(2.0)
        exitcode = process.exitcode if process is not None else None
        message, hint = death_reason(exitcode)
        self._kill()
        what = (f"The answer model {self.path.name} could not be loaded: its process {message}."
                if loading else f"The answer model's process {message}.")
        logger.warning("answer model worker died (exit code %s)", exitcode)
        return ModelProcessDied(what, hint)

    def _receive(self, deadline: float | None = None, *, loading: bool = False,
                 should_cancel: Callable[[], bool] | None = None) -> Reply:
        """The worker's next message; raises ModelProcessDied if it dies first. Sets the
        cancel flag when ``should_cancel()`` turns true, and kills a worker that does not
        answer within the grace period after that."""
        connection = self._connection
        assert connection is not None
        cancel_deadline: float | None = None
        while True:
            try:
                if connection.poll(_POLL_S):
                    message: Reply = connection.recv()
                    return message
            except (EOFError, OSError):
                raise self._died(loading) from None
            if not self.is_alive() and not connection.poll(0):
                raise self._died(loading)
            now = time.monotonic()
            if should_cancel is not None and cancel_deadline is None and should_cancel():
                if not self._ask_to_stop():
                    raise Cancelled()
                cancel_deadline = now + _CANCEL_GRACE_S
            if cancel_deadline is not None and now > cancel_deadline:
                logger.warning("answer model worker did not stop when asked; killing it")
                self._kill()
                raise Cancelled()
            if deadline is not None and now > deadline:
                self._kill()
                raise KnownError(f"The answer model {self.path.name} took too long to load.",
                                 "Pick a smaller GGUF file.")

    def _ask_to_stop(self) -> bool:
        """Make the worker stop the request in progress; True when it answers (Stopped,
        or what it was sending when it stopped) and the caller should read that answer."""
        self._flag.value = 1
        return True

    def _send(self, request: Request) -> None:
        connection = self._ensure()
        self._flag.value = 0
        try:
            connection.send(request)
        except (BrokenPipeError, OSError):
            raise self._died(False) from None

    def _call(self, request: Request, should_cancel: Callable[[], bool] | None = None) -> OkValue:
        self._send(request)
        reply = self._receive(should_cancel=should_cancel)
        if isinstance(reply, Failed):
            raise KnownError(reply.message, reply.hint)
        if isinstance(reply, Stopped):
            raise Cancelled()
        assert isinstance(reply, Ok), reply
        return reply.value

    # -- the Generator interface

    def count_tokens(self, text: str) -> int:
        """The tokens of ``text`` as the model reads them, counted here (memoised: packing a
        prompt counts its fixed head once per process)."""
        count = self._counts.get(text)
        if count is None:
            self._ensure()
            assert self._vocab is not None
            count = self._vocab.count_tokens(text)
            if len(self._counts) > 4096:
                self._counts.clear()
            self._counts[text] = count
        return count

    def estimate_s(self, prompt_tokens: int) -> float:
        return self.speed.estimate(prompt_tokens)

    def prompt_tokens(self, prompt: str) -> list[int]:
        tokens = self._call(PromptTokens(prompt))
        assert isinstance(tokens, list), tokens
        return list(tokens)

    def render(self, messages: Sequence[Message]) -> str:
        self._ensure()
        return render_chat_template(self._template, messages, self._bos, self._eos)

    def check_grammar(self, grammar: str) -> None:
        self._call(CheckGrammar(grammar))

    def reply_logprob(self, messages: Sequence[Message], reply: str,
                      should_cancel: Callable[[], bool] = lambda: False) -> float:
        """See :meth:`LlamaGenerator.reply_logprob` (read in the worker; raises Cancelled)."""
        logprob = self._call(ReplyLogprob(list(messages), reply), should_cancel)
        assert isinstance(logprob, int | float), logprob
        return float(logprob)

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = lambda: False) -> int:
        try:
            shared = self._call(Prime(list(messages)), should_cancel)
        except Cancelled:
            return 0
        assert isinstance(shared, int), shared
        return shared

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        grammar: str | None = None,
        should_cancel: Callable[[], bool] = lambda: False,
        steering: Steering | None = None,
    ) -> Deltas:
        """Yield text deltas. Raises KnownError before the first delta if the model fails
        to start; ModelProcessDied (a KnownError) mid-answer if its process dies."""
        self._send(Stream(list(messages), max_tokens, temperature, grammar, steering))
        try:
            reply = self._receive(should_cancel=should_cancel)
        except Cancelled:
            return _raise(Cancelled())
        if isinstance(reply, Failed):
            raise KnownError(reply.message, reply.hint)
        if isinstance(reply, Stopped):
            self._set_stats(reply.stats)
            return _raise(Cancelled())
        return self._deltas(should_cancel)

    def _deltas(self, should_cancel: Callable[[], bool]) -> Deltas:
        finished = False
        try:
            while True:
                reply = self._receive(should_cancel=should_cancel)
                if isinstance(reply, Delta):
                    yield reply.text
                elif isinstance(reply, Done):
                    finished = True
                    self._set_stats(reply.stats)
                    return
                elif isinstance(reply, Stopped):
                    finished = True
                    self._set_stats(reply.stats)
                    raise Cancelled()
                elif isinstance(reply, Failed):
                    finished = True
                    raise KnownError(reply.message, reply.hint)
        finally:
            if not finished and self.is_alive():
                self._stop_stream()

    def _stop_stream(self) -> None:
        """The consumer stopped early: make the worker stop and read what it still sends,
        so the next request starts on a quiet pipe."""
        if not self._ask_to_stop():
            return
        deadline = time.monotonic() + _CANCEL_GRACE_S
        try:
            while time.monotonic() < deadline:
                reply = self._receive(deadline)
                if isinstance(reply, Done | Stopped | Failed):
                    return
        except (KnownError, Cancelled):
            return
        self._kill()

    def _set_stats(self, stats: GenerationStats | None) -> None:
        self.last_stats = stats
        if stats is not None:
            self.speed.add(stats)


def _raise(error: BaseException) -> Deltas:
    raise error
    yield ""  # pragma: no cover - makes this a generator: the error comes from iterating
