"""How fast the answer model reads and writes on this machine: one answer's figures
(:class:`GenerationStats`) and a running measure over the answers (:class:`SpeedMeter`) for
the "the model will take about N s" line. Qt-free, no llama.cpp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GenerationStats:
    prompt_tokens: int
    completion_tokens: int  # streamed chunks: llama-cpp-python yields one per sampled token
    seconds_to_first_token: float
    seconds: float
    cached_tokens: int = 0  # prompt tokens found in the KV cache (read for an earlier prompt)
    drafted: int = 0  # tokens the prompt-lookup draft proposed (0: no draft)
    accepted: int = 0  # ... and how many of them the model then wrote

    @property
    def tokens_per_second(self) -> float:
        """Decode speed after the first token (the prompt's cost is in the time to first token)."""
        decoding = self.seconds - self.seconds_to_first_token
        return (self.completion_tokens - 1) / decoding if self.completion_tokens > 1 and decoding > 0 else 0.0

    @property
    def prompt_tokens_per_second(self) -> float:
        """Prompt tokens read per second (those not already cached), up to the first token."""
        read = self.prompt_tokens - self.cached_tokens
        return read / self.seconds_to_first_token if read > 0 and self.seconds_to_first_token > 0 else 0.0

    @property
    def draft_accept_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    def to_json(self) -> dict[str, Any]:
        """What ``AnswerFinished.stats`` carries."""
        return {
            "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "first_token_s": round(self.seconds_to_first_token, 3), "seconds": round(self.seconds, 3),
            "tokens_per_s": round(self.tokens_per_second, 2),
            "prompt_tokens_per_s": round(self.prompt_tokens_per_second, 2),
            "draft_accept_rate": round(self.draft_accept_rate, 3),
        }


# Before this machine has answered once: the figures for the 1.5B model on 2 cores.
DEFAULT_PROMPT_TOKENS_PER_S = 50.0
DEFAULT_DECODE_TOKENS_PER_S = 16.0
EXPECTED_ANSWER_TOKENS = 120  # median answer length (bench/answer.py --facade, new path)


class SpeedMeter:
    """A running measure of this machine's prompt and decode speed (an exponential mean
    over the answers so far), for the "the model will take about N s" line."""

    def __init__(self, prompt_per_s: float = 0.0, decode_per_s: float = 0.0, weight: float = 0.3) -> None:
        self.prompt_per_s = prompt_per_s
        self.decode_per_s = decode_per_s
        self.weight = weight

    def add(self, stats: GenerationStats) -> None:
        def mix(old: float, new: float) -> float:
            return new if old <= 0 else (1 - self.weight) * old + self.weight * new

        if stats.prompt_tokens - stats.cached_tokens >= 32 and stats.prompt_tokens_per_second > 0:
            self.prompt_per_s = mix(self.prompt_per_s, stats.prompt_tokens_per_second)
        if stats.completion_tokens >= 8 and stats.tokens_per_second > 0:
            self.decode_per_s = mix(self.decode_per_s, stats.tokens_per_second)

    def estimate(self, prompt_tokens: int, answer_tokens: int = EXPECTED_ANSWER_TOKENS) -> float:
        """Seconds to read ``prompt_tokens`` (those not cached) and write ``answer_tokens``."""
        prompt = self.prompt_per_s or DEFAULT_PROMPT_TOKENS_PER_S
        decode = self.decode_per_s or DEFAULT_DECODE_TOKENS_PER_S
        return max(0, prompt_tokens) / prompt + answer_tokens / decode
