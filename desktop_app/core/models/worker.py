"""The answer model in its own process. Qt-free, no asyncio.

A GGUF the user picks can be malformed or too big, and llama.cpp can abort, hit an
illegal instruction or run out of memory: in the window's process any of these would
take the window and the conversation down. :class:`WorkerGenerator` is the caller's
stand-in for a :class:`~desktop_app.core.models.generate.LlamaGenerator` that lives in a
``spawn`` worker process (the KV cache and the primed prompt head live there too).

The worker answers one request at a time over a duplex pipe; a streamed answer comes
back as one message per text delta. Cancellation is a shared flag: the worker checks it
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
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models.generate import render_chat_template
from desktop_app.core.models.speed import GenerationStats, SpeedMeter
from desktop_app.core.stages import Message
from desktop_app.core.types import Steering

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


# ---------------------------------------------------------------------------- the worker


class _Abort:
    """llama.cpp's abort callback, armed only while the prompt is read: during decoding
    the flag is checked between tokens instead (a Python call per graph node would cost
    ~3% of decode speed)."""

    def __init__(self, llm: Any, flag: Any) -> None:
        import llama_cpp

        self._ctx = getattr(getattr(llm, "_ctx", None), "ctx", None)
        self._set = getattr(llama_cpp, "llama_set_abort_callback", None)
        self._callback = llama_cpp.ggml_abort_callback(lambda _data: bool(flag.value)) if self._set else None
        self._none = llama_cpp.ggml_abort_callback() if self._set else None  # a NULL function pointer

    def arm(self, on: bool) -> None:
        if self._set is None or self._ctx is None:
            return
        self._set(self._ctx, self._callback if on else self._none, None)


def _worker_main(connection: Connection, flag: Any, path: str, context_tokens: int,
                 threads: int | None, seed: int, prompt_lookup: int = 0) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
    from desktop_app.core.models.generate import LlamaGenerator

    fault = os.environ.get(FAULT_ENV)
    if fault:  # tests: the real worker dies the way llama.cpp does (SIGILL, SIGABRT)
        import llama_cpp  # noqa: F401 - as far as a real load gets before it faults

        os.kill(os.getpid(), signal.Signals[fault])

    try:
        generator = LlamaGenerator(path, context_tokens=context_tokens, threads=threads, seed=seed,
                                   prompt_lookup=prompt_lookup)
    except KnownError as exc:
        connection.send(("error", exc.message, exc.hint))
        return
    abort = _Abort(generator._llm, flag)
    generator.abort_hook = abort.arm
    connection.send(("ready", {
        "model_id": generator.model_id, "context_tokens": generator.context_tokens,
        "threads": generator.threads, "template": generator._template,
        "bos": generator._bos, "eos": generator._eos,
    }))
    cancelled: Callable[[], bool] = lambda: bool(flag.value)  # noqa: E731
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        kind, args = request
        try:
            if kind == "count":
                connection.send(("ok", generator.count_tokens(args)))
            elif kind == "prompt_tokens":
                connection.send(("ok", generator.prompt_tokens(args)))
            elif kind == "grammar":
                generator.check_grammar(args)
                connection.send(("ok", None))
            elif kind == "prime":
                connection.send(("ok", generator.prime(args, cancelled)))
            elif kind == "stream":
                _serve_stream(connection, generator, args, cancelled)
            elif kind == "reply_logprob":
                connection.send(("ok", generator.reply_logprob(args[0], args[1], cancelled)))
            else:  # pragma: no cover - a caller bug
                connection.send(("error", f"unknown request {kind!r}", ""))
        except KnownError as exc:
            connection.send(("error", exc.message, exc.hint))
        except Cancelled:
            connection.send(("cancelled", _stats(generator)))
        except (BrokenPipeError, OSError):
            return


def _stats(generator: Any) -> dict[str, Any] | None:
    stats = generator.last_stats
    return None if stats is None else stats.__dict__.copy()


def _serve_stream(connection: Connection, generator: Any, args: dict[str, Any],
                  cancelled: Callable[[], bool]) -> None:
    deltas = generator.stream(args["messages"], max_tokens=args["max_tokens"],
                              temperature=args["temperature"], grammar=args["grammar"],
                              should_cancel=cancelled, steering=args.get("steering"))
    connection.send(("streaming", None))
    try:
        for delta in deltas:
            connection.send(("delta", delta))
    except Cancelled:
        connection.send(("cancelled", _stats(generator)))
        return
    except (RuntimeError, ValueError) as exc:  # llama.cpp failed mid-answer
        connection.send(("error", f"The model failed while writing ({exc}).",
                         "Ask again, or pick another GGUF file."))
        return
    connection.send(("done", _stats(generator)))


# ---------------------------------------------------------------------------- the caller's side


class WorkerGenerator:
    """A :class:`~desktop_app.core.models.generate.Generator` whose model runs in a worker process.

    Call it from one thread at a time (the facade's ``folio-llm`` thread), as the
    in-process generator. Construction loads the model and raises KnownError (or
    :class:`ModelProcessDied`) if that fails.
    """

    def __init__(self, model_path: Path | str, *, context_tokens: int = 4096,
                 threads: int | None = None, seed: int = 42,
                 load_timeout_s: float = _LOAD_TIMEOUT_S, prompt_lookup: int = 0) -> None:
        self.path = Path(model_path)
        self._options = (context_tokens, threads, seed, prompt_lookup)
        self.speed = SpeedMeter()  # this machine's prompt and decode tokens/s, answer by answer
        self._load_timeout_s = load_timeout_s
        self._context = multiprocessing.get_context("spawn")
        self._flag: Any = self._context.Value(ctypes.c_int, 0, lock=False)
        self._process: Any = None
        self._connection: Connection | None = None
        self.last_stats: GenerationStats | None = None
        self.model_id = self.path.stem
        self.context_tokens = context_tokens
        self.threads = threads or 1
        self._template = ""
        self._bos = self._eos = ""
        self._start()

    # -- process life

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def is_alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def _start(self) -> None:
        parent, child = self._context.Pipe(duplex=True)
        context_tokens, threads, seed, prompt_lookup = self._options
        self._flag.value = 0
        process = self._context.Process(
            target=_worker_main,
            args=(child, self._flag, str(self.path), context_tokens, threads, seed, prompt_lookup),
            name="folio-llm", daemon=True,
        )
        process.start()
        child.close()
        self._process, self._connection = process, parent
        logger.info("answer model worker %d loading %s", process.pid, self.path.name)
        try:
            kind, *rest = self._receive(time.monotonic() + self._load_timeout_s, loading=True)
        except BaseException:
            self._kill()
            raise
        if kind == "error":
            self._kill()
            raise KnownError(rest[0], rest[1])
        info = rest[0]
        self.model_id = info["model_id"]
        self.context_tokens = int(info["context_tokens"])
        self.threads = int(info["threads"])
        self._template, self._bos, self._eos = info["template"], info["bos"], info["eos"]

    def _ensure(self) -> Connection:
        if not self.is_alive() or self._connection is None:
            if self._process is not None:
                logger.info("answer model worker gone; starting a fresh one")
            self._start()
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
        if self._connection is not None and self.is_alive():
            try:
                self._connection.send(None)
            except OSError:
                pass
            self._process.join(2.0)
        self._kill()
        self._process = None

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
                 should_cancel: Callable[[], bool] | None = None) -> tuple[Any, ...]:
        """The worker's next message; raises ModelProcessDied if it dies first. Sets the
        cancel flag when ``should_cancel()`` turns true, and kills a worker that does not
        answer within the grace period after that."""
        connection = self._connection
        assert connection is not None
        cancel_deadline: float | None = None
        while True:
            try:
                if connection.poll(_POLL_S):
                    message: tuple[Any, ...] = connection.recv()
                    return message
            except (EOFError, OSError):
                raise self._died(loading) from None
            if not self.is_alive() and not connection.poll(0):
                raise self._died(loading)
            now = time.monotonic()
            if should_cancel is not None and cancel_deadline is None and should_cancel():
                self._flag.value = 1
                cancel_deadline = now + _CANCEL_GRACE_S
            if cancel_deadline is not None and now > cancel_deadline:
                logger.warning("answer model worker did not stop when asked; killing it")
                self._kill()
                raise Cancelled()
            if deadline is not None and now > deadline:
                self._kill()
                raise KnownError(f"The answer model {self.path.name} took too long to load.",
                                 "Pick a smaller GGUF file.")

    def _call(self, kind: str, args: Any, should_cancel: Callable[[], bool] | None = None) -> Any:
        connection = self._ensure()
        self._flag.value = 0
        try:
            connection.send((kind, args))
        except (BrokenPipeError, OSError):
            raise self._died(False) from None
        reply, *rest = self._receive(should_cancel=should_cancel)
        if reply == "error":
            raise KnownError(rest[0], rest[1])
        if reply == "cancelled":
            raise Cancelled()
        return rest[0]

    # -- the Generator interface

    def count_tokens(self, text: str) -> int:
        return int(self._call("count", text))

    def prompt_tokens(self, prompt: str) -> list[int]:
        return list(self._call("prompt_tokens", prompt))

    def render(self, messages: Sequence[Message]) -> str:
        self._ensure()
        return render_chat_template(self._template, messages, self._bos, self._eos)

    def check_grammar(self, grammar: str) -> None:
        self._call("grammar", grammar)

    def reply_logprob(self, messages: Sequence[Message], reply: str,
                      should_cancel: Callable[[], bool] = lambda: False) -> float:
        """See :meth:`LlamaGenerator.reply_logprob` (read in the worker; raises Cancelled)."""
        return float(self._call("reply_logprob", (list(messages), reply), should_cancel))

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = lambda: False) -> int:
        try:
            return int(self._call("prime", list(messages), should_cancel))
        except Cancelled:
            return 0

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        grammar: str | None = None,
        should_cancel: Callable[[], bool] = lambda: False,
        steering: Steering | None = None,
    ) -> Iterator[str]:
        """Yield text deltas. Raises KnownError before the first delta if the model fails
        to start; ModelProcessDied (a KnownError) mid-answer if its process dies."""
        connection = self._ensure()
        self._flag.value = 0
        request = {"messages": list(messages), "max_tokens": max_tokens,
                   "temperature": temperature, "grammar": grammar, "steering": steering}
        try:
            connection.send(("stream", request))
        except (BrokenPipeError, OSError):
            raise self._died(False) from None
        try:
            reply, *rest = self._receive(should_cancel=should_cancel)
        except Cancelled:
            return _raise(Cancelled())
        if reply == "error":
            raise KnownError(rest[0], rest[1])
        if reply == "cancelled":
            self._set_stats(rest[0])
            return _raise(Cancelled())
        return self._deltas(should_cancel)

    def _deltas(self, should_cancel: Callable[[], bool]) -> Iterator[str]:
        finished = False
        try:
            while True:
                reply, *rest = self._receive(should_cancel=should_cancel)
                if reply == "delta":
                    yield rest[0]
                elif reply == "done":
                    finished = True
                    self._set_stats(rest[0])
                    return
                elif reply == "cancelled":
                    finished = True
                    self._set_stats(rest[0])
                    raise Cancelled()
                elif reply == "error":
                    finished = True
                    raise KnownError(rest[0], rest[1])
        finally:
            if not finished and self.is_alive():
                self._stop_stream()

    def _stop_stream(self) -> None:
        """The consumer stopped early: make the worker stop and read what it still sends,
        so the next request starts on a quiet pipe."""
        self._flag.value = 1
        deadline = time.monotonic() + _CANCEL_GRACE_S
        try:
            while time.monotonic() < deadline:
                reply, *_ = self._receive(deadline)
                if reply in ("done", "cancelled", "error"):
                    return
        except (KnownError, Cancelled):
            return
        self._kill()

    def _set_stats(self, stats: dict[str, Any] | None) -> None:
        self.last_stats = GenerationStats(**stats) if stats else None
        if self.last_stats is not None:
            self.speed.add(self.last_stats)


def _raise(error: BaseException) -> Iterator[str]:
    raise error
    yield ""  # pragma: no cover - makes this a generator: the error comes from iterating
