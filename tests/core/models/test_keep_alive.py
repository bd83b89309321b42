"""The kept model's plumbing without a model: where its socket lives and who may use it,
what names a process, the idle time, a stale socket, and the hang-up that cancels."""

from __future__ import annotations

import multiprocessing
import os
import socket
import stat
from pathlib import Path

import pytest

from desktop_app.core.errors import KnownError
from desktop_app.core.models import keep_alive, keep_alive_server


def test_the_runtime_folder_and_authkey_are_the_users_alone(folio_home: Path) -> None:
    folder = keep_alive.runtime_dir()
    assert folder.is_relative_to(folio_home) or folder.name.startswith(f"folio-{os.getuid()}-")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    key = keep_alive.authkey(folder)
    assert len(key) == 32 and keep_alive.authkey(folder) == key  # made once, then read
    assert stat.S_IMODE((folder / "authkey").stat().st_mode) == 0o600


def test_a_changed_model_file_or_other_options_name_another_process(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(100))
    options = keep_alive.Options(model, 4096, 1, 42, 0, None)
    first = options.key()
    assert first == keep_alive.Options(model, 4096, 1, 42, 0, None).key()
    assert first != keep_alive.Options(model, 2048, 1, 42, 0, None).key()
    assert first != keep_alive.Options(model, 4096, 2, 42, 0, None).key()
    model.write_bytes(b"GGUF" + bytes(200))  # replaced by another file of the same name
    assert options.key() != first


def test_the_idle_time_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(keep_alive.IDLE_ENV)
    assert keep_alive.idle_seconds() == keep_alive.IDLE_S == 300.0
    monkeypatch.setenv(keep_alive.IDLE_ENV, "0")
    assert keep_alive.idle_seconds() == 0.0
    monkeypatch.setenv(keep_alive.IDLE_ENV, "90")
    assert keep_alive.idle_seconds() == 90.0
    monkeypatch.setenv(keep_alive.IDLE_ENV, "five minutes")
    with pytest.raises(KnownError, match="not a number of seconds"):
        keep_alive.idle_seconds()


def test_a_stale_socket_is_removed_and_nothing_is_reported_stopped() -> None:
    folder = keep_alive.runtime_dir()
    stale = folder / "0123456789abcdef.sock"
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(str(stale))
    listening.close()  # the file stays, nobody listens: what a killed process leaves
    # A pid file naming a process that is not a kept model (pid 1), and one naming none.
    (folder / "0123456789abcdef.1.pid").write_text("1", encoding="utf-8")
    (folder / "0123456789abcdef.999999999.pid").write_text("999999999", encoding="utf-8")
    assert stale.exists()
    assert keep_alive.stop_all() == []  # nothing signalled
    assert not list(folder.glob("0123456789abcdef.*"))


def test_a_callers_hang_up_reads_as_cancelled() -> None:
    ours, theirs = multiprocessing.Pipe(duplex=True)
    hung_up = keep_alive_server._HungUp()
    hung_up.serving(ours)
    assert not hung_up()
    theirs.close()
    hung_up._checked = 0.0  # the next check is not rate-limited
    assert hung_up() and hung_up()
    ours.close()


def test_a_process_binds_over_a_stale_socket_but_not_over_a_live_one() -> None:
    path = keep_alive.runtime_dir() / "fedcba9876543210.sock"
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(path))
    left.close()  # stale
    mine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    assert keep_alive.reusable_bind(mine, path)
    mine.listen(1)
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    assert not keep_alive.reusable_bind(other, path)  # a live process serves it
    assert path.exists()
    other.close()
    mine.close()


def test_the_kept_model_knows_which_command_asks() -> None:
    # its threads, still returning from the request, are not other work (cores.free_cores)
    here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert keep_alive_server._peer_pid(here) == os.getpid()
    finally:
        here.close()
        there.close()
