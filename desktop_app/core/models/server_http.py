"""Talking to an OpenAI-compatible model server (llama-server, llama_cpp.server, vLLM,
Ollama) over HTTP: its address, what its failures mean for a person, the models it
lists, how it counts tokens, and the check behind Settings ▸ Test connection. Qt-free,
no asyncio (httpx's blocking client).

Every request goes to the one server named in the settings and nowhere else: the client
ignores proxy variables and ``.netrc`` (``trust_env=False``). The API key travels only in
the ``Authorization`` header; it is never logged and never part of an error message.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_app.core.errors import KnownError
from desktop_app.core.settings import normalize_server_url
from desktop_app.core.text.words import estimate_tokens
from desktop_app.core.types import JsonObject

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 15.0  # model lists, token counts, the server's properties
PROBE_TEXT = "Folio counts tokens."
SETTINGS_HINT = "Check Settings ▸ Answer model ▸ Model server (or `folio ask --server URL`)."


@dataclass(frozen=True)
class ServerAddress:
    base: str  # the OpenAI-compatible API: http://host:port/v1
    root: str  # the server itself: http://host:port (llama.cpp's /tokenize and /props live here)
    netloc: str  # host:port, for messages

    @classmethod
    def parse(cls, url: str) -> ServerAddress:
        from urllib.parse import urlsplit

        base = normalize_server_url(url)
        parts = urlsplit(base)
        return cls(base, f"{parts.scheme}://{parts.netloc}", parts.netloc)


def open_client(api_key: str = "", transport: httpx.BaseTransport | None = None,
                read_timeout_s: float = REQUEST_TIMEOUT_S) -> httpx.Client:
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = httpx.Timeout(read_timeout_s, connect=CONNECT_TIMEOUT_S)
    return httpx.Client(headers=headers, timeout=timeout, trust_env=False, transport=transport,
                        follow_redirects=False)


# ---------------------------------------------------------------------------- what went wrong


def transport_error(exc: Exception, address: ServerAddress) -> KnownError:
    """A KnownError for a failure below HTTP: refused, unknown host, timeout, cut off."""
    import httpx

    text = str(exc)
    if isinstance(exc, httpx.TimeoutException):
        what = "connecting" if isinstance(exc, httpx.ConnectTimeout) else "waiting for an answer"
        return KnownError(f"The model server at {address.netloc} timed out ({what}).",
                          "Is it running and reachable? A busy server may need a moment; ask again.")
    if isinstance(exc, httpx.ConnectError):
        if "refused" in text.lower() or "errno 111" in text.lower():
            return KnownError(f"Connection refused: nothing answers at {address.netloc}.",
                              "Start the model server, or check the URL and its port. " + SETTINGS_HINT)
        if "name or service" in text.lower() or "nodename" in text.lower() or "errno -2" in text.lower():
            return KnownError(f"The host in {address.base} cannot be found.", SETTINGS_HINT)
        if "certificate" in text.lower() or "ssl" in text.lower():
            return KnownError(f"The TLS connection to {address.netloc} failed ({text}).",
                              "Check the server's certificate, or use http:// on a trusted network.")
        return KnownError(f"Cannot connect to the model server at {address.netloc} ({text}).", SETTINGS_HINT)
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        return KnownError(f"The model server at {address.netloc} closed the connection ({text or type(exc).__name__}).",
                          "Is it still running? Ask again when it is back.")
    return KnownError(f"The model server at {address.netloc} failed: {text or type(exc).__name__}.", SETTINGS_HINT)


def error_message(body: str) -> str:
    """The server's own words from an error body (OpenAI's, FastAPI's or plain text)."""
    import json

    try:
        data: object = json.loads(body)
    except ValueError:
        return " ".join(body.split())[:200]
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message", "")))
        if isinstance(error, dict):
            error = error.get("message", "")
        if isinstance(error, list):  # FastAPI's validation errors
            error = "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in error)
        return " ".join(str(error).split())[:300]
    return " ".join(str(data).split())[:200]


