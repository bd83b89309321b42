"""The lexicons (core/text/lang/): a language added in one lexicon file is picked up by the
sentence splitter, the claim rules and the question-language detector, with no other module
touched; and the three built-in ones fill the rules they used to hold themselves."""

from __future__ import annotations

from lang_toy import LEXICON as TOY

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
