"""How fast the answer model reads and writes on this machine: one answer's figures
(:class:`~desktop_app.core.types.GenerationStats`) and a running measure over the answers (:class:`SpeedMeter`) for
the "the model will take about N s" line. Qt-free, no llama.cpp.
"""

from __future__ import annotations

from desktop_app.core.types import GenerationStats

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
