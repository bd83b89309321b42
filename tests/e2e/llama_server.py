"""Real servers on 127.0.0.1 for the model-server tests: llama-cpp-python's OpenAI-compatible
server (``python -m llama_cpp.server``) over the small GGUF, and a plain web server that
is not a model server. Loopback only; every process is stopped by the test that started it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import require

SERVER_EXTRAS = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def need_server_extras() -> None:
    """llama_cpp.server's dependencies (the ``test`` extras): fail where models are required."""
    import importlib.util

    missing = [name for name in SERVER_EXTRAS if importlib.util.find_spec(name) is None]
    if missing:
        message = f"llama_cpp.server needs {', '.join(missing)}: run `make test` (pip install -e '.[test]')"
        require(False, message)


class LlamaServer:
    def __init__(self, process: subprocess.Popen[bytes], port: int, key: str, log: Path) -> None:
        self.process, self.port, self.key, self.log = process, port, key, log
        self.url = f"http://127.0.0.1:{port}/v1"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)


@contextmanager
def llama_server(model: Path, log_dir: Path, *, key: str = "", context_tokens: int = 2048,
                 ready_timeout_s: float = 90.0) -> Iterator[LlamaServer]:
    need_server_extras()
    port = free_port()
    log = log_dir / f"llama-server-{port}.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", str(context_tokens), "--n_threads", "1",
               "--n_threads_batch", "1", "--seed", "42"]
    if key:
        command += ["--api_key", key]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    server = LlamaServer(process, port, key, log)
    try:
        deadline = time.monotonic() + ready_timeout_s
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited ({process.returncode}):\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{server.url}/models", headers=headers, timeout=2.0, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready in {ready_timeout_s:.0f} s:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


@contextmanager
def web_server(folder: Path) -> Iterator[str]:
    """Python's file server on loopback: answers HTTP, but is no model server."""
    (folder / "index.html").write_text("<html><body>Holiday photos</body></html>")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                               cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1.0, trust_env=False)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("python -m http.server did not start")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)
