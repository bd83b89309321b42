"""No traceback reaches a person from the command line: a known error prints its message
and fix (exit 2), a bug prints one line that says so and where the log is (exit 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app import cli

REPO = Path(__file__).resolve().parents[2]


def test_a_bug_is_one_line_and_the_log_keeps_the_traceback(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from desktop_app import cli\n"
        "async def broken(args):\n"
        "    raise ValueError('a bug in the history')\n"
        "cli._history = broken\n"
        "sys.exit(cli.main(['history', '--db', sys.argv[1]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "library.duckdb")], capture_output=True,
                          text=True, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120, check=False)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "This is a bug in Folio" in done.stderr
    log = Path(os.environ["FOLIO_HOME"]) / "logs" / "folio.log"
    assert str(log) in done.stderr
    assert "Traceback" in log.read_text() and "a bug in the history" in log.read_text()


def test_a_known_error_is_its_message_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(os.urandom(3000))
    assert cli.main(["history", "--db", str(junk)]) == 0  # the answers live apart: history works
    assert cli.main(["search", "x", "--db", str(junk)]) == 2
    err = capsys.readouterr().err
    assert "is not a Folio library" in err and "Traceback" not in err
