"""The command line's kept answer model with the real small GGUF: two `folio ask` commands
share one loaded process (the second reads no model and finds its prompt's head cached),
a stale socket gives way to a fresh process, an idle process exits, `folio models stop`
ends one, and a command killed mid-answer (or cancelled) leaves the process serving."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.core.answer import prompts
from desktop_app.core.errors import Cancelled
from desktop_app.core.models import keep_alive
from desktop_app.core.models.keep_alive import KeepAliveGenerator
from desktop_app.core.models.worker import WorkerGenerator

pytestmark = pytest.mark.e2e


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (this test's own child, not yet reaped) is gone too
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.fixture()
def stop_kept() -> Iterator[None]:
    """Whatever a test started under its FOLIO_HOME is stopped after it."""
    yield
    keep_alive.stop_all()


def _messages(generator: WorkerGenerator, question: str) -> list[dict[str, str]]:
    return prompts.build_prompt(question, [], count_tokens=generator.count_tokens,
                                context_tokens=generator.context_tokens, answer_tokens=64,
                                language="en").messages


def _kept(model: Path, idle_s: float = 60.0) -> KeepAliveGenerator:
    return KeepAliveGenerator(model, context_tokens=2048, threads=1, idle_s=idle_s)


def folio(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_two_folio_asks_share_one_kept_process_and_folio_models_stop_ends_it(
    tmp_path: Path, shared_dir: Path, small_model_path: Path, embedder_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(shared_dir / "corpus" / "en_gov_dmca_summary.pdf", folder)
    env = dict(os.environ, FOLIO_HOME=str(tmp_path / "home"), FOLIO_MODELS_DIR=str(small_model_path.parent),
               FOLIO_KEEP_ALIVE="60")
    db = tmp_path / "library.duckdb"
    assert folio(["index", str(folder), "--db", str(db)], env).returncode == 0
    monkeypatch.setenv("FOLIO_HOME", env["FOLIO_HOME"])
    runtime = keep_alive.runtime_dir()  # the commands' folder (a short one in /tmp when FOLIO_HOME is deep)
    try:
        figures, pids = [], []
        for question in ("What does Title II of the DMCA limit?",) * 2:
            done = folio(["ask", question, "--model", "small", "--max-tokens", "24", "--db", str(db), "--json"], env)
            assert done.returncode == 0, done.stderr
            events = [json.loads(line) for line in done.stdout.splitlines()]
            finished = [e for e in events if e["event"] == "answer_finished"]
            assert finished and finished[0]["stats"], events[-1]
            figures.append(finished[0]["stats"])
            pid_files = list(runtime.glob("*.*.pid"))
            assert len(pid_files) == 1, pid_files  # one process for the one model
            pids.append(int(pid_files[0].read_text()))
        assert pids[0] == pids[1] and _alive(pids[0])
        first, second = (f["first_word"] for f in figures)
        assert first.get("model_load_ms", 0) > 0  # the first command loaded the model
        assert not second.get("model_load_ms")  # the second found it loaded
        assert second["model_start_s"] < 0.5 * first["model_start_s"] + 0.2, (first, second)
        assert figures[1]["cached_tokens"] > 200  # the prompt's head was kept from the first command

        # Ctrl+C in a command mid-answer: the command ends at once, the kept process serves on.
        command = subprocess.Popen([sys.executable, "-m", "desktop_app", "ask", "What does Title II of the DMCA limit?",
                                    "--model", "small", "--max-tokens", "400", "--db", str(db), "--json"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert command.stdout is not None
        for line in command.stdout:
            if json.loads(line)["event"] == "token":
                break
        command.send_signal(signal.SIGINT)
        began = time.monotonic()
        assert command.wait(15) == 130 and time.monotonic() - began < 10
        command.stdout.close()
        assert _alive(pids[0])

        # A --no-keep-alive command starts no kept process and leaves this one alone.
        done = folio(["ask", "What does Title II of the DMCA limit?", "--model", "small", "--max-tokens", "16",
                      "--db", str(db), "--json", "--no-keep-alive"], env)
        assert done.returncode == 0, done.stderr
        assert [int(p.read_text()) for p in runtime.glob("*.*.pid")] == [pids[0]]

        again = folio(["ask", "What does Title II of the DMCA limit?", "--model", "small", "--max-tokens", "16",
                       "--db", str(db), "--json"], env)
        assert again.returncode == 0, again.stderr
        assert [int(p.read_text()) for p in runtime.glob("*.*.pid")] == [pids[0]]
        assert '"model_load_ms"' not in again.stdout

        stopped = folio(["models", "stop"], env)
        assert stopped.returncode == 0 and f"process {pids[0]}" in stopped.stdout, stopped.stdout
        assert _wait_gone(pids[0], 10.0)
        assert not list(runtime.glob("*.sock")) and not list(runtime.glob("*.pid"))
        assert "no answer model was kept" in folio(["models", "stop"], env).stdout
    finally:
        folio(["models", "stop"], env)


@pytest.mark.usefixtures("stop_kept")
def test_a_stale_socket_gives_way_to_a_fresh_process(small_model_path: Path) -> None:
    probe = _kept(small_model_path)
    path, pid = probe.socket_path, probe.pid
    probe.close()
    assert pid is not None and keep_alive.stop_all() == [pid] and _wait_gone(pid, 10.0)
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(str(path))  # a socket file nobody listens on: what a killed process leaves
    listening.close()
    generator = _kept(small_model_path)
    try:
        assert generator.pid not in (None, pid) and not generator.reused and generator.load_s > 0
        assert "".join(generator.stream(_messages(generator, "Say hello."), max_tokens=4, temperature=0.0))
    finally:
        generator.close()


@pytest.mark.usefixtures("stop_kept")
def test_an_idle_kept_process_exits_and_removes_its_socket(small_model_path: Path) -> None:
    generator = _kept(small_model_path, idle_s=2.0)
    pid, path = generator.pid, generator.socket_path
    assert pid is not None
    "".join(generator.stream(_messages(generator, "Say hello."), max_tokens=4, temperature=0.0))
    generator.close()
    assert _alive(pid)
    assert _wait_gone(pid, 15.0)
    assert not path.exists()


CLIENT = """
import sys
from desktop_app.core.answer import prompts
from desktop_app.core.models.keep_alive import KeepAliveGenerator
from desktop_app.core.models.worker import WorkerGenerator
g = KeepAliveGenerator(sys.argv[1], context_tokens=2048, threads=1, idle_s=60)
m = prompts.build_prompt("Write a long story about a lighthouse keeper.", [], count_tokens=g.count_tokens,
                         context_tokens=2048, answer_tokens=400, language="en").messages
