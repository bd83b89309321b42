"""Saved answers: what the answers file keeps of an answer. Qt-free."""

from __future__ import annotations

from enum import StrEnum


class AnswerStatus(StrEnum):
    """How a saved answer ended (the answers file's ``status`` column)."""

    FINISHED = "finished"
    NO_BASIS = "no_basis"
    CANCELLED = "cancelled"
    FAILED = "failed"
