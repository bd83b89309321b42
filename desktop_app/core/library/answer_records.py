"""Saved answers and the judge's cache: the ``answers`` and ``judge_cache`` tables.
Qt-free.

:class:`~desktop_app.core.library.store.Store` inherits them; staleness and export of a
saved answer are core/library/history.py's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from desktop_app.core.library.connection import StoreConnection


class AnswerRecords(StoreConnection):
    """Keeping, listing and deleting answers, and the judge's cached answers (a mixin of
    ``Store``)."""

    def save_answer(self, answer_id: str, question: str, text: str, style: str, model_id: str,
                    status: str, payload: dict[str, Any], scope: Sequence[str] = ()) -> None:
        """Keep an answer; ``scope``: the files and folders it was asked within (none: all)."""
        with self._write_lock:
            cur = self._cursor()
            cur.execute("DELETE FROM answers WHERE answer_id = ?", [answer_id])
            cur.execute(
                "INSERT INTO answers (answer_id, question, text, style, model_id, status, payload, scope)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [answer_id, question, text, style, model_id, status,
                 json.dumps(payload, ensure_ascii=False), _scope_json(scope)],
            )

    def answers(self) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT answer_id, question, status, created_at, model_id, scope FROM answers ORDER BY created_at DESC"
        )
        return [
            {"answer_id": r[0], "question": r[1], "status": r[2], "created_at": str(r[3]), "model_id": r[4],
             "scope": _scope_list(r[5])}
            for r in rows
        ]

    def answer(self, answer_id: str) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT answer_id, question, text, style, model_id, status, created_at, payload, scope FROM answers"
            " WHERE answer_id = ? OR answer_id LIKE ? ORDER BY created_at DESC",
            [answer_id, answer_id + "%"],
        )
        if not rows:
            return None
        r = rows[0]
        return {
            "answer_id": r[0], "question": r[1], "text": r[2], "style": r[3], "model_id": r[4],
            "status": r[5], "created_at": str(r[6]), **json.loads(r[7]), "scope": _scope_list(r[8]),
        }

    def delete_answer(self, answer_id: str) -> bool:
        with self._write_lock:
            before = self._query("SELECT count(*) FROM answers WHERE answer_id = ?", [answer_id])[0][0]
            self._cursor().execute("DELETE FROM answers WHERE answer_id = ?", [answer_id])
            return bool(before)

    def judge_get(self, sentence_sha: str, chunk_id: str) -> str | None:
        """The judge's cached answer ("yes", "partial", "no") for a sentence and chunk."""
        rows = self._query(
            "SELECT supported, answer FROM judge_cache WHERE sentence_sha = ? AND chunk_id = ?",
            [sentence_sha, chunk_id],
        )
        if not rows:
            return None
        supported, answer = rows[0]
        return str(answer) if answer else ("yes" if supported else "no")

    def judge_put(self, sentence_sha: str, chunk_id: str, answer: str) -> None:
        with self._write_lock:
            self._cursor().execute(
                "INSERT OR REPLACE INTO judge_cache (sentence_sha, chunk_id, supported, answer)"
                " VALUES (?, ?, ?, ?)",
                [sentence_sha, chunk_id, answer == "yes", answer],
            )


def _scope_json(scope: Sequence[str]) -> str:
    return json.dumps(list(scope), ensure_ascii=False) if scope else ""


def _scope_list(stored: Any) -> list[str]:
    if not stored:
        return []
    try:
        value = json.loads(str(stored))
    except ValueError:
        return []
    return [str(p) for p in value] if isinstance(value, list) else []
