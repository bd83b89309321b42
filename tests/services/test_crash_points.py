"""SIGKILL at every write site: an answer being saved, a document being replaced, the
migration that moves answers out of the index, the settings and the server key being
written. A child process is killed at the site (or at a random moment of a run of such
writes), and the next start must open a good library holding the state before the write
or the state after it, never a torn one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from desktop_app.core import settings as settings_mod
from desktop_app.core.library import repair
from desktop_app.core.library.answer_records import AnswerArchive
from desktop_app.core.library.store import Store
from tests.core.library.test_answer_records import old_library
from tests.fakes import FakeEmbedder
from tests.pdfgen import write_pdf

REPO = Path(__file__).resolve().parents[2]

CHILD = r'''
import os, signal, sys, threading, random, time
from pathlib import Path
site, work = sys.argv[1], Path(sys.argv[2])

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def die_after(seconds):
    threading.Timer(seconds, die).start()

class Killing:
    """A DuckDB connection or cursor that dies as statement ``word`` (its n-th) starts."""
    def __init__(self, inner, word, nth=1):
        self.inner, self.word, self.left = inner, word, nth
    def execute(self, sql, *args):
        if sql.lstrip().startswith(self.word):
            self.left -= 1
            if self.left == 0:
                die()
        return self.inner.execute(sql, *args)
    def __getattr__(self, name):
        return getattr(self.inner, name)

from desktop_app.core.library import opening
from desktop_app.core.library.store import Store
from desktop_app.core.library.answer_records import AnswerArchive
from desktop_app.core import settings as settings_mod
from desktop_app.core.ingest.indexing import Indexer
from tests.fakes import FakeEmbedder

if site.startswith("answer"):
    archive = AnswerArchive(work / "library.answers.sqlite")
    if site == "answer-commit":
        archive._con.set_trace_callback(lambda sql: die() if sql.startswith("COMMIT") else None)
        archive.save_answer("new", "q", "t", "label", "m", "finished", {"sources": []})
    else:
        die_after(float(site.split("-")[1]))
        for n in range(100000):
            archive.save_answer(f"new{n:06d}", "q" * 2000, "t" * 5000, "label", "m", "finished", {"sources": []})
elif site.startswith("document"):
    real = Store._cursor
    if site == "document-commit":
        Store._cursor = lambda self: Killing(real(self), "COMMIT")
    else:
        die_after(float(site.split("-")[1]))
    Indexer(Store(work / "library.duckdb"), FakeEmbedder()).run(work / "docs", lambda e: None)
elif site.startswith("migration"):
    real_connect = opening.connect
    if site == "migration-copied":
        real_import = AnswerArchive.import_rows
        def import_then_die(self, *a, **k):
            real_import(self, *a, **k)
            die()
        AnswerArchive.import_rows = import_then_die
    else:
        opening.connect = lambda p, read_only=False: Killing(real_connect(p, read_only), "COMMIT")
    Store(work / "library.duckdb")
elif site.startswith("settings") or site.startswith("key"):
    real_replace = os.replace
    def replace(a, b):
        if site.endswith("before-rename"):
            die()
        real_replace(a, b)
        die()
    os.replace = replace
    if site.startswith("settings"):
        settings_mod.save(settings_mod.Settings(sources_per_answer=7))
    else:
        settings_mod.save_server_key("new-key")
print("not killed", flush=True)
'''

SITES = ["answer-commit", "answer-0.3", "answer-0.8",
         "document-commit", "document-1.5", "document-2.5", "document-4",
         "migration-copied", "migration-commit",
         "settings-before-rename", "settings-after-rename", "key-before-rename", "key-after-rename"]


def write_docs(folder: Path, version: int) -> None:
    folder.mkdir(exist_ok=True)
    for n in range(6):
        pages = [[f"Document {n} version {version} page {p}"] + [f"Line {i} of version {version}." for i in range(30)]
                 for p in range(3)]
        write_pdf(folder / f"doc{n}.pdf", pages, title=f"Document {n}")


def state(db: Path) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT d.path, count(c.chunk_id), min(c.text) FROM documents d JOIN chunks c"
                           " ON c.doc_id = d.doc_id WHERE NOT d.superseded GROUP BY d.path ORDER BY 1").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("site", SITES)
def test_sigkill_at_a_write_leaves_the_state_before_or_after(site: str, tmp_path: Path) -> None:
    work = tmp_path
    home = Path(os.environ["FOLIO_HOME"])
    db = work / "library.duckdb"
    if site.startswith(("answer", "document")):
        write_docs(work / "docs", version=1)
        store = Store(db)
        from desktop_app.core.ingest.indexing import Indexer

        Indexer(store, FakeEmbedder()).run(work / "docs", lambda e: None)
        for n in range(5):
            store.save_answer(f"old{n}", f"question {n}", "text", "label", "m", "finished", {"sources": []})
        store.close()
    before_docs = state(db) if db.exists() else []
    if site.startswith("document"):
        write_docs(work / "docs", version=2)  # every document replaced
    if site.startswith("migration"):
        old_library(db, answers=12)
    if site.startswith("settings"):
        settings_mod.save(settings_mod.Settings(sources_per_answer=4))
    if site.startswith("key"):
        settings_mod.save_server_key("old-key")

    env = dict(os.environ, PYTHONPATH=str(REPO), FOLIO_HOME=str(home))
    child = subprocess.run([sys.executable, "-c", CHILD, site, str(work)], capture_output=True, text=True,
                           env=env, cwd=REPO, timeout=300, check=False)
    assert child.returncode == -signal.SIGKILL, (child.returncode, child.stdout, child.stderr[-2000:])

    if site.startswith(("answer", "document", "migration")):
        assert repair.check(db) is None  # every table reads whole
        store = Store(db)  # the next start opens a good library
        ids = {a.answer_id for a in store.answers()}
        if site.startswith("migration"):
            assert ids == {f"id{n:03d}" for n in range(12)}  # copied once, none lost
        else:
            assert {f"old{n}" for n in range(5)} <= ids
        store.close()
        if site.startswith("document"):
            after = state(db)
            versions = {str(text).split(" page")[0] for _, _, text in after}
            assert len(after) == 6, after
            # each document whole: all its chunks from one version, old or new
            for path, count, text in after:
                assert count == next(c for p, c, _ in before_docs if p == path) or "version 2" in str(text)
            assert versions <= {f"Document {n} version {v}" for n in range(6) for v in (1, 2)}
        if site == "answer-commit":
            archive = AnswerArchive(work / "library.answers.sqlite")
            assert archive.answer("new") is None or archive.answer("new").text == "t"  # type: ignore[union-attr]
            archive.close()
    if site.startswith("settings"):
        loaded = settings_mod.load_checked()
        assert not loaded.notice and loaded.settings.sources_per_answer == (4 if "before" in site else 7)
        settings_mod.save(loaded.settings)  # the next save sweeps what the killed one left
        assert not list(settings_mod.settings_path().parent.glob(".settings.toml.*"))
    if site.startswith("key"):
        assert settings_mod.load_server_key(environment=False) == ("old-key" if "before" in site else "new-key")
        assert settings_mod.server_key_path().stat().st_mode & 0o777 == 0o600
