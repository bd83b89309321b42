"""The model's own abstention: before it writes, Folio asks how likely the model is to reply
with the no-answer sentence; at ABSTAIN_PROBABILITY or more the answer is "no basis", the
passages it read are shown, and the history says why."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from desktop_app.core.answer import answering, gate, prompts
from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFinished, AnswerStarted, NoBasis, TokenDelta
from desktop_app.core.verdicts import Verifier
from tests.core.search.test_retrieve import add_document
from tests.fakes import FakeEmbedder, FakeGenerator


class DoubtfulGenerator(FakeGenerator):
    """A fake that would decline with a fixed probability, and records what it was asked."""

    scores_replies = True

    def __init__(self, decline: float, answers: Sequence[str] = ()) -> None:
        super().__init__(answers)
        self.decline = decline
        self.asked: list[str] = []

    def reply_logprob(self, messages: Sequence[dict[str, str]], reply: str,
                      should_cancel: Callable[[], bool] = lambda: False) -> float:
        self.asked.append(reply)
        return math.log(self.decline)


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "lib.duckdb")
    embedder = FakeEmbedder()
    add_document(s, embedder, "http-spec", [
        ["The server returns 414 Request-URI Too Long when the URI is longer than it can handle."],
    ])
    yield s
    s.close()


def ask(store: Store, generator: FakeGenerator, question: str, **settings: object) -> list[object]:
    events: list[object] = []
    chosen = {"judge": False, "abstain": True, **settings}
    answering.answer(question, retriever=Retriever(store, FakeEmbedder()), store=store,
                     generator_factory=lambda _language: generator, settings=Settings(**chosen),
                     emit=events.append, should_cancel=lambda: False, verifier=Verifier())
    return events


def test_a_model_sure_the_sources_lack_the_answer_ends_in_no_basis_with_the_sources_shown(store: Store) -> None:
    generator = DoubtfulGenerator(gate.ABSTAIN_PROBABILITY + 0.1, ["It is 414 [1]."])
    events = ask(store, generator, "What does the server return when the request URI is too long?")
    assert generator.asked == [prompts.NO_ANSWER["en"]]
    assert generator.prompts == []  # nothing was written
    started = next(e for e in events if isinstance(e, AnswerStarted))
    assert started.sources and "414" in started.sources[0].text  # what it read, clickable
    reason = next(e for e in events if isinstance(e, NoBasis)).reason
    assert "found no answer" in reason and f"{gate.ABSTAIN_PROBABILITY + 0.1:.0%}" in reason
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == prompts.NO_ANSWER["en"]
    finished = next(e for e in events if isinstance(e, AnswerFinished))
    record = store.answer(finished.answer_id)
    assert record is not None and record.status == "no_basis" and "found no answer" in record.reason
    assert record.sources


def test_a_model_likely_to_answer_answers(store: Store) -> None:
    generator = DoubtfulGenerator(gate.ABSTAIN_PROBABILITY - 0.05, ["It returns 414 [1]."])
    events = ask(store, generator, "What does the server return when the request URI is too long?")
    assert not any(isinstance(e, NoBasis) for e in events)
    assert next(e for e in events if isinstance(e, AnswerFinished)).text == "It returns 414 [1]."


def test_the_answer_language_picks_the_no_answer_sentence(store: Store) -> None:
    generator = DoubtfulGenerator(0.9)
    events = ask(store, generator, "What does the server return when the request URI is too long?",
                 prompt_language="zh")
    assert generator.asked == [prompts.NO_ANSWER["zh"]]
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == prompts.NO_ANSWER["zh"]


def test_abstention_off_in_settings_and_models_without_the_measure_answer(store: Store) -> None:
    generator = DoubtfulGenerator(0.99, ["It returns 414 [1]."])
    events = ask(store, generator, "What does the server return when the request URI is too long?", abstain=False)
    assert generator.asked == [] and not any(isinstance(e, NoBasis) for e in events)
    plain = FakeGenerator(["It returns 414 [1]."])  # a model server has no such measure
    events = ask(store, plain, "What does the server return when the request URI is too long?")
    assert not any(isinstance(e, NoBasis) for e in events)


def test_a_chinese_answer_is_steered_to_mark_its_sentences(store: Store) -> None:
    """In Chinese the model is asked to stream with its sentences marked (core/models/steer.py),
    sparing the no-answer sentence; in every language the marker's number is weighed by the
    sources, which the steering carries as the labels and the evidence the model read."""
    chinese = FakeGenerator(["它返回 414 [1]。"])
    ask(store, chinese, "What does the server return when the request URI is too long?",
        abstain=False, prompt_language="zh")
    assert chinese.steering is not None and chinese.steering.refusal == prompts.NO_ANSWER["zh"]
    assert chinese.steering.mark_sentences
    english = FakeGenerator(["It returns 414 [1]."])
    ask(store, english, "What does the server return when the request URI is too long?", abstain=False)
    assert english.prompts and english.steering is not None and not english.steering.mark_sentences
    labels = [label for label, _ in english.steering.sources]
    assert labels == [str(n) for n in range(1, len(labels) + 1)] and labels
    content = english.prompts[-1][-1]["content"]
    assert all(text and text[:40] in content for _, text in english.steering.sources)


class CountingGenerator(FakeGenerator):
    """Counts the deltas the answer read before it stopped the stream."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answers, delta=4)
        self.read = 0

    def stream(self, messages, **kwargs):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN003, ANN201
        inner = super().stream(messages, **kwargs)

        def counted():  # type: ignore[no-untyped-def]  # noqa: ANN202
            for delta in inner:
                self.read += 1
                yield delta
        return counted()


