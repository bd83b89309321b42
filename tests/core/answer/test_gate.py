"""The "no basis" gate (core/answer/gate.py): which retrieval results are too weak to answer
from, and the one typed refusal it returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.core.answer.gate import (
    MIN_COSINE_ALONE,
    MIN_COVERAGE,
    MIN_COVERAGE_LEXICAL,
    RefusalKind,
    gate_thresholds,
    refusal,
)

MINILM = "all-minilm-l6-v2-int8:8199be6f699a"
E5 = "multilingual-e5-small-int8:f61db45b422a"


@dataclass(frozen=True)
class Found:
    coverage: float
    best_cosine: float
    cjk: bool = False
    passages: list[object] = field(default_factory=lambda: [object()])
    embedder: str = MINILM
    language: str = ""
    unmatched: tuple[str, ...] = ()
    unmentioned: tuple[str, ...] = ()
    documents_language: str = ""


def test_nothing_found_has_no_basis() -> None:
    refused = refusal(Found(1.0, 1.0, passages=[]))
    assert refused is not None and refused.kind is RefusalKind.NOTHING_FOUND


def test_an_english_question_needs_word_coverage_or_a_close_meaning() -> None:
    # "What is the capital city of Mongolia?" over financial filings: "capital" and "city"
    # are there, the meaning is not (calibration: coverage 0.46, cosine 0.32).
    refused = refusal(Found(0.46, 0.32))
    assert refused is not None and refused.kind is RefusalKind.OFF_TOPIC and not refused.show_passages
    assert "46%" in refused.reason and "0.32" in refused.reason
    # A paraphrase with few shared words but a close meaning is answered.
    assert refusal(Found(0.20, MIN_COSINE_ALONE + 0.05)) is None
    # Most of the question's terms in one passage is enough on its own.
    assert refusal(Found(MIN_COVERAGE + 0.05, 0.10)) is None


def test_a_chinese_question_is_judged_by_coverage_alone() -> None:
    # The English embedder's cosine on Chinese is noise: a high one does not rescue it.
    assert refusal(Found(MIN_COVERAGE_LEXICAL - 0.05, 0.90, cjk=True)) is not None
    # Coverage that would be too low for English is enough for Chinese bigrams.
    assert refusal(Found(MIN_COVERAGE_LEXICAL + 0.05, 0.0, cjk=True)) is None
    assert MIN_COVERAGE_LEXICAL < MIN_COVERAGE


def test_a_question_the_embedder_did_not_read_is_judged_by_coverage_alone() -> None:
    # A German question: retrieval leaves the English embedder out (best cosine 0), so a
    # coverage that would be too low next to a close meaning still answers.
    assert refusal(Found(MIN_COVERAGE_LEXICAL + 0.05, 0.0)) is None
    assert refusal(Found(MIN_COVERAGE_LEXICAL - 0.05, 0.0)) is not None


def test_each_embedder_has_its_own_cosine_scale() -> None:
    # e5 scores unrelated texts ~0.75: a cosine that is close for MiniLM is far for e5.
    e5 = gate_thresholds(E5, "en")
    assert e5 is not None and e5.cosine > MIN_COSINE_ALONE + 0.2
    assert refusal(Found(0.05, MIN_COSINE_ALONE + 0.2, embedder=MINILM)) is None
    assert refusal(Found(0.05, MIN_COSINE_ALONE + 0.2, embedder=E5)) is not None
    assert refusal(Found(e5.floor + 0.01, e5.cosine + 0.01, embedder=E5)) is None
    # English: few shared words refuse even at a close cosine (e5 scores off-topic English
    # as close as answerable); German compounds share few words, so German has no floor.
    assert refusal(Found(e5.floor - 0.01, 0.99, embedder=E5)) is not None
    de = gate_thresholds(E5, "de")
    assert de is not None and de.floor < e5.floor
    assert refusal(Found(e5.floor - 0.01, de.cosine + 0.01, embedder=E5, language="de")) is None


def test_a_chinese_question_read_by_a_multilingual_embedder_uses_its_cosine() -> None:
    zh = gate_thresholds(E5, "zh")
    assert zh is not None
    # Few shared bigrams, but close in meaning: answered.
    assert refusal(Found(0.0, zh.cosine + 0.01, cjk=True, embedder=E5)) is None
    assert refusal(Found(0.0, zh.cosine - 0.05, cjk=True, embedder=E5)) is not None


def test_an_uncalibrated_embedder_leaves_coverage_alone_to_decide() -> None:
    # A folder the user picked: its cosine scale is unknown, so it neither refuses nor rescues.
    assert gate_thresholds("my-embedder:abc", "en") is None
    # A folder holding MiniLM, named after it, is MiniLM.
    assert gate_thresholds("all-MiniLM-L6-v2-int8:8199be6f699a", "en") == gate_thresholds(MINILM, "en")
    assert refusal(Found(MIN_COVERAGE_LEXICAL + 0.05, 0.01, embedder="my-embedder:abc")) is None
    assert refusal(Found(MIN_COVERAGE_LEXICAL - 0.05, 0.99, embedder="my-embedder:abc")) is not None


def test_across_languages_shared_words_measure_nothing_and_only_alike_handles_refuse() -> None:
    from desktop_app.core.answer.gate import MIN_COSINE_ACROSS_LANGUAGES

    def Across(*args: float, documents_language: str = "zh", **kwargs: object) -> Found:  # noqa: N802
        return Found(*args, documents_language=documents_language, **kwargs)  # type: ignore[arg-type]

    # "What was Northeast Electric's revenue?" over a Chinese filing: 3% coverage, cosine 0.77
    assert refusal(Across(0.03, 0.77, embedder=E5, language="en")) is None
    far = refusal(Across(0.0, MIN_COSINE_ACROSS_LANGUAGES - 0.05, embedder=E5, language="en"))
    assert far is not None and far.kind is RefusalKind.OFF_TOPIC and "across languages" in far.reason
    handle = refusal(Across(0.0, 0.74, embedder=E5, language="en", unmentioned=("PDF.js",)))
    assert handle is not None and handle.kind is RefusalKind.UNMENTIONED and not handle.show_passages
    # in its own language ("": the passages are in the question's) the same weak coverage is refused
    assert refusal(Across(0.03, 0.77, embedder=E5, language="en", documents_language="")) is not None
