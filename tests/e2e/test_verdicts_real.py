"""The judge with the real small GGUF: its grammar lets it say only yes, partial or no,
for English and Chinese, it reads the rule scorer's support sentences (not the whole
chunk), and bench/verdicts.py runs over the labelled pairs with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.verdicts.judge import Judge, JudgedPassage, excerpt
from desktop_app.core.verdicts.verify import score_claim

ROOT = Path(__file__).resolve().parents[2]
RFC6455 = (
    "Payload length: 7 bits, 7+16 bits, or 7+64 bits. The length of the Payload data, in "
    "bytes: if 0-125, that is the payload length. If 126, the following 2 bytes interpreted "
    "as a 16-bit unsigned integer are the payload length. If 127, the following 8 bytes "
    "interpreted as a 64-bit unsigned integer are the payload length. Multibyte length "
    "quantities are expressed in network byte order."
)
LANDUSE = "建设用地不得占用基本农田。确需占用的，应当报国务院批准。临时用地期限一般不超过两年。"


@pytest.fixture(scope="module")
def generator(small_model_path: Path) -> LlamaGenerator:
    return LlamaGenerator(small_model_path, context_tokens=2048, threads=1)


@pytest.mark.parametrize(
    ("sentence", "passage"),
    [
        ("With 126 in the length field, the next 2 bytes hold the payload length [1].", RFC6455),
        ("Multibyte lengths are little-endian [1].", RFC6455),
        ("临时用地期限一般不超过两年 [1]。", LANDUSE),
    ],
)
def test_the_small_model_answers_yes_partial_or_no(generator: LlamaGenerator, sentence: str, passage: str) -> None:
    judge = Judge(generator)
    focus = score_claim(sentence, passage).support
    answer = judge.supports(sentence, JudgedPassage("0123456789abcdef:1:0", passage), focus)
    assert answer in ("yes", "partial", "no")
    assert judge.model_calls == 1 and judge.seconds > 0


def test_the_judge_reads_the_support_sentences_and_their_neighbours() -> None:
    focus = score_claim("If 127, the next 8 bytes are the length [1].", RFC6455).support
    text = excerpt(RFC6455, focus)
    assert "If 127, the following 8 bytes" in text and "If 126" in text  # and its neighbour
    assert "7+64 bits" not in text and len(text) < len(RFC6455)


def test_bench_verdicts_prints_both_halves_over_the_labelled_pairs() -> None:
    lines = (ROOT / "bench/data/verdict_pairs.jsonl").read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()]
    assert len(pairs) >= 500 and {p["lang"] for p in pairs} >= {"en", "zh", "de"}
    assert all(sum(p["lang"] == lang for p in pairs) >= 100 for lang in ("en", "zh", "de"))
    assert {p["label"] for p in pairs} >= {"supported", "unsupported", "contradicted"}
    out = subprocess.run([sys.executable, str(ROOT / "bench/verdicts.py"), "rules"], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert "== tuning, rules: n=" in out and "== held-out, rules: n=" in out
    for figure in ("green-true", "red-false", "true-red", "true-green", "false-green"):
        assert out.count(f"{figure} ") >= 2 * 4  # per language and for all, in both halves
