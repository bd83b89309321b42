"""A real small disk for fault tests: a tmpfs of a given size (tests run as root in CI).
A mount that fails fails the test loudly: a full disk is never only pretended here."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_disk(where: Path, size: str = "1m") -> Iterator[Path]:
    """Mount a tmpfs of ``size`` at ``where`` (made if needed) for the block."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"cannot mount a {size} tmpfs at {where} (root is needed): {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def grow(where: Path, size: str) -> None:
    """Free space: the same tmpfs, bigger (its files stay)."""
    subprocess.run(["mount", "-o", f"remount,size={size}", str(where)], check=True)
