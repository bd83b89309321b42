"""How an answer's figures read: the model's speed and where the seconds before the first
word went (``AnswerFinished.stats``), for ``folio ask --stats`` and the window's answer
details. Qt-free."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop_app.core.types import FIRST_WORD_STEP_NAMES

# The first word's steps as they are shown, in the order they run.
STEP_NAMES = FIRST_WORD_STEP_NAMES
SHOWN_FROM_S = 0.005  # steps shorter than this are left out of the line


def stats_line(stats: Mapping[str, Any]) -> str:
    """The model's figures, one line: prompt, reading, first token, decode speed."""
    if not stats:
        return "stats: none (no model ran)"
    first = stats.get("first_word", {})
    first_token = first.get("first_token_s", stats.get("first_token_s", 0.0))
    return (f"stats: prompt {stats.get('prompt_tokens', 0)} tokens ({stats.get('cached_tokens', 0)} cached),"
            f" read {stats.get('prefill_tokens', 0)} in {stats.get('prefill_s', 0.0):.2f} s,"
            f" first token {first_token:.2f} s, first word {first.get('first_word_s', 0.0):.2f} s,"
            f" {stats.get('tokens_per_s', 0.0):.1f} tokens/s (decoding),"
            f" draft accept rate {stats.get('draft_accept_rate', 0.0):.0%}")


def first_word_line(stats: Mapping[str, Any]) -> str:
    """Where the seconds before the first word went, longest steps included, one line:
    'first word 4.81 s: model start 0.00 s, search 0.12 s, reading the prompt (452 tokens,
    2 threads) 3.90 s, ... (3 token counts)'."""
    first = stats.get("first_word") or {}
    if not first:
        return ""
    parts = []
    for key, name in STEP_NAMES:
        seconds = float(first.get(key, 0.0))
        if seconds < SHOWN_FROM_S and key != "prefill_s":
            continue
        if key == "prefill_s":
            threads = first.get("prefill_threads", 0)
            name = f"{name} ({first.get('prefill_tokens', 0)} tokens"
            name += f", {threads} thread{'s' if threads != 1 else ''})" if threads else ")"
        if key == "model_start_s" and first.get("model_load_ms"):
            name = f"{name} (loaded in {first['model_load_ms'] / 1000:.1f} s)"
        parts.append(f"{name} {seconds:.2f} s")
    counts = first.get("pack_token_counts", 0)
    return (f"first word {first.get('first_word_s', 0.0):.2f} s: " + ", ".join(parts)
            + f" ({counts} token count{'s' if counts != 1 else ''} to pack the prompt)")