def test_an_answer_caught_in_a_loop_is_stopped_at_the_third_repeat(store: Store) -> None:
    loop = "The identity of an Internet user was revealed [1]. "
    generator = CountingGenerator(["The server returns 414 [1]. " + loop * 27])
    events = ask(store, generator, "What does the server return when the request URI is too long?", abstain=False)
    finished = next(e for e in events if isinstance(e, AnswerFinished))
    assert finished.text.count("was revealed") == 3
    assert finished.text.endswith("was revealed [1].")  # not the start of a fourth
    assert generator.read <= len("The server returns 414 [1]. " + loop * 4) // 4  # not 27 times
    sound = FakeGenerator(["Yes [1]. Yes [1]. Yes [1]. The server returns 414 [1]."])
    events = ask(store, sound, "What does the server return when the request URI is too long?", abstain=False)
    assert next(e for e in events if isinstance(e, AnswerFinished)).text.endswith("returns 414 [1].")


def test_a_forced_language_is_the_one_language_of_the_question(store: Store) -> None:
    """Settings.prompt_language decides Retrieval.language, and the prompt, the model's
    refusal and the no-basis message all follow it (no second detection)."""
    question = "What does the server return when the URI is too long?"
    retrieval = Retriever(store, FakeEmbedder()).search(question, 3, language="de")
    assert retrieval.language == "de" and retrieval.passages
    assert Retriever(store, FakeEmbedder()).search(question, 3).language == "en"
    generator = DoubtfulGenerator(gate.ABSTAIN_PROBABILITY + 0.1)
    events = ask(store, generator, question, prompt_language="de")
    assert generator.asked == [prompts.NO_ANSWER["de"]]  # the German refusal was weighed
    assert "".join(e.text for e in events if isinstance(e, TokenDelta)) == prompts.NO_ANSWER["de"]
    far = ask(store, DoubtfulGenerator(0.0), "How tall is Mount Everest?", prompt_language="zh")
    assert [e.text for e in far if isinstance(e, TokenDelta)] == [prompts.NO_BASIS_MESSAGE["zh"]]