for delta in g.stream(m, max_tokens=400, temperature=0.0):
    print(delta, end="", flush=True)
"""


@pytest.mark.usefixtures("stop_kept")
def test_a_command_killed_or_cancelled_mid_answer_leaves_the_process_serving(small_model_path: Path) -> None:
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(small_model_path)], stdout=subprocess.PIPE,
                              text=True)
    assert client.stdout is not None
    assert client.stdout.read(20)  # it is writing
    client.send_signal(signal.SIGKILL)
    client.wait(10)
    client.stdout.close()

    generator = _kept(small_model_path)
    try:
        assert generator.reused and generator.load_s == 0.0
        # The reader stops mid-answer (the command's Ctrl+C closes its stream): a hang-up.
        deltas = generator.stream(_messages(generator, "Write a long story about a cat."), max_tokens=400,
                                  temperature=0.0)
        written = [next(deltas) for _ in range(3)]
        deltas.close()
        assert len(written) == 3 and not generator.is_alive()
        pid = generator.pid
        # Cancelled while the prompt is read: the caller returns at once.
        began = time.monotonic()
        with pytest.raises(Cancelled):
            list(generator.stream(_messages(generator, "Tell me about the sea " * 40), max_tokens=8,
                                  temperature=0.0, should_cancel=lambda: time.monotonic() - began > 0.2))
        assert time.monotonic() - began < 2.0
        # The next request is served by the same process, which stopped the cancelled ones.
        text = "".join(generator.stream(_messages(generator, "Say hello."), max_tokens=4, temperature=0.0))
        assert text and generator.pid == pid
    finally:
        generator.close()


@pytest.mark.usefixtures("stop_kept")
def test_folio_models_stop_ends_a_busy_process_promptly(small_model_path: Path) -> None:
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(small_model_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert client.stdout is not None and client.stderr is not None
    assert client.stdout.read(20)  # the kept process is writing
    pids = [int(p.name.split(".")[1]) for p in keep_alive.runtime_dir().glob("*.*.pid")]
    assert len(pids) == 1
    began = time.monotonic()
    assert keep_alive.stop_all() == pids
    assert _wait_gone(pids[0], 5.0) and time.monotonic() - began < 6.0
    client.wait(30)  # the command ends too (its answer was stopped)
    client.stdout.close()
    client.stderr.close()
    assert not list(keep_alive.runtime_dir().glob("*.sock"))


@pytest.mark.usefixtures("stop_kept")
def test_a_second_command_waits_for_the_first_to_finish(small_model_path: Path) -> None:
    first = _kept(small_model_path)
    second = KeepAliveGenerator(small_model_path, context_tokens=2048, threads=1, idle_s=60, wait=False)
    try:
        waited: list[float] = []
        waiting = threading.Thread(target=lambda: waited.append(second.wait_ready()))
        waiting.start()
        waiting.join(1.5)
        assert waiting.is_alive()  # the kept process is the first command's until it hangs up
        assert "".join(first.stream(_messages(first, "Say hello."), max_tokens=4, temperature=0.0))
        first.close()
        waiting.join(30)
        assert not waiting.is_alive() and waited and waited[0] > 1.0
        assert second.pid == first.pid and second.reused
        assert "".join(second.stream(_messages(second, "Say hello."), max_tokens=4, temperature=0.0))
    finally:
        first.close()
        second.close()


@pytest.mark.usefixtures("stop_kept")
def test_a_process_gone_while_a_command_connects_is_replaced(small_model_path: Path) -> None:
    path = keep_alive.runtime_dir() / f"{keep_alive.Options(small_model_path, 2048, 1, 42, 0, None).key()}.sock"
    ending = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ending.bind(str(path))
    ending.listen(1)
    generator = KeepAliveGenerator(small_model_path, context_tokens=2048, threads=1, idle_s=60, wait=False)
    ending.close()  # as a process whose idle time ran out with the command in its queue: its file stays
    try:
        generator.wait_ready()
        assert not generator.reused and generator.load_s > 0 and generator.pid is not None
        assert "".join(generator.stream(_messages(generator, "Say hello."), max_tokens=4, temperature=0.0))
    finally:
        generator.close()


@pytest.mark.usefixtures("stop_kept")
def test_each_command_samples_as_a_freshly_loaded_model_would(small_model_path: Path) -> None:
    fresh = WorkerGenerator(small_model_path, context_tokens=2048, threads=1)
    try:
        messages = _messages(fresh, "Invent a name for a cat.")
        expected = "".join(fresh.stream(messages, max_tokens=12, temperature=1.0))
    finally:
        fresh.close()
    texts = []
    for _ in range(2):  # two commands, each with its own connection to the one kept process
        generator = _kept(small_model_path)
        try:
            texts.append("".join(generator.stream(messages, max_tokens=12, temperature=1.0)))
        finally:
            generator.close()
    assert texts == [expected, expected]
