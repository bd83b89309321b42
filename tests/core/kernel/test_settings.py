"""settings.toml and the server key: a damaged file gives the defaults with a message and
is kept aside for the person; writes are atomic, and a full disk or a read-only folder is
a known error that leaves the old file as it was."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from desktop_app.core import paths
from desktop_app.core import settings as settings_mod
from desktop_app.core.errors import DiskFullError, NotWritableError
from desktop_app.core.settings import Settings


@pytest.mark.parametrize("junk", [os.urandom(64), b"sources_per_answer = \"many\"\n", b"[[[ not toml",
                                  b"judge = 3\n"])
def test_a_damaged_settings_file_gives_defaults_a_message_and_is_kept(junk: bytes) -> None:
    path = settings_mod.settings_path()
    path.write_bytes(junk)
    loaded = settings_mod.load_checked()
    assert loaded.settings == Settings()
    kept = [p for p in path.parent.iterdir() if p.name.startswith("settings.toml.broken-")]
    assert len(kept) == 1 and kept[0].read_bytes() == junk  # never deleted
    assert kept[0].name in loaded.notice and "default settings" in loaded.notice
    assert not path.exists()
    again = settings_mod.load_checked()  # once told, the defaults hold quietly
    assert again.settings == Settings() and not again.notice


def test_saving_is_atomic_and_a_full_disk_keeps_the_old_file(monkeypatch: pytest.MonkeyPatch) -> None:
    path = settings_mod.save(Settings(sources_per_answer=4))
    old = path.read_bytes()

    def no_space(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", no_space)
        with pytest.raises(DiskFullError, match="MB free on"):
            settings_mod.save(Settings(sources_per_answer=9))
        with pytest.raises(DiskFullError):
            settings_mod.save_server_key("secret")
    loaded = settings_mod.load_checked()
    assert path.read_bytes() == old and loaded.settings.sources_per_answer == 4, loaded.notice
    assert [p.name for p in path.parent.iterdir()] == ["settings.toml"]  # no temporary file left


def test_a_read_only_config_folder_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> int:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "open", refused)
    with pytest.raises(NotWritableError, match="read-only"):
        settings_mod.save(Settings())


def test_the_server_key_is_private_from_its_first_byte(tmp_path: Path) -> None:
    path = settings_mod.save_server_key("sk-123")
    assert path.stat().st_mode & 0o777 == 0o600 and settings_mod.load_server_key(environment=False) == "sk-123"
    path.write_bytes(b"\xff\xfe junk")
    assert settings_mod.load_server_key(environment=False) == ""  # unreadable: no key, no crash
    target = paths.write_atomic(tmp_path / "x", b"data", mode=0o600)
    assert target.read_bytes() == b"data" and target.stat().st_mode & 0o777 == 0o600