def status_error(status: int, body: str, address: ServerAddress, *, key_given: bool,
                 model: str = "", listing: bool = False) -> KnownError:
    """A KnownError for an HTTP error status, in the words a person can act on."""
    said = error_message(body)
    detail = f" ({said})" if said else ""
    if status == 401:
        if key_given:
            return KnownError(f"The model server at {address.netloc} refused the API key (401 Unauthorized).",
                              "Check the key in Settings ▸ Answer model ▸ Model server.")
        return KnownError(f"The model server at {address.netloc} needs an API key (401 Unauthorized).",
                          "Enter it in Settings ▸ Answer model ▸ Model server.")
    if status == 403:
        return KnownError(f"The model server at {address.netloc} does not allow this key (403 Forbidden){detail}.",
                          "Check the key in Settings ▸ Answer model ▸ Model server.")
    if status == 404 and (listing or "model" not in said.lower()):
        return KnownError(f"{address.base} is not an OpenAI-compatible model server (404 for its API).",
                          "Check the URL: llama-server and vLLM answer at http://HOST:PORT/v1, Ollama at"
                          " http://HOST:11434/v1.")
    if status == 404 or (status == 400 and model and "model" in said.lower() and "not" in said.lower()):
        return KnownError(f"The model server at {address.netloc} has no model {model!r}{detail}.",
                          "Pick one of the models it lists in Settings (or `--server-model NAME`).")
    if status in (400, 413, 422) and ("context" in said.lower() or "too long" in said.lower()
                                      or "exceed" in said.lower()):
        return KnownError(f"The question and its sources do not fit the server's context window{detail}.",
                          "Lower Settings ▸ Context window to the server's, or ask with fewer sources.")
    if status == 429 or status == 503:
        return KnownError(f"The model server at {address.netloc} is busy ({status}){detail}.",
                          "Ask again in a moment.")
    return KnownError(f"The model server at {address.netloc} answered {status}{detail}.", SETTINGS_HINT)


RETRY_STATUSES = frozenset({429, 502, 503, 504})


# ---------------------------------------------------------------------------- what the server offers


@dataclass(frozen=True)
class ServerModel:
    id: str
    context_tokens: int | None = None  # vLLM lists its max_model_len


def list_models(client: httpx.Client, address: ServerAddress, *, key_given: bool) -> list[ServerModel]:
    """GET /v1/models. Raises KnownError naming what is wrong (refused, 401, not
    OpenAI-compatible)."""
    import httpx

    try:
        response = client.get(f"{address.base}/models")
    except httpx.HTTPError as exc:
        raise transport_error(exc, address) from exc
    if response.status_code != 200:
        raise status_error(response.status_code, response.text, address, key_given=key_given, listing=True)
    try:
        data = response.json()
        entries = data["data"]
        if not isinstance(entries, list):
            raise TypeError("data is not a list")
        models = [ServerModel(str(e["id"]), _int_or_none(e.get("max_model_len"))) for e in entries]
    except (ValueError, KeyError, TypeError) as exc:
        kind = response.headers.get("content-type", "?").split(";")[0]
        raise KnownError(f"{address.base} is not an OpenAI-compatible model server: GET /v1/models"
                         f" gave {kind}, not a model list.",
                         "Check the URL: it should name the server's API, usually ending in /v1.") from exc
    return models


def choose_model(models: list[ServerModel], wanted: str, address: ServerAddress) -> ServerModel:
    """The model ``wanted`` among those listed (Ollama's ``name`` matches ``name:latest``),
    or the first one when none is named."""
    if not models:
        raise KnownError(f"The model server at {address.netloc} lists no model.", "Load a model into it first.")
    if not wanted:
        return models[0]
    for model in models:
        if model.id in (wanted, f"{wanted}:latest") or model.id.rsplit("/", 1)[-1] == wanted:
            return model
    listed = ", ".join(m.id for m in models[:8]) + (" …" if len(models) > 8 else "")
    raise KnownError(f"The model server at {address.netloc} has no model {wanted!r}; it lists: {listed}.",
                     "Pick one of these in Settings (or `--server-model NAME`).")


def server_context(client: httpx.Client, address: ServerAddress) -> int | None:
    """The context window llama-server reports at /props (None where there is no such page)."""
    import httpx

    try:
        response = client.get(f"{address.root}/props")
        if response.status_code != 200:
            return None
        data = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    found = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _int_or_none(found if found is not None else data.get("n_ctx"))


