"""No traceback reaches a person from the command line: a known error prints its message
and fix (exit 2), a bug prints one line that says so and where the log is (exit 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app import cli
from desktop_app.core.types import (
    AnswerCancelled,
    AnswerEvent,
    AnswerFailed,
    AnswerStarted,
    TokenDelta,
)

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


class _AnswerThatEnds:
    """A knowledge base whose answer starts, says a few words, then ends with ``last``."""

    def __init__(self, last: AnswerEvent) -> None:
        self.answers = self
        self.last = last

    async def ask(self, question: str, **_: Any) -> AsyncIterator[AnswerEvent]:
        yield AnswerStarted(question, ())
        yield TokenDelta("The server ")
        yield self.last

    async def close(self) -> None:
        pass


@pytest.mark.parametrize(("last", "status", "says"), [
    (AnswerFailed("The answer model stopped working.", known=True), 2, "folio: The answer model stopped working."),
    (AnswerFailed("ValueError: a bug", known=False), 1, "folio: ValueError: a bug"),
    (AnswerCancelled(), 0, "(stopped)"),
])
def test_an_answer_that_fails_or_stops_says_so_and_sets_the_exit_status(
        last: AnswerEvent, status: int, says: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli, "_knowledge_base", lambda args: _AnswerThatEnds(last))
    assert cli.main(["ask", "What does 410 mean?"]) == status
    captured = capsys.readouterr()
    assert captured.out.startswith("The server ")
    assert says in (captured.err if isinstance(last, AnswerFailed) else captured.out)
    assert "Traceback" not in captured.err

    assert cli.main(["ask", "What does 410 mean?", "--json"]) == status
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["event"] for line in lines] == ["answer_started", "token", last.event]
