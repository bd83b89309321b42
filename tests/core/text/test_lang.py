"""The lexicons (core/text/lang/): a language added in one lexicon file is picked up by the
sentence splitter, the claim rules, the question-language detector, the settings' choices,
the evidence gate and the prompts, with no other module touched; and the three built-in ones fill the rules they used to hold themselves."""

from __future__ import annotations

from pathlib import Path

from lang_toy import LEXICON as TOY

from desktop_app.core import settings
from desktop_app.core.answer import gate, prompts
from desktop_app.core.errors import KnownError
from desktop_app.core.text import lang, words
from desktop_app.core.text.sentences import split_sentences
from desktop_app.core.types import Verdict
from desktop_app.core.verdicts import bindings, meaning
from desktop_app.core.verdicts.verify import score_claim

TEXT = "Mi sul abr. Pelo tir kana. Dan ko sul mave."
CLAIM = "The kettle devan boil the water within five minutes."
PASSAGE = "The kettle nai devan boil the water within five minutes, the manual says."


def test_the_built_in_languages_are_registered_in_order() -> None:
    assert lang.codes()[:3] == ("en", "de", "zh")
    assert lang.get("de").script == "latin" and lang.get("zh").script == "cjk"
    assert words.languages() == lang.codes()


def test_a_toy_language_is_picked_up_by_the_splitter() -> None:
    assert [s.text for s in split_sentences(TEXT)][0] == "Mi sul abr."  # not an abbreviation yet
    with lang.registered(TOY):
        assert [s.text for s in split_sentences(TEXT)] == ["Mi sul abr. Pelo tir kana.", "Dan ko sul mave."]
    assert [s.text for s in split_sentences(TEXT)][0] == "Mi sul abr."  # gone again


def test_a_toy_language_is_picked_up_by_the_claim_rules() -> None:
    assert not meaning.negated(PASSAGE) and meaning.modality(CLAIM) is None
    assert score_claim(CLAIM, PASSAGE).verdict is not Verdict.CONTRADICTED
    with lang.registered(TOY):
        assert meaning.negated(PASSAGE) and not meaning.negated(CLAIM)
        assert meaning.modality(CLAIM) == "must"
        assert bindings.states_condition("sefi the kettle is full, tan it boils")
        verdict = score_claim(CLAIM, PASSAGE)
        assert verdict.verdict is Verdict.CONTRADICTED
        assert "opposite" in verdict.reason


def test_a_toy_language_is_picked_up_by_the_question_language_detector() -> None:
    question = "Ko sul mave tir dan pelo kana?"
    assert words.question_language(question) == "en"
    with lang.registered(TOY):
        assert words.question_language(question) == "toy"
        assert words.question_language("ŧen pelo kana?") == "toy"  # one function word and a letter of its own
        assert words.question_language("What is the kettle?") == "en"
        assert words.question_language(question, setting="toy") == "toy"
        assert "ko" not in words.tokenize("ko pelo")  # its stopwords are not indexed
    assert words.question_language(question, setting="toy") == "en"


def test_a_toy_language_is_a_choice_of_the_settings() -> None:
    assert "toy" not in dict(settings.prompt_languages())
    with lang.registered(TOY):
        assert dict(settings.prompt_languages())["toy"] == "Toy"
        settings.Settings(prompt_language="toy").validate()
    try:
        settings.Settings(prompt_language="toy").validate()
    except KnownError as error:
        assert "toy" in str(error)
    else:
        raise AssertionError("an unregistered language was accepted")


def test_a_toy_language_is_read_by_the_evidence_gate() -> None:
    from tests.core.answer.test_gate import Found

    question = "Ko sul mave tir dan pelo kana?"
    with lang.registered(TOY):
        language = words.question_language(question)
        assert gate.language_of(Found(0.5, 0.9, language=language)) == "toy"
        # No calibrated dense thresholds for it: the lexical coverage decides.
        assert gate.gate_thresholds("multilingual-e5-small-int8", language) is None
        assert gate.refusal(Found(0.5, 0.9, language=language, embedder="multilingual-e5-small-int8:x")) is None
        assert gate.refusal(Found(0.1, 0.9, language=language, embedder="multilingual-e5-small-int8:x")) is not None
    assert gate.language_of(Found(0.5, 0.9)) == "en" and gate.language_of(Found(0.5, 0.9, cjk=True)) == "zh"


def test_a_toy_language_is_prompted_in_its_own_sentences(tmp_path: Path) -> None:
    (tmp_path / "system_toy.txt").write_text("Toy system. Else: {refusal}", encoding="utf-8")
    (tmp_path / "task_toy.txt").write_text("{sources}\nQ: {question}\nElse: {refusal}", encoding="utf-8")
    assert "toy" not in prompts.NO_ANSWER and "toy" not in prompts.NO_BASIS_MESSAGE
    with lang.registered(TOY):
        assert prompts.NO_ANSWER["toy"] == TOY.no_answer and prompts.NO_BASIS_MESSAGE["toy"] == TOY.no_basis
        packed = prompts.build_prompt("Ko sul mave tir dan pelo kana?", [], count_tokens=len,
                                      context_tokens=4096, answer_tokens=64, prompts_dir=tmp_path)
        assert packed.language == "toy"
        assert packed.messages[0]["content"] == "Toy system. Else: " + TOY.no_answer
        assert packed.messages[-1]["content"].endswith("Else: " + TOY.no_answer)
    assert "toy" not in prompts.NO_ANSWER
