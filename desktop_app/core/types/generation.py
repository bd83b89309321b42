"""Generation: what the model is steered by while it writes, its figures, and where the
seconds before the first word went. Qt-free."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from desktop_app.core.types.documents import JsonObject


@dataclass(frozen=True)
class Steering:
    """What an answer needs while the local model writes it (core/models/steer.py): the
    no-answer sentence, which is written without a source marker; whether a sentence must
    not end without its marker (Chinese); and each source's label with the text the model
    read of it, in retrieval order, to weigh the number it writes inside a marker."""

    refusal: str = ""
    mark_sentences: bool = True
    sources: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class GenerationStats:
    """One answer's figures from the model that wrote it."""

    prompt_tokens: int
    completion_tokens: int  # streamed chunks: llama-cpp-python yields one per sampled token
    seconds_to_first_token: float  # from reading the prompt to the first token
    seconds: float
    cached_tokens: int = 0  # prompt tokens found in the KV cache (read for an earlier prompt)
    drafted: int = 0  # tokens the prompt-lookup draft proposed (0: no draft)
    accepted: int = 0  # ... and how many of them the model then wrote
    prefill_tokens: int = 0  # prompt tokens read for this answer (those not cached)
    prefill_s: float = 0.0  # ... and the seconds reading them took
    setup_s: float = 0.0  # rendering and tokenising the prompt, setting up the steering
    first_decode_s: float = 0.0  # from the prompt read to the first token sampled
    prefill_threads: int = 0  # threads that read the prompt (chosen from the free cores)

    @property
    def tokens_per_second(self) -> float:
        """Decode speed after the first token (the prompt's cost is in the time to first token)."""
        decoding = self.seconds - self.seconds_to_first_token
        return (self.completion_tokens - 1) / decoding if self.completion_tokens > 1 and decoding > 0 else 0.0

    @property
    def prompt_tokens_per_second(self) -> float:
        """Prompt tokens read per second (those not already cached)."""
        if self.prefill_s > 0 and self.prefill_tokens > 0:
            return self.prefill_tokens / self.prefill_s
        read = self.prompt_tokens - self.cached_tokens
        return read / self.seconds_to_first_token if read > 0 and self.seconds_to_first_token > 0 else 0.0

    @property
    def draft_accept_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    def to_json(self) -> JsonObject:
        """What ``AnswerFinished.stats`` carries of the model's figures."""
        return {
            "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "prefill_tokens": self.prefill_tokens, "prefill_s": round(self.prefill_s, 3),
            "prefill_threads": self.prefill_threads,
            "first_token_s": round(self.seconds_to_first_token, 3), "seconds": round(self.seconds, 3),
            "tokens_per_s": round(self.tokens_per_second, 2),
            "prompt_tokens_per_s": round(self.prompt_tokens_per_second, 2),
            "draft_accept_rate": round(self.draft_accept_rate, 3),
        }


# The steps before an answer's first word, in the order they run (FirstWordClock), each with
# the words ``folio ask --stats`` and the window's answer details show it by
# (services/answer_stats.py). The first is timed by the facade before the question reaches
# the model's thread; every other is one of FIRST_WORD_STEPS.
FIRST_WORD_STEP_NAMES: tuple[tuple[str, str], ...] = (
    ("model_busy_s", "model busy"),  # the model's one thread was priming or answering
    ("model_start_s", "model start"),  # waiting for the model process to start and load (0 when it runs)
    ("embedder_load_s", "embedder load"),  # the question's search (embedding overlaps BM25) ...
    ("embed_s", "question embedding"),
    ("search_s", "search"),
    ("gate_s", "gate and anchors"),  # the evidence gate and the anchors (names, numbers the question asks about)
    ("find_s", "finding the answer"),  # the answer finder: the document's own answering sentence
    ("evidence_s", "evidence"),  # evidence selection
    ("pack_s", "prompt packing"),  # packing the prompt (pack_token_counts counts)
    ("steering_s", "steering set-up"),
    ("probe_s", "probe"),  # the abstention probe (Settings.abstain)
    ("prefill_s", "reading the prompt"),  # the prompt's tokens that were not cached (prefill_tokens)
    ("first_decode_s", "first token"),  # sampling the first token after the prompt
    ("to_visible_word_s", "to the first word"),  # from the first token to the first delta holding a letter or digit
)
# The steps FirstWordClock.to_json always gives, in order (0 when a step took no time).
FIRST_WORD_STEPS = tuple(step for step, _ in FIRST_WORD_STEP_NAMES if step != "model_busy_s")


class FirstWordClock:
    """Where the seconds between a question and its answer's first visible word went.

    Mutable and owned by one answer on one thread; ``to_json`` is what ``stats["first_word"]``
    carries: each step's seconds (FIRST_WORD_STEPS), the counts, and the times from the
    question to the first token and to the first visible word."""

    def __init__(self, started: float | None = None) -> None:
        self.started = time.perf_counter() if started is None else started
        self.steps: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.marks: dict[str, float] = {}  # seconds from the question: first_token_s, first_word_s

    def add(self, step: str, seconds: float) -> None:
        self.steps[step] = self.steps.get(step, 0.0) + max(0.0, seconds)

    @contextmanager
    def timing(self, step: str) -> Iterator[None]:
        begun = time.perf_counter()
        try:
            yield
        finally:
            self.add(step, time.perf_counter() - begun)

    def mark(self, name: str) -> None:
        """Note the seconds from the question to now under ``name`` (once)."""
        self.marks.setdefault(name, time.perf_counter() - self.started)

    def to_json(self) -> JsonObject:
        data: JsonObject = {step: round(self.steps.get(step, 0.0), 3) for step in FIRST_WORD_STEPS}
        data.update({step: round(s, 3) for step, s in self.steps.items() if step not in data})
        data.update(self.counts)
        data.update({name: round(s, 3) for name, s in self.marks.items()})
        return data