def _int_or_none(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and value > 0 else None


# ---------------------------------------------------------------------------- counting tokens


def conservative_tokens(text: str) -> int:
    """A conservative count when the server cannot tokenize (text/words.estimate_tokens):
    one token per CJK character, one per three other characters (real tokenizers give ~4
    characters per English token and 1.3-2 CJK characters per token, so prompts are packed
    a little short, never over)."""
    return estimate_tokens(text, chars_per_token=3, cjk_tokens=1, at_least=0)


# (path, body) of the tokenize endpoints: llama-server's and vLLM's /tokenize (each reads
# its own field), llama-cpp-python's server's /extras/tokenize.
TOKENIZE_ENDPOINTS: tuple[tuple[str, str], ...] = (("/tokenize", "content"), ("/extras/tokenize", "input"))


@dataclass(frozen=True)
class Tokenizer:
    """How a server's tokens are counted: an endpoint, or the estimate (url "")."""

    url: str = ""
    field: str = ""

    @property
    def describe(self) -> str:
        return f"the server's {self.url}" if self.url else "an estimate (3 characters or 1 CJK character a token)"

    def count(self, client: httpx.Client, text: str, model: str) -> int:
        """Tokens in ``text``; raises httpx.HTTPError, ValueError or KeyError if the server fails."""
        body: JsonObject = {self.field: text, "model": model}
        if self.field == "content":
            body.update(prompt=text, add_special=False, add_special_tokens=False)
        response = client.post(self.url, json=body)
        response.raise_for_status()
        data = response.json()
        if isinstance(data.get("count"), int):
            return int(data["count"])
        tokens = data["tokens"]
        if not isinstance(tokens, list):
            raise ValueError("tokens is not a list")
        return len(tokens)


def find_tokenizer(client: httpx.Client, address: ServerAddress, model: str) -> Tokenizer:
    """The server's tokenize endpoint if it has one that answers, else the estimate."""
    import httpx

    for path, field in TOKENIZE_ENDPOINTS:
        tokenizer = Tokenizer(f"{address.root}{path}", field)
        try:
            if tokenizer.count(client, PROBE_TEXT, model) > 0:
                return tokenizer
        except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return Tokenizer()


# ---------------------------------------------------------------------------- Settings ▸ Test connection


@dataclass(frozen=True)
class ConnectionReport:
    """What a working server offers: its models, the one chosen, its context window (when
    it says), how tokens will be counted, and the round trip of a one-token answer."""

    models: tuple[str, ...]
    model: str
    context_tokens: int | None
    tokens: str
    seconds: float

    def describe(self) -> str:
        context = f", context {self.context_tokens:,} tokens" if self.context_tokens else ""
        return (f"Connected: {self.model}{context}; {len(self.models)} model(s) listed; token counts from"
                f" {self.tokens}; a one-token answer took {self.seconds:.1f} s.")


def server_model_names(url: str, api_key: str = "", transport: httpx.BaseTransport | None = None) -> list[str]:
    """The ids GET /v1/models lists (for the settings' model list). Raises KnownError."""
    address = ServerAddress.parse(url)
    with open_client(api_key, transport) as client:
        return [m.id for m in list_models(client, address, key_given=bool(api_key))]


def check_connection(url: str, model: str = "", api_key: str = "",
                     transport: httpx.BaseTransport | None = None, answer_timeout_s: float = 120.0) -> ConnectionReport:
    """List the models, find ``model``, and ask it for one token over the chat API.
    Raises KnownError saying what is wrong: refused, timeout, 401, no such model, not
    OpenAI-compatible."""
    import httpx

    address = ServerAddress.parse(url)
    key_given = bool(api_key)
    with open_client(api_key, transport) as client:
        models = list_models(client, address, key_given=key_given)
        chosen = choose_model(models, model.strip(), address)
        context = chosen.context_tokens or server_context(client, address)
        tokenizer = find_tokenizer(client, address, chosen.id)
        started = time.perf_counter()
        body = {"model": chosen.id, "messages": [{"role": "user", "content": "Say OK."}],
                "max_tokens": 1, "temperature": 0.0, "stream": False}
        try:
            response = client.post(f"{address.base}/chat/completions", json=body, timeout=answer_timeout_s)
        except httpx.HTTPError as exc:
            raise transport_error(exc, address) from exc
        if response.status_code != 200:
            raise status_error(response.status_code, response.text, address, key_given=key_given, model=chosen.id)
        try:
            response.json()["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise KnownError(f"{address.base} is not an OpenAI-compatible model server: its chat completion"
                             " holds no choices.", SETTINGS_HINT) from exc
        seconds = time.perf_counter() - started
    logger.info("model server %s: model %s, context %s, token counts from %s", address.base, chosen.id,
                context or "not reported", tokenizer.describe)
    return ConnectionReport(tuple(m.id for m in models), chosen.id, context, tokenizer.describe, seconds)
