"""Settings ▸ Answer model ▸ Model server: the model list comes from the server, Test
connection says what is wrong (a wrong key, nothing listening) without freezing the
window, and saving keeps the API key in its own private file, out of settings.toml.
The server here is a small scripted one on 127.0.0.1 (the real one: tests/e2e)."""

from __future__ import annotations

import asyncio
import json
import socket
import stat
import threading
import time
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from desktop_app.core import settings as settings_store
from tests.ui.conftest import until

KEY = "k-9d2f7c"


class _Handler(BaseHTTPRequestHandler):
    delay = 0.0

    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {KEY}":
            return True
        self._send(401, {"error": {"message": "Invalid API key"}})
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        time.sleep(self.delay)
        if not self._authorised():
            return
        if self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "tiny-a"}, {"id": "tiny-b"}]})
        else:
            self._send(404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self._authorised():
            return
        if self.path == "/v1/chat/completions":
            self._send(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}}]})
        else:
            self._send(404, {"detail": "Not Found"})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[str]:
    _Handler.delay = 0.0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _choose_server(dialog, url: str, key: str) -> None:  # noqa: ANN001
    dialog.model.setCurrentIndex(dialog.model.findData("server"))
    dialog.server_url.setText(url)
    dialog.server_key.setText(key)


def test_test_connection_lists_the_models_and_names_a_wrong_key(window, model_server, run) -> None:  # noqa: ANN001
    dialog = window.show_settings()
    assert not dialog.server_panel.isVisible()
    _choose_server(dialog, model_server, "wrong")
    assert dialog.server_panel.isVisible() and "go to this server" in dialog.server_status.text()
    dialog.test_server()
    run(until(lambda: "401" in dialog.server_status.text(), what="the wrong key reported"))
    assert "refused the API key" in dialog.server_status.text() and "c62828" in dialog.server_status.styleSheet()
    assert "wrong" not in dialog.server_status.text()
    dialog.server_key.setText(KEY)
    dialog.test_server()
    run(until(lambda: dialog.server_status.text().startswith("Connected"), what="a working connection"))
    assert "Connected: tiny-a" in dialog.server_status.text()
    assert [dialog.server_model.itemText(i) for i in range(dialog.server_model.count())] == ["tiny-a", "tiny-b"]
    dialog.reject()


def test_nothing_listening_is_said_and_the_window_keeps_running(window, run) -> None:  # noqa: ANN001
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dialog = window.show_settings()
    _choose_server(dialog, f"http://127.0.0.1:{port}", "")
    dialog.test_server()
    # The request runs off the GUI thread: the call returned before the refusal came back.
    assert dialog.server_status.text() == "Testing the connection…"
    run(until(lambda: "Connection refused" in dialog.server_status.text(), timeout=10, what="refused"))
    dialog.reject()


def test_a_slow_server_does_not_freeze_the_dialog(window, model_server, run) -> None:  # noqa: ANN001
    _Handler.delay = 0.6
    dialog = window.show_settings()
    _choose_server(dialog, model_server, KEY)
    ticks: list[float] = []

    async def watch() -> None:
        while not dialog.server_status.text().startswith("Connected"):
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.02)

    dialog.test_server()
    run(watch(), timeout=15)
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert len(ticks) > 20 and max(gaps) < 0.25  # the event loop ran all along
    dialog.reject()


def test_saving_a_server_keeps_the_key_out_of_settings_toml(window, model_server, folio_home, run,  # noqa: ANN001
                                                            monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv(settings_store.SERVER_KEY_ENV, raising=False)
    dialog = window.show_settings()
    _choose_server(dialog, model_server, KEY)
    dialog.list_server_models()
    run(until(lambda: dialog.server_model.count() == 2, what="the model list"))
    dialog.server_model.setCurrentText("tiny-b")
    assert dialog.try_save()
    toml_text = (folio_home / "config" / "settings.toml").read_text(encoding="utf-8")
    on_disk = tomllib.loads(toml_text)
    assert (on_disk["answer_model"], on_disk["server_url"], on_disk["server_model"]) == ("server", model_server, "tiny-b")
    assert KEY not in toml_text
    key_file = settings_store.server_key_path()
    assert key_file.read_text().strip() == KEY and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = window.show_settings()
    assert again.model.currentData() == "server" and again.server_panel.isVisible()
    assert again.server_url.text() == model_server and again.server_model.currentText() == "tiny-b"
    assert again.server_key.text() == KEY
    again.reject()


def test_a_server_without_a_url_is_refused(window, folio_home) -> None:  # noqa: ANN001
    dialog = window.show_settings()
    _choose_server(dialog, "", "")
    assert not dialog.try_save()
    assert "No model server URL" in dialog.error.text()
    assert not (folio_home / "config" / "settings.toml").exists()
    dialog.reject()
