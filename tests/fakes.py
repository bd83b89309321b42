"""Fakes for unit tests only: a deterministic embedder and a scripted generator."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Generator, Sequence

import numpy as np

from desktop_app.core.errors import Cancelled
from desktop_app.core.text import words as termlib
from desktop_app.core.types import Steering
from desktop_app.core.verdicts.judge import QUESTION as JUDGE_QUESTION


class FakeEmbedder:
    """Hashes terms into 64 buckets: texts sharing words get close vectors."""

    model_id = "fake-hashing-64"
    dim = 64
    max_tokens = 256
    multilingual = False

    def __init__(self) -> None:
        self.calls = 0
        self.embedded = 0

    def count_tokens(self, text: str) -> int:
        return max(1, len(text.split()))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in termlib.tokenize(text):
                bucket = int(hashlib.md5(term.encode()).hexdigest(), 16) % self.dim
                out[row, bucket] += 1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out


class FakeGenerator:
    """Streams enqueued answers in small deltas, like llm's MockModel."""

    model_id = "fake-generator"
    context_tokens = 4096
    scores_replies = False  # a subclass that weighs replies says so and defines reply_logprob
    last_stats = None

    def __init__(self, answers: Sequence[str] = (), delta: int = 3, pause: float = 0.0) -> None:
        self.queue = list(answers)
        self.delta = delta
        self.pause = pause
        self.steering: Steering | None = None
        self.prompts: list[list[dict[str, str]]] = []
        self.judge_questions: list[list[dict[str, str]]] = []

    def enqueue(self, *answers: str) -> None:
        self.queue.extend(answers)

    def prime(self, messages: Sequence[dict[str, str]], should_cancel: Callable[[], bool] = lambda: False) -> int:
        self.primed = list(messages)
        self.primes = [*getattr(self, "primes", []), self.primed]
        return self.count_tokens(self.render(messages))

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def estimate_s(self, prompt_tokens: int) -> float:
        return 0.0

    def reply_logprob(self, messages: Sequence[dict[str, str]], reply: str,
                      should_cancel: Callable[[], bool] = lambda: False) -> float:
        raise NotImplementedError("this fake does not weigh replies")

    def close(self) -> None:
        pass

    def render(self, messages: Sequence[dict[str, str]]) -> str:
        return "\n".join(m["content"] for m in messages)

    def stream(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int,
        temperature: float,
        grammar: str | None = None,
        should_cancel: Callable[[], bool] = lambda: False,
        steering: Steering | None = None,
    ) -> Generator[str, None, None]:
        self.steering = steering
        if messages and JUDGE_QUESTION in messages[-1]["content"]:
            # The judge (on by default) asks after each answer: a fake says nothing it
            # could act on, and keeps the enqueued answers for the questions.
            self.judge_questions.append(list(messages))
            return (delta for delta in ())
        self.prompts.append(list(messages))
        text = self.queue.pop(0) if self.queue else "The documents do not contain the answer."

        def deltas() -> Generator[str, None, None]:
            for i in range(0, len(text), self.delta):
                if should_cancel():
                    raise Cancelled()
                if self.pause:
                    time.sleep(self.pause)
                yield text[i : i + self.delta]

        return deltas()
