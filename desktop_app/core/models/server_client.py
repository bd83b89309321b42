"""Answers from a shared model server: a :class:`~desktop_app.core.stages.Generator` over
OpenAI-compatible chat completions, streamed as server-sent events. Qt-free, no asyncio.

The tracker, resolver, verifier, judge and window cannot tell it from the llama.cpp
generator: it counts tokens (the server's /tokenize where it has one, llama.cpp's
servers do; else a conservative estimate, logged), streams text deltas, raises
KnownError before the first delta when the server cannot answer and mid-answer when it
stops (the answer keeps what was written), and raises Cancelled when asked to stop.

One HTTP exchange runs on a reader thread that puts events on a queue; the caller's
thread waits on the queue in short steps, so ``should_cancel`` is checked between chunks
and also while the server reads the prompt. A cancel shuts the connection's socket down,
which the server sees as the client going away (llama.cpp's servers then stop decoding);
before the server sent its headers there is no socket to shut yet, and the server stops
when it sends the first chunk. Failures before the first token that may pass (refused
while the server restarts, 502/503/504, 429, a connection cut during the prompt) are
retried with backoff; an API key, a model or a URL that is wrong is reported at once.

The citation grammar goes in llama.cpp's ``grammar`` field, with its sampling fields
(``repeat_penalty``); a server that refuses those fields (HTTP 400/422) is asked again
without them, and from then on never gets them (answers still stream, unconstrained).
Figures: ``bench/server.py`` (decode tokens/s in-process against llama_cpp.server).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models.generate import REPEAT_PENALTY, TOP_P
from desktop_app.core.models.server_http import (
    RETRY_STATUSES,
    ServerAddress,
    Tokenizer,
    choose_model,
    conservative_tokens,
    find_tokenizer,
    list_models,
    open_client,
    server_context,
    status_error,
    transport_error,
)
from desktop_app.core.stages import Deltas, Message
from desktop_app.core.types import GenerationStats, JsonObject, Steering

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

_POLL_S = 0.05  # how often the caller checks for cancellation while it waits
FIRST_TOKEN_TIMEOUT_S = 600.0  # a CPU server reading a long prompt for a big model
CHUNK_TIMEOUT_S = 120.0  # between two chunks once the answer streams
RETRIES = 3  # attempts before the first token
BACKOFF_S = 0.5  # doubled after each failed attempt
_COUNT_CACHE = 256

_T = TypeVar("_T")


# What the reader thread tells the caller's thread, one event per chunk or failure.


@dataclass(frozen=True)
class _Delta:
    text: str


@dataclass(frozen=True)
class _Usage:
    fields: JsonObject  # the chunk's "usage": prompt_tokens, completion_tokens


@dataclass(frozen=True)
class _Done:
    reason: str  # the finish_reason


@dataclass(frozen=True)
class _Status:  # an HTTP error status
    code: int
    body: str


@dataclass(frozen=True)
class _Transport:  # a failure below HTTP
    error: Exception


@dataclass(frozen=True)
class _Broken:  # a stream that is not a chat completion, or stops early
    why: str


@dataclass(frozen=True)
class _Bug:  # not the server's doing: raised on the caller's thread
    error: Exception


@dataclass(frozen=True)
class _Stopped:  # the caller's should_cancel() turned true
    pass


@dataclass(frozen=True)
class _Silent:  # nothing came for this long
    seconds: float


_Event = _Delta | _Usage | _Done | _Status | _Transport | _Broken | _Bug
# What the caller's wait ends with (usage is folded in on the way).
_Outcome = _Delta | _Done | _Status | _Transport | _Broken | _Bug | _Stopped | _Silent


@dataclass
class _Exchange:
    """One streamed request: the reader thread's queue, its cancel flag and its response."""

    events: queue.Queue[_Event] = field(default_factory=queue.Queue)
    stop: threading.Event = field(default_factory=threading.Event)
    response: httpx.Response | None = None

    def close(self) -> None:
        """Stop the reader: flag it, and shut the socket down so a blocked read returns
        (closing a socket another thread reads from does not wake it on Linux)."""
        self.stop.set()
        response = self.response
        stream = response.extensions.get("network_stream") if response is not None else None
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _read_stream(client: httpx.Client, url: str, body: JsonObject, exchange: _Exchange,
                 read_timeout_s: float) -> None:
    """The reader thread: POST, then one event per chunk: _Delta, _Usage, _Done; or
    _Status, _Transport, _Broken when the server fails or stops early."""
    import httpx

    put = exchange.events.put
    try:
        with client.stream("POST", url, json=body, timeout=httpx.Timeout(read_timeout_s, connect=5.0)) as response:
            exchange.response = response
            if exchange.stop.is_set():
                return
            if response.status_code != 200:
                put(_Status(response.status_code, response.read().decode("utf-8", "replace")[:4000]))
                return
            if "text/event-stream" not in response.headers.get("content-type", ""):
                _read_whole(response, put)
                return
            finished = ""
            for line in response.iter_lines():
                if exchange.stop.is_set():
                    return
                if not line.startswith("data:"):
                    continue  # blank separators, ": ping" comments, "event:" names
                data = line[5:].strip()
                if data == "[DONE]":
                    put(_Done(finished or "stop"))
                    return
                try:
                    chunk = json.loads(data)
                except ValueError:
                    put(_Broken(f"a chunk that is not JSON: {data[:80]!r}"))
                    return
                if not isinstance(chunk, dict):
                    continue
                if chunk.get("error"):
                    error = chunk["error"]
                    put(_Broken(str(error.get("message", error) if isinstance(error, dict) else error)))
                    return
                if isinstance(chunk.get("usage"), dict):
                    put(_Usage(chunk["usage"]))
                for choice in (chunk.get("choices") or [])[:1]:
                    delta = choice.get("delta") or {}
                    content = delta.get("content") if isinstance(delta, dict) else None
                    if content:
                        put(_Delta(str(content)))
                    finished = choice.get("finish_reason") or finished
            if finished:  # a server that ends without [DONE]
                put(_Done(finished))
            else:
                put(_Broken("the stream ended before the answer did"))
    except httpx.HTTPError as exc:
        if not exchange.stop.is_set():
            put(_Transport(exc))
    except Exception as exc:  # a bug: handed to the caller, which raises it
        put(_Bug(exc))


