"""The lexicons (core/text/lang/): a language added as one lexicon file, and nothing else (no
import, no prompt templates), is found by the registry and picked up by the sentence
splitter, the claim rules, the question-language detector, the settings' choices, the
evidence gate, the prompts and the no-basis answer; and the three built-in ones fill the
rules they used to hold themselves."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from desktop_app.core import paths, settings
from desktop_app.core.answer import answering, gate, prompts
from desktop_app.core.errors import KnownError
from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.text import lang, words
from desktop_app.core.text.sentences import split_sentences
from desktop_app.core.types import AnswerStarted, NoBasis, TokenDelta, Verdict
from desktop_app.core.verdicts import Verifier, bindings, meaning
from desktop_app.core.verdicts.verify import score_claim
from tests.core.search.test_retrieve import add_document
from tests.fakes import FakeEmbedder, FakeGenerator

# The whole of the toy language: one lexicon file, what adding French or Spanish takes.
TOY_FILE = Path(__file__).with_name("lang_toy.py")

TEXT = "Mi sul abr. Pelo tir kana. Dan ko sul mave."
CLAIM = "The kettle devan boil the water within five minutes."
PASSAGE = "The kettle nai devan boil the water within five minutes, the manual says."


@contextmanager
def one_new_file(folder: Path) -> Iterator[lang.Lexicon]:
    """The toy language added the way a new language is: its lexicon file dropped into the
    lexicon package (here a folder on the package's path, so the source tree stays as it
    is) and found by the registry's own discovery, no import or template added; gone
    again afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "toy.py").write_text(TOY_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    path = lang.__path__
    before = list(path)
    path.append(str(folder))
    importlib.invalidate_caches()
    try:
        lang.discover()  # what importing the package does
        toy = lang.get("toy")
        assert toy is not None, "the registry did not find the new lexicon file"
        yield toy
    finally:
        path[:] = before
        lang.unregister("toy")
        sys.modules.pop(f"{lang.__name__}.toy", None)


@pytest.fixture()
def toy_folder(tmp_path: Path) -> Path:
    return tmp_path / "lexicons"


def test_the_built_in_languages_are_registered_in_order() -> None:
    assert lang.codes()[:3] == ("en", "de", "zh")
    assert lang.get("de").script == "latin" and lang.get("zh").script == "cjk"
    assert words.languages() == lang.codes()
    assert [x.code for x in lang.all_lexicons() if x.marks_sentences] == ["zh"]


def test_the_registry_finds_every_lexicon_file_of_its_package() -> None:
    lang.discover()  # again: each replaced in place, nothing added, the order kept
    assert lang.codes() == ("en", "de", "zh")


def test_a_toy_language_is_picked_up_by_the_splitter(toy_folder: Path) -> None:
    assert [s.text for s in split_sentences(TEXT)][0] == "Mi sul abr."  # not an abbreviation yet
    with one_new_file(toy_folder):
        assert [s.text for s in split_sentences(TEXT)] == ["Mi sul abr. Pelo tir kana.", "Dan ko sul mave."]
    assert [s.text for s in split_sentences(TEXT)][0] == "Mi sul abr."  # gone again


def test_a_toy_language_is_picked_up_by_the_claim_rules(toy_folder: Path) -> None:
    assert not meaning.negated(PASSAGE) and meaning.modality(CLAIM) is None
    assert score_claim(CLAIM, PASSAGE).verdict is not Verdict.CONTRADICTED
    with one_new_file(toy_folder):
        assert meaning.negated(PASSAGE) and not meaning.negated(CLAIM)
        assert meaning.modality(CLAIM) == "must"
        assert bindings.states_condition("sefi the kettle is full, tan it boils")
        verdict = score_claim(CLAIM, PASSAGE)
        assert verdict.verdict is Verdict.CONTRADICTED
        assert "opposite" in verdict.reason


def test_a_toy_language_is_picked_up_by_the_question_language_detector(toy_folder: Path) -> None:
    question = "Ko sul mave tir dan pelo kana?"
    assert words.question_language(question) == "en"
    with one_new_file(toy_folder):
        assert words.question_language(question) == "toy"
        assert words.question_language("ŧen pelo kana?") == "toy"  # one function word and a letter of its own
        assert words.question_language("What is the kettle?") == "en"
        assert words.question_language(question, setting="toy") == "toy"
        assert "ko" not in words.tokenize("ko pelo")  # its stopwords are not indexed
    assert words.question_language(question, setting="toy") == "en"


QUESTION = "Ko sul mave tir dan pelo kana?"  # "What does the kettle's manual say?", in Toy
FAR_QUESTION = "Ko sul zorbu kelpa vinta?"  # about nothing the library holds


def ask(store: Store, generator: FakeGenerator, question: str, languages: list[str]) -> list[object]:
    """``question`` answered; the language the answer model was asked for goes to ``languages``."""
    events: list[object] = []

    def model(language: str) -> FakeGenerator:
        languages.append(language)
        return generator

    answering.answer(question, retriever=Retriever(store, FakeEmbedder()), store=store, generator_factory=model,
                     settings=settings.Settings(judge=False), emit=events.append,
                     should_cancel=lambda: False, verifier=Verifier())
    return events


def test_a_language_is_one_lexicon_file(toy_folder: Path, tmp_path: Path) -> None:
    """Toy, added as its lexicon file alone, is a choice of the settings, the language the
    gate and the prompts read for a question in it, and answers "no basis" in its own
    words; the prompts are the default language's (it has no templates), with its own
    no-answer sentence."""
    assert "toy" not in dict(settings.prompt_languages())
    assert "toy" not in prompts.NO_ANSWER and "toy" not in prompts.NO_BASIS_MESSAGE
    assert not any((paths.resources_dir() / "prompts").glob("*_toy.txt"))  # nothing but the file
    store = Store(tmp_path / "lib.duckdb")
    try:
        with one_new_file(toy_folder) as toy:
            # The settings' choices.
            assert dict(settings.prompt_languages())["toy"] == "Toy"
            settings.Settings(prompt_language="toy").validate()

            # The prompts: the default language's templates, its own refusal.
            head = prompts.prompt_head("toy", count_tokens=len, context_tokens=4096, answer_tokens=64)
            english = prompts.prompt_head("en", count_tokens=len, context_tokens=4096, answer_tokens=64)
            assert prompts.template_language("toy") == "en"
            assert head[0]["content"] == english[0]["content"].replace(prompts.NO_ANSWER["en"], toy.no_answer)
            assert toy.no_answer in head[0]["content"] and prompts.NO_ANSWER["en"] not in head[0]["content"]
            assert len(head) == len(english)  # the worked examples too

            add_document(store, FakeEmbedder(), "kettle-manual", [["Pelo kana tir mave dokuma vena."]])
            # The gate: retrieval decides the question is in Toy, the gate reads it (no
            # thresholds calibrated for it: the lexical coverage decides), and the model
            # is asked for a Toy answer.
            retrieval = Retriever(store, FakeEmbedder()).search(QUESTION, 3)
            assert retrieval.language == "toy" and gate.language_of(retrieval) == "toy"
            assert gate.gate_thresholds(retrieval.embedder, "toy") is None
            assert gate.refusal(retrieval) is None
            generator, languages = FakeGenerator(["Pelo kana tir mave [1]."]), []
            events = ask(store, generator, QUESTION, languages)
            assert languages == ["toy"]
            assert any(isinstance(e, AnswerStarted) for e in events)
            system, request = generator.prompts[-1][0]["content"], generator.prompts[-1][-1]["content"]
            assert system == head[0]["content"]
            assert request.strip().endswith(toy.no_answer) and "Question: " + QUESTION in request
            assert generator.steering is not None and generator.steering.refusal == toy.no_answer
            assert not generator.steering.mark_sentences

            # The no-basis sentence: a question about nothing the library holds.
            far = ask(store, FakeGenerator(), FAR_QUESTION, [])
            assert any(isinstance(e, NoBasis) for e in far)
            assert [e.text for e in far if isinstance(e, TokenDelta)] == [toy.no_basis]
    finally:
        store.close()
    assert "toy" not in dict(settings.prompt_languages()) and "toy" not in prompts.NO_BASIS_MESSAGE
    try:
        settings.Settings(prompt_language="toy").validate()
    except KnownError as error:
        assert "toy" in str(error)
    else:
        raise AssertionError("an unregistered language was accepted")


def test_a_language_with_its_own_templates_is_prompted_with_them(toy_folder: Path, tmp_path: Path) -> None:
    (tmp_path / "system_toy.txt").write_text("Toy system. Else: {refusal}", encoding="utf-8")
    (tmp_path / "task_toy.txt").write_text("{sources}\nQ: {question}\nElse: {refusal}", encoding="utf-8")
    with one_new_file(toy_folder) as toy:
        packed = prompts.build_prompt(QUESTION, [], count_tokens=len, context_tokens=4096, answer_tokens=64,
                                      prompts_dir=tmp_path)
        assert packed.language == "toy"
        assert packed.messages[0]["content"] == "Toy system. Else: " + toy.no_answer
        assert packed.messages[-1]["content"].endswith("Else: " + toy.no_answer)
        decided = prompts.build_prompt("What is the kettle?", [], count_tokens=len, context_tokens=4096,
                                       answer_tokens=64, prompts_dir=tmp_path, language="toy")
        assert decided.language == "toy"  # the decided language, not the one the words suggest
    with pytest.raises(ValueError, match="toy"):
        prompts.build_prompt(QUESTION, [], count_tokens=len, context_tokens=4096, answer_tokens=64, language="toy")
