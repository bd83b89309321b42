"""The model-server generator against a scripted server (httpx's MockTransport): deltas in
order, retries before the first token only, a wrong key or model or URL said plainly, a
grammar the server refuses dropped, a stream cut mid-answer a KnownError, cancel at
once; the API key in a private file, never in settings.toml. The real server:
tests/e2e/test_server_real.py."""

from __future__ import annotations

import json
import logging
import stat
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from desktop_app.core import settings as settings_mod
from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models.server_client import ServerGenerator
from desktop_app.core.models.server_http import check_connection, conservative_tokens
from desktop_app.core.settings import Settings

QUESTION = [{"role": "system", "content": "Cite like [1]."}, {"role": "user", "content": "When does it open?"}]


def chunk(text: str | None = None, finish: str | None = None) -> bytes:
    delta = {"content": text} if text is not None else {}
    body = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


def sse(*texts: str, done: bool = True) -> list[bytes]:
    parts = [chunk(t) for t in texts]
    if done:
        parts += [chunk(finish="stop"), b'data: {"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 3}}\n\n',
                  b"data: [DONE]\n\n"]
    return parts


def streaming(parts: list[bytes] | Iterator[bytes]) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(parts))


class FakeServer:
    """An OpenAI-compatible server in a handler: /v1/models, an optional /tokenize, and a
    queue of chat responses (each a Response or a callable taking the request)."""

    def __init__(self, *, models: list[str] | None = None, tokenize: bool = False, key: str = "") -> None:
        self.models = models if models is not None else ["tiny-chat"]
        self.tokenize = tokenize
        self.key = key
        self.chat: list[Any] = []
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[httpx.Headers] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.headers.append(request.headers)
        if self.key and request.headers.get("authorization") != f"Bearer {self.key}":
            return httpx.Response(401, json={"error": {"message": "Invalid API key", "type": "auth"}})
        path = request.url.path
        if path == "/v1/models":
            return httpx.Response(200, json={"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]})
        if path == "/tokenize" and self.tokenize:
            text = json.loads(request.content)["content"]
            return httpx.Response(200, json={"tokens": list(range(len(text.split())))})
        if path == "/v1/chat/completions":
            self.bodies.append(json.loads(request.content))
            reply = self.chat.pop(0) if self.chat else streaming(sse("Fine."))
            return reply(request) if callable(reply) else reply
        return httpx.Response(404, json={"detail": "Not Found"})

    def generator(self, **options: Any) -> ServerGenerator:
        options.setdefault("backoff_s", 0.01)
        return ServerGenerator("http://127.0.0.1:9/v1", options.pop("model", ""),
                               transport=httpx.MockTransport(self.handler), **options)


def test_deltas_stream_in_order_with_the_grammar_and_the_key() -> None:
    server = FakeServer(key="s3cret")
    server.chat.append(streaming(sse("It opens", " at 9", " [1].")))
    generator = server.generator(api_key="s3cret", context_tokens=2048)
    assert generator.model == "tiny-chat" and generator.model_id == "tiny-chat at 127.0.0.1:9"
    deltas = list(generator.stream(QUESTION, max_tokens=32, temperature=0.0, grammar='root ::= "x"'))
    assert deltas == ["It opens", " at 9", " [1]."]
    body = server.bodies[0]
    assert body["stream"] is True and body["model"] == "tiny-chat" and body["messages"] == QUESTION
    assert body["grammar"] == 'root ::= "x"' and body["repeat_penalty"] == 1.0 and body["temperature"] == 0.0
    assert all(h["authorization"] == "Bearer s3cret" for h in server.headers)
    assert generator.last_stats is not None and generator.last_stats.completion_tokens == 3
    assert generator.last_stats.prompt_tokens == 40  # the server's own usage count
    assert generator.prime(QUESTION) == 0


def test_a_busy_or_restarting_server_is_asked_again_before_the_first_token() -> None:
    server = FakeServer()
    calls: list[str] = []

    def refused(request: httpx.Request) -> httpx.Response:
        calls.append("refused")
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    server.chat += [refused, httpx.Response(503, json={"error": {"message": "Loading model"}}),
                    streaming(sse("Back."))]
    generator = server.generator()
    assert list(generator.stream(QUESTION, max_tokens=8, temperature=0.0)) == ["Back."]
    assert calls == ["refused"] and len(server.bodies) == 3  # refused, busy, answered


def test_a_server_that_stays_down_is_reported_after_the_retries() -> None:
    server = FakeServer()
    server.chat += [httpx.Response(503, json={"error": {"message": "Loading model"}})] * 3
    generator = server.generator(retries=3)
    with pytest.raises(KnownError, match="is busy"):
        generator.stream(QUESTION, max_tokens=8, temperature=0.0)
    assert len(server.bodies) == 3


def test_a_wrong_key_is_said_at_once_and_not_retried() -> None:
    server = FakeServer(key="right")
    with pytest.raises(KnownError, match=r"refused the API key \(401"):
        server.generator(api_key="wrong")
    with pytest.raises(KnownError, match="needs an API key"):
        server.generator()
    assert len(server.headers) == 2  # one request each: a 401 is not worth a second try


def test_a_server_that_refuses_the_grammar_still_answers_without_it() -> None:
    server = FakeServer()
    server.chat += [httpx.Response(400, json={"error": {"message": "Unrecognized request argument supplied: grammar"}}),
                    streaming(sse("Plain.")), streaming(sse("Again."))]
    generator = server.generator()
    assert list(generator.stream(QUESTION, max_tokens=8, temperature=0.0, grammar='root ::= "x"')) == ["Plain."]
    assert "grammar" in server.bodies[0] and "grammar" not in server.bodies[1]
    assert list(generator.stream(QUESTION, max_tokens=8, temperature=0.0, grammar='root ::= "x"')) == ["Again."]
    assert "grammar" not in server.bodies[2] and "repeat_penalty" not in server.bodies[2]


def test_a_stream_cut_mid_answer_is_a_known_error_after_what_was_written() -> None:
    def cut() -> Iterator[bytes]:
        yield chunk("The deposit is")
        yield chunk(" two months")
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    server = FakeServer()
    server.chat.append(streaming(cut()))
    received: list[str] = []
    with pytest.raises(KnownError, match="stopped mid-answer") as caught:
        for delta in server.generator().stream(QUESTION, max_tokens=32, temperature=0.0):
            received.append(delta)
    assert received == ["The deposit is", " two months"]
    assert "What was written is kept" in caught.value.hint


def test_a_stream_that_ends_without_finishing_is_a_known_error() -> None:
    server = FakeServer()
    server.chat.append(streaming(sse("Half", done=False)))
    with pytest.raises(KnownError, match="ended before the answer did"):
        list(server.generator().stream(QUESTION, max_tokens=32, temperature=0.0))


def test_an_error_the_server_sends_in_the_stream_is_a_known_error() -> None:
    server = FakeServer()
    server.chat.append(streaming([chunk("Some"), b'data: {"error": {"message": "KV cache full"}}\n\n']))
    with pytest.raises(KnownError, match="KV cache full"):
        list(server.generator().stream(QUESTION, max_tokens=32, temperature=0.0))


def test_cancel_between_chunks_stops_the_stream() -> None:
    server = FakeServer()
    server.chat.append(streaming(sse(*[f" w{n}" for n in range(50)])))
    received: list[str] = []
    with pytest.raises(Cancelled):
        for delta in server.generator().stream(QUESTION, max_tokens=64, temperature=0.0,
                                               should_cancel=lambda: len(received) >= 3):
            received.append(delta)
    assert len(received) == 3


def test_cancel_while_the_server_reads_the_prompt_returns_at_once() -> None:
    release = threading.Event()
    answered = threading.Event()

    def slow(request: httpx.Request) -> httpx.Response:
        release.wait(10)  # a server still reading a long prompt
        answered.set()
        return streaming(sse("Late."))

    server = FakeServer()
    server.chat.append(slow)
    asked = time.monotonic()
    try:
        stream = server.generator().stream(QUESTION, max_tokens=8, temperature=0.0,
                                           should_cancel=lambda: time.monotonic() > asked + 0.2)
        with pytest.raises(Cancelled):
            next(iter(stream))
        # At once: the server has not answered yet (it holds the request until released).
        assert not answered.is_set()
    finally:
        release.set()


def test_no_first_token_in_time_is_a_timeout_not_a_hang() -> None:
    release = threading.Event()
    server = FakeServer()
    server.chat.append(lambda request: (release.wait(10), streaming(sse("Late.")))[1])
    try:
        with pytest.raises(KnownError, match="sent nothing for 0 s"):
            server.generator(first_token_timeout_s=0.3).stream(QUESTION, max_tokens=8, temperature=0.0)
    finally:
        release.set()


@pytest.mark.parametrize(("reply", "says"), [
    (httpx.Response(200, text="<html><body>My homepage</body></html>", headers={"content-type": "text/html"}),
     "not an OpenAI-compatible model server: GET /v1/models gave text/html"),
    (httpx.Response(404, text="Not Found"), "is not an OpenAI-compatible model server (404"),
])
def test_a_url_that_is_not_a_model_server_says_so(reply: httpx.Response, says: str) -> None:
    transport = httpx.MockTransport(lambda request: reply)
    with pytest.raises(KnownError, match=r"" + says.replace("(", r"\(")):
        ServerGenerator("http://127.0.0.1:9", transport=transport)
    with pytest.raises(KnownError, match=r"" + says.replace("(", r"\(")):
        check_connection("http://127.0.0.1:9", transport=transport)


def test_a_model_the_server_does_not_have_is_named_with_those_it_has() -> None:
    server = FakeServer(models=["qwen2.5:1.5b", "llama3.2:latest"])
    with pytest.raises(KnownError, match=r"has no model 'mistral'; it lists: qwen2.5:1.5b, llama3.2:latest"):
        server.generator(model="mistral")
    assert server.generator(model="llama3.2").model == "llama3.2:latest"  # Ollama's default tag


def test_tokens_are_counted_by_the_server_where_it_can_else_estimated(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="desktop_app.core.models.server_client")
    counting = FakeServer(tokenize=True).generator()
    assert counting.count_tokens("one two three four") == 4
    assert "token counts from the server's http://127.0.0.1:9/tokenize" in caplog.text
    caplog.clear()
    estimating = FakeServer().generator()
    assert estimating.count_tokens("abcdef") == 2 and estimating.count_tokens("资产负债表") == 5
    assert "token counts from an estimate" in caplog.text


def test_the_estimate_never_counts_fewer_tokens_than_a_real_tokenizer_would() -> None:
    english = "The tenant must report damage to the landlord within 30 days of discovering it."
    assert conservative_tokens(english) >= len(english) / 4
    assert conservative_tokens("高速公路八车道停车区") == 10


def test_a_prompt_the_window_cannot_hold_is_refused_before_sending() -> None:
    server = FakeServer()
    generator = server.generator(context_tokens=64)
    with pytest.raises(KnownError, match="server's window is 64"):
        generator.stream([{"role": "user", "content": "word " * 300}], max_tokens=8, temperature=0.0)
    assert not server.bodies


# ---------------------------------------------------------------------------- settings and the key


def test_the_key_is_kept_in_a_private_file_never_in_settings_toml(folio_home: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(settings_mod.SERVER_KEY_ENV, raising=False)
    settings = Settings(answer_model="server", server_url="http://127.0.0.1:8080/v1", server_model="qwen")
    written = settings_mod.save(settings)
    path = settings_mod.save_server_key("sk-very-secret")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.parent == written.parent
    assert "sk-very-secret" not in written.read_text()
    assert settings_mod.load().server_url == "http://127.0.0.1:8080/v1" and settings_mod.load_server_key() == "sk-very-secret"
    path.chmod(0o644)  # loosened by hand: made private again on the next read
    assert settings_mod.load_server_key() == "sk-very-secret" and stat.S_IMODE(path.stat().st_mode) == 0o600
    monkeypatch.setenv(settings_mod.SERVER_KEY_ENV, "from-env")
    assert settings_mod.load_server_key() == "from-env" and settings_mod.load_server_key(environment=False) == "sk-very-secret"
    settings_mod.save_server_key("")
    assert not path.exists()


@pytest.mark.parametrize(("typed", "base"), [
    ("127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
    ("http://localhost:11434/v1/", "http://localhost:11434/v1"),
    ("https://models.example:8443/openai/v1", "https://models.example:8443/openai/v1"),
])
def test_server_addresses_are_normalised(typed: str, base: str) -> None:
    assert settings_mod.normalize_server_url(typed) == base


@pytest.mark.parametrize(("settings", "says"), [
    (Settings(answer_model="server"), "No model server URL"),
    (Settings(answer_model="server", server_url="http://user:pw@127.0.0.1:8080"), "user name or password"),
    (Settings(answer_model="server", server_url="ftp://127.0.0.1"), "is not a server address"),
    (Settings(answer_model="server", server_url="http://127.0.0.1:port"), "is not a server address"),
])
def test_a_bad_server_choice_is_refused(settings: Settings, says: str) -> None:
    with pytest.raises(KnownError, match=says):
        settings.validate()


def test_the_connection_check_reports_the_model_and_how_tokens_are_counted() -> None:
    server = FakeServer(models=["a", "b"], tokenize=True)
    server.chat.append(httpx.Response(200, json={"choices": [{"message": {"content": "OK"}}]}))
    report = check_connection("127.0.0.1:9", "b", transport=httpx.MockTransport(server.handler))
    assert report.models == ("a", "b") and report.model == "b"
    assert "Connected: b" in report.describe() and "/tokenize" in report.describe()