def _read_whole(response: httpx.Response, put: Callable[[_Event], None]) -> None:
    """A server that ignored ``stream`` and sent one JSON answer: one delta."""
    try:
        data = json.loads(response.read())
        choice = data["choices"][0]
        content = (choice.get("message") or {}).get("content") or choice.get("text") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        kind = response.headers.get("content-type", "?").split(";")[0]
        put(_Broken(f"it answered with {kind}, not a chat completion (is it OpenAI-compatible?)"))
        return
    if isinstance(data.get("usage"), dict):
        put(_Usage(data["usage"]))
    if content:
        put(_Delta(str(content)))
    put(_Done(choice.get("finish_reason") or "stop"))


def _empty() -> Deltas:
    yield from ()


def _cancelled() -> Deltas:
    raise Cancelled()
    yield ""  # pragma: no cover - makes this a generator: Cancelled comes from iterating


class ServerGenerator:
    """A Generator whose model runs on an OpenAI-compatible server.

    Construction asks the server for its models (and raises KnownError saying what is
    wrong: refused, timeout, 401, no such model, not OpenAI-compatible), finds how it
    counts tokens and, where it says, its context window. Call it from one thread at a
    time (the facade's ``folio-llm`` thread).
    """

    scores_replies = False  # an OpenAI-compatible server does not expose the logits

    def __init__(self, url: str, model: str = "", *, api_key: str = "", context_tokens: int = 4096,
                 seed: int = 42, retries: int = RETRIES, backoff_s: float = BACKOFF_S,
                 first_token_timeout_s: float = FIRST_TOKEN_TIMEOUT_S,
                 chunk_timeout_s: float = CHUNK_TIMEOUT_S,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.address = ServerAddress.parse(url)
        self._key_given = bool(api_key)
        self._client = open_client(api_key, transport)
        self.seed = seed
        self.retries = max(1, retries)
        self.backoff_s = backoff_s
        self.first_token_timeout_s = first_token_timeout_s
        self.chunk_timeout_s = chunk_timeout_s
        self.last_stats: GenerationStats | None = None
        self.llama_fields = True  # grammar and llama.cpp's sampling fields; off once refused
        self._counts: dict[str, int] = {}
        try:
            models = self._with_retries(lambda: list_models(self._client, self.address, key_given=self._key_given))
            chosen = choose_model(models, model.strip(), self.address)
            self.model = chosen.id
            reported = chosen.context_tokens or server_context(self._client, self.address)
            self.tokenizer: Tokenizer = find_tokenizer(self._client, self.address, self.model)
        except BaseException:
            self._client.close()
            raise
        self.context_tokens = min(context_tokens, reported) if reported else context_tokens
        name = self.model.rsplit("/", 1)[-1] if self.model.startswith("/") else self.model
        self.model_id = f"{name} at {self.address.netloc}"
        logger.info("answers from the model server %s: model %s, context %d tokens (%s), token counts from %s",
                    self.address.base, self.model, self.context_tokens,
                    "the server's" if reported else "the settings'", self.tokenizer.describe)

    def _with_retries(self, call: Callable[[], _T]) -> _T:
        """``call`` again after a refused connection or a busy server, with backoff."""
        for attempt in range(self.retries):
            try:
                return call()
            except KnownError as exc:
                if attempt + 1 >= self.retries or not _may_pass(exc):
                    raise
                logger.info("model server not ready (%s); trying again", exc.message)
                time.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the Generator interface

    def count_tokens(self, text: str) -> int:
        cached = self._counts.get(text)
        if cached is not None:
            return cached
        import httpx

        count = 0
        if self.tokenizer.url:
            try:
                count = self.tokenizer.count(self._client, text, self.model)
            except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
                logger.warning("the server's token count failed (%s); estimating from now on",
                               type(exc).__name__)
                self.tokenizer = Tokenizer()
        if not count:
            count = conservative_tokens(text)
        if len(self._counts) >= _COUNT_CACHE:
            self._counts.clear()
        self._counts[text] = count
        return count

    def render(self, messages: Sequence[Message]) -> str:
        """A plain text view of the chat (the server applies the model's own template):
        what the token estimates measure."""
        return "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages) + "<|assistant|>\n"

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = lambda: False) -> int:
        return 0  # nothing to prime: the server keeps its own cache

    def close(self) -> None:
        self._client.close()

    def reply_logprob(self, messages: Sequence[Message], reply: str,
                      should_cancel: Callable[[], bool] = lambda: False) -> float:
        raise KnownError("A model server does not say how likely a reply is.",
                         "Use a local answer model for this check.")

    def estimate_s(self, prompt_tokens: int) -> float:
        return 0.0  # a server's speed is its own

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
        """Yield text deltas. Raises KnownError before the first delta if the server cannot
        answer, and mid-answer if it stops. ``steering`` needs the model's logits, which an
        OpenAI-compatible server does not expose: it is ignored."""
        prompt_tokens = self.count_tokens(self.render(messages))
        room = self.context_tokens - prompt_tokens
        if room < 16:
            raise KnownError(
                f"The question and its sources take about {prompt_tokens} tokens; the server's window is {self.context_tokens}.",
                "Ask with fewer sources per answer.",
            )
        body: JsonObject = {
            "model": self.model, "messages": [dict(m) for m in messages], "stream": True,
            "max_tokens": min(max_tokens, room), "temperature": temperature, "top_p": TOP_P,
            "seed": self.seed, "stream_options": {"include_usage": True},
        }
        llama_fields: JsonObject = {"repeat_penalty": REPEAT_PENALTY, "cache_prompt": True}
        if grammar:
            llama_fields["grammar"] = grammar
        started = time.perf_counter()
        attempt = 0
        while True:
            sent_llama = self.llama_fields
            exchange = self._open(body | llama_fields if sent_llama else body)
            usage: JsonObject = {}
            outcome = self._next(exchange, should_cancel, self.first_token_timeout_s, usage)
            if isinstance(outcome, _Delta):
                break
            exchange.close()
            if isinstance(outcome, _Stopped):
                self.last_stats = GenerationStats(prompt_tokens, 0, 0.0, time.perf_counter() - started)
                return _cancelled()
            if isinstance(outcome, _Done):  # an empty answer
                self.last_stats = GenerationStats(prompt_tokens, 0, 0.0, time.perf_counter() - started)
                return _empty()
            if isinstance(outcome, _Status) and outcome.code in (400, 422) and sent_llama:
                logger.warning("the model server refused llama.cpp's fields (%d); asking without them:"
                               " no citation grammar", outcome.code)
                self.llama_fields = False
                continue
            error = self._error(outcome, before_first=True)
            if attempt + 1 < self.retries and _may_pass(error, outcome):
                logger.info("model server attempt %d failed (%s); trying again", attempt + 1, error.message)
                if not self._sleep(self.backoff_s * 2**attempt, should_cancel):
                    return _cancelled()
                attempt += 1
                continue
            if isinstance(outcome, _Status) and outcome.code in (400, 422) and not sent_llama:
                self.llama_fields = True  # the plain request failed too: the fields were not the cause
            raise error
        return self._drain(exchange, outcome.text, should_cancel, prompt_tokens, started, usage)

    # -- the exchange

    def _open(self, body: JsonObject) -> _Exchange:
        exchange = _Exchange()
        reader = threading.Thread(target=_read_stream, name="folio-server-stream", daemon=True,
                                  args=(self._client, f"{self.address.base}/chat/completions", body, exchange,
                                        max(self.first_token_timeout_s, self.chunk_timeout_s) + 1.0))
        reader.start()
        return exchange

    def _next(self, exchange: _Exchange, should_cancel: Callable[[], bool], timeout_s: float,
              usage: JsonObject) -> _Outcome:
        """The reader's next event (usage is folded into ``usage``), _Stopped when
        ``should_cancel()`` turns true, _Silent when none comes in time."""
        deadline = time.monotonic() + timeout_s
        while True:
            if should_cancel():
                return _Stopped()
            try:
                event = exchange.events.get(timeout=_POLL_S)
            except queue.Empty:
                if time.monotonic() > deadline:
                    return _Silent(timeout_s)
                continue
            if isinstance(event, _Usage):
                usage.update(event.fields)
                continue
            return event

    def _drain(self, exchange: _Exchange, first: str, should_cancel: Callable[[], bool], prompt_tokens: int,
               started: float, usage: JsonObject) -> Deltas:
        first_at = time.perf_counter()
        deltas = 1
        try:
            yield first
            while True:
                outcome = self._next(exchange, should_cancel, self.chunk_timeout_s, usage)
                if isinstance(outcome, _Delta):
                    deltas += 1
                    yield outcome.text
                    continue
                self.last_stats = GenerationStats(
                    _count(usage.get("prompt_tokens")) or prompt_tokens,
                    _count(usage.get("completion_tokens")) or deltas,
                    first_at - started, time.perf_counter() - started,
                )
                if isinstance(outcome, _Done):
                    return
                if isinstance(outcome, _Stopped):
                    raise Cancelled()
                raise self._error(outcome, before_first=False)
        finally:
            exchange.close()

    def _error(self, outcome: _Status | _Transport | _Broken | _Bug | _Silent, *,
               before_first: bool) -> KnownError:
        where = self.address.netloc
        if isinstance(outcome, _Bug):
            raise outcome.error  # not the server's doing: a bug, logged with its traceback upstream
        if isinstance(outcome, _Status):
            return status_error(outcome.code, outcome.body, self.address, key_given=self._key_given, model=self.model)
        if isinstance(outcome, _Transport):
            error = transport_error(outcome.error, self.address)
        elif isinstance(outcome, _Silent):
            what = "the first word of the answer" if before_first else "the next part of the answer"
            error = KnownError(f"The model server at {where} sent nothing for {outcome.seconds:.0f} s, waiting for {what}.",
                               "Is it overloaded? Ask again, or ask with fewer sources.")
        else:  # broken
            error = KnownError(f"The model server at {where} sent a broken answer: {outcome.why}.",
                               "Check that the URL names an OpenAI-compatible server." if before_first else "Ask again.")
        if before_first:
            return error
        prefix = f"The model server at {where} "
        cause = "it " + error.message[len(prefix):] if error.message.startswith(prefix) else error.message
        return KnownError(f"The model server at {where} stopped mid-answer: {cause}",
                          "What was written is kept. Ask again when the server is back.")

    @staticmethod
    def _sleep(seconds: float, should_cancel: Callable[[], bool]) -> bool:
        """Wait, checking for cancellation; False if cancelled."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if should_cancel():
                return False
            time.sleep(min(_POLL_S, max(0.0, deadline - time.monotonic())))
        return not should_cancel()


def _may_pass(error: KnownError, outcome: _Outcome | None = None) -> bool:
    """Whether a failure before the first token is worth another attempt: the server
    restarting or busy, a connection cut while it read the prompt. Never a wrong key,
    model or URL."""
    if isinstance(outcome, _Status):
        return outcome.code in RETRY_STATUSES
    if isinstance(outcome, _Silent | _Broken):
        return False
    text = error.message
    return any(w in text for w in ("Connection refused", "closed the connection", "is busy", "timed out (connecting)"))


def _count(value: object) -> int:
    """A token count the server reported in "usage"; 0 when absent or not a number."""
    return int(value) if isinstance(value, int | float | str) and str(value).strip() else 0
