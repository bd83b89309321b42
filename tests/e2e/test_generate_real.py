"""The real small GGUF through LlamaGenerator: streaming, cancelling, and failing cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.answer.citations import citation_grammar, find_markers
from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models.generate import PREFILL_STEP, LlamaGenerator

pytestmark = pytest.mark.e2e

QUESTION = [
    {"role": "system", "content": "You answer in one short sentence."},
    {
        "role": "user",
        "content": "Sources:\n[1] The library opens at 9 am.\n[2] It closes at 5 pm.\n\n"
        "Question: When does the library open? Cite the source like [1].",
    },
]


@pytest.fixture(scope="module")
def generator(small_model_path: Path) -> LlamaGenerator:
    return LlamaGenerator(small_model_path, context_tokens=1024, threads=1)


def test_the_small_model_streams_an_answer_in_several_deltas(generator: LlamaGenerator) -> None:
    assert "When does the library open?" in generator.render(QUESTION)
    deltas = list(generator.stream(QUESTION, max_tokens=24, temperature=0.0))
    assert len(deltas) > 1
    assert "".join(deltas).strip()
    stats = generator.last_stats
    assert stats is not None and stats.completion_tokens >= len(deltas)
    assert stats.prompt_tokens == len(generator.prompt_tokens(generator.render(QUESTION)))
    assert 0 < stats.seconds_to_first_token <= stats.seconds


def test_cancelling_stops_the_stream_between_tokens(generator: LlamaGenerator) -> None:
    received: list[str] = []
    stream = generator.stream(
        QUESTION, max_tokens=64, temperature=0.0, should_cancel=lambda: len(received) >= 3
    )
    with pytest.raises(Cancelled):
        for delta in stream:
            received.append(delta)
    assert len(received) == 3
    # The model is free again: the next question streams normally.
    assert "".join(generator.stream(QUESTION, max_tokens=8, temperature=0.0)).strip()


def long_question(topic: str) -> list[dict[str, str]]:
    sources = "\n".join(f"[{n}] The {topic} report, part {n}, lists item {n * 7} at {n * 13} units." for n in range(1, 16))
    return [{"role": "system", "content": "You answer in one short sentence."},
            {"role": "user", "content": f"Sources:\n{sources}\n\nQuestion: What does part 3 list?"}]


def test_cancelling_while_the_prompt_is_read_stops_before_any_token(generator: LlamaGenerator) -> None:
    question = long_question("library")
    assert len(generator.prompt_tokens(generator.render(question))) > 2 * PREFILL_STEP  # several steps
    expected = "".join(generator.stream(question, max_tokens=16, temperature=0.0))
    checks: list[int] = []

    def cancel_on_second_check() -> bool:
        checks.append(1)
        return len(checks) >= 2

    other = long_question("museum")
    stream = generator.stream(other, max_tokens=16, temperature=0.0, should_cancel=cancel_on_second_check)
    with pytest.raises(Cancelled):
        next(iter(stream))
    assert len(checks) == 2  # stopped after one step of the prompt, not after all of it
    # A half-read prompt leaves no trace: the same question answers exactly as before,
    # from a cold cache and again from the cached prefix.
    assert "".join(generator.stream(question, max_tokens=16, temperature=0.0)) == expected
    assert "".join(generator.stream(question, max_tokens=16, temperature=0.0)) == expected


def test_a_bad_grammar_fails_before_streaming_and_leaves_the_model_usable(
    generator: LlamaGenerator,
) -> None:
    with pytest.raises(KnownError, match="grammar"):
        generator.stream(QUESTION, max_tokens=8, temperature=0.0, grammar="root ::= foo bar ::=")
    with pytest.raises(KnownError, match="grammar"):
        generator.stream(
            QUESTION, max_tokens=8, temperature=0.0, grammar='answer ::= "no root rule"'
        )
    assert "".join(generator.stream(QUESTION, max_tokens=8, temperature=0.0)).strip()


def test_the_citation_grammar_lets_the_model_cite_only_the_given_labels(
    generator: LlamaGenerator,
) -> None:
    grammar = citation_grammar(["1", "2"], every_sentence=True)
    text = "".join(generator.stream(QUESTION, max_tokens=60, temperature=0.0, grammar=grammar))
    markers = find_markers(text)
    assert markers, text
    assert {cid for cid, _ in markers} <= {"1", "2"}


def test_a_missing_model_file_is_a_known_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model.gguf"
    with pytest.raises(KnownError, match="no-such-model.gguf"):
        LlamaGenerator(missing)


def test_a_junk_model_file_is_a_known_error_naming_it(tmp_path: Path) -> None:
    junk = tmp_path / "junk-model.gguf"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(KnownError, match="junk-model.gguf"):
        LlamaGenerator(junk)


def test_a_truncated_gguf_is_a_known_error_naming_it(
    tmp_path: Path, small_model_path: Path
) -> None:
    truncated = tmp_path / "truncated-model.gguf"
    with small_model_path.open("rb") as handle:
        truncated.write_bytes(handle.read(1024))  # a real GGUF header, then nothing
    with pytest.raises(KnownError, match="truncated-model.gguf"):
        LlamaGenerator(truncated, context_tokens=256)


def test_priming_reads_the_fixed_head_once_and_the_next_prompt_reuses_it(generator: LlamaGenerator) -> None:
    from desktop_app.core.answer import prompts
    from desktop_app.core.types import Passage

    def packed(question: str, sources: list[Passage]) -> list[dict[str, str]]:
        return prompts.build_prompt(
            question, [(str(i), f"[{i}]", p) for i, p in enumerate(sources, 1)],
            count_tokens=generator.count_tokens, context_tokens=generator.context_tokens, answer_tokens=32,
        ).messages

    generator._llm.reset()
    head = packed("", [])
    cached = generator.prime(head)
    assert cached == len(generator.prompt_tokens(generator.render(head))) - 1
    passage = Passage("c1", "d1", "/lib/hours.pdf", "Library rules", 1, "1", "Hours", 0, 60, 1.0,
                      "The reading room opens at 9:00 and closes at 17:00 on weekdays.")
    question = packed("When does the reading room open?", [passage])
    deltas = list(generator.stream(question, max_tokens=8, temperature=0.0))
    assert "".join(deltas).strip()
    stats = generator.last_stats
    assert stats is not None
    # Everything up to where the sources start came from the cache: the system prompt and
    # the worked example, most of the prompt.
    shared = 0
    for a, b in zip(generator.prompt_tokens(generator.render(head)), generator.prompt_tokens(generator.render(question)), strict=False):
        if a != b:
            break
        shared += 1
    assert stats.cached_tokens == shared > stats.prompt_tokens // 2
