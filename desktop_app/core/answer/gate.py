"""The evidence gate: whether Folio may answer a question from what retrieval found, and when
not, one typed :class:`Refusal` (what kind, the reason shown, whether the closest passages
are shown). Qt-free, no asyncio.

Three checks, in order: the retrieved passages' signals (coverage of the question's terms,
the best cosine; thresholds per embedder and question language), the question's anchors
(a name or number the documents lack, found once by search: text/anchors.py), and, once
the prompt is built, the model's own abstention (:func:`abstention`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

from desktop_app.core.text.words import unmarked_language
from desktop_app.core.types import Retrieval

__all__ = [
    "ABSTAIN_PROBABILITY", "GATES", "MIN_COSINE_ALONE", "MIN_COVERAGE", "MIN_COVERAGE_LEXICAL",
    "GateThresholds", "Refusal", "RefusalKind", "abstention", "anchor_refusal", "gate_thresholds",
    "refusal",
]


class RefusalKind(enum.StrEnum):
    NOTHING_FOUND = "nothing_found"  # no passage matches the question
    OFF_TOPIC = "off_topic"  # the passages share too few of its terms and none is close in meaning
    UNMENTIONED = "unmentioned"  # the documents never mention a name the question asks about
    UNMATCHED = "unmatched"  # no passage found states a number the question asks about
    MODEL_DECLINES = "model_declines"  # the model read the passages and would say they lack the answer


@dataclass(frozen=True)
class Refusal:
    """Why a question gets no answer. ``show_passages``: the closest passages are on the
    question's topic and are shown for the reader to check."""

    kind: RefusalKind
    reason: str
    show_passages: bool = False

    def within(self, scope: str) -> Refusal:
        """This refusal for a question asked within ``scope`` ("manual.pdf")."""
        return replace(self, reason=f"Asked within {scope}: {self.reason[0].lower()}{self.reason[1:]}")


# A question has no basis when the best passage covers less than a share of its idf-weighted
# terms and no dense hit reaches a cosine, both per embedder (each has its own cosine scale:
# e5's unrelated texts score ~0.75, MiniLM's ~0.1) and per script (coverage counts words in
# English and German, character bigrams in Chinese). Without a calibrated dense signal (no
# embedder, an embedder the user picked, MiniLM on Chinese or German) coverage alone decides,
# against MIN_COVERAGE_LEXICAL. The gate refuses what is plainly off the library's topics; a
# question whose topic is there but whose answer is not is the model's to decline
# (ABSTAIN_PROBABILITY below).
#
# all-MiniLM-L6-v2: calibrated so that no answerable question of FinanceBench and
# MMLongBench-Doc is refused while off-topic ones are (measured by ``bench/trust.py gate``).
MIN_COVERAGE = 0.55
MIN_COSINE_ALONE = 0.35
MIN_COVERAGE_LEXICAL = 0.25


@dataclass(frozen=True)
class GateThresholds:
    coverage: float  # refuse below this coverage of the question's terms ...
    cosine: float  # ... when no passage reaches this cosine either
    floor: float = 0.0  # and below this coverage whatever the cosine


# Per embedder (its model id up to the ":"), per question language. multilingual-e5-small:
# the most unanswerable and off-topic questions refused with no answerable one refused, on
# the tuning half of bench/data/eval_{en,de,zh}.json (``bench/gate.py retrieve --fit``
# fits them, ``bench/gate.py retrieve`` measures both halves). English needs a floor: e5
# scores off-topic English as close as answerable questions, so few shared words must
# refuse; its coverage is 3/4 so that a small library, whose idf inflates coverage, still
# refuses a far question while a passage holding 3/4 of the question's words passes.
GATES: dict[str, dict[str, GateThresholds]] = {
    "all-minilm-l6-v2-int8": {
        "en": GateThresholds(MIN_COVERAGE, MIN_COSINE_ALONE),
        "de": GateThresholds(MIN_COVERAGE, MIN_COSINE_ALONE),
    },
    "multilingual-e5-small-int8": {
        "en": GateThresholds(0.75, 0.81, floor=0.24),
        "de": GateThresholds(0.34, 0.80),
        "zh": GateThresholds(0.44, 0.86),
    },
}


def gate_thresholds(embedder: str, language: str) -> GateThresholds | None:
    """The gate's thresholds for a dense signal from ``embedder`` (a model id) on a question
    in ``language`` ("en", "de", "zh"); None when that signal was not calibrated."""
    # A folder holding a built-in model is named after it ("all-MiniLM-L6-v2-int8").
    return GATES.get(embedder.split(":", 1)[0].lower(), {}).get(language)


def language_of(retrieval: Retrieval) -> str:
    """The question's language as retrieval decided it (``Retrieval.language``); for a
    retrieval made without one (a test's, a replayed bench row) the language of a question
    nothing marks (text/words.unmarked_language): the one fallback."""
    return retrieval.language or unmarked_language(retrieval.cjk)


def refusal(retrieval: Retrieval) -> Refusal | None:
    """Why the retrieved passages cannot support an answer, else None."""
    if not retrieval.passages:
        return Refusal(RefusalKind.NOTHING_FOUND, "No passage in the library matches the question.")
    language = language_of(retrieval)
    if retrieval.documents_language:
        return _across_languages(retrieval)
    gate = gate_thresholds(retrieval.embedder, language)
    if gate is None or retrieval.best_cosine <= 0.0:
        if retrieval.coverage < MIN_COVERAGE_LEXICAL:
            return Refusal(RefusalKind.OFF_TOPIC,
                           f"The best passage covers {retrieval.coverage:.0%} of the question's terms"
                           f" (needs {MIN_COVERAGE_LEXICAL:.0%}).")
        return anchor_refusal(retrieval)
    if retrieval.coverage < gate.floor:
        return Refusal(RefusalKind.OFF_TOPIC,
                       f"The best passage covers {retrieval.coverage:.0%} of the question's terms"
                       f" (needs {gate.floor:.0%}).")
    if retrieval.coverage < gate.coverage and retrieval.best_cosine < gate.cosine:
        return Refusal(RefusalKind.OFF_TOPIC,
                       f"The best passage covers {retrieval.coverage:.0%} of the question's terms"
                       f" (needs {gate.coverage:.0%}) and none is close in meaning (best cosine"
                       f" {retrieval.best_cosine:.2f}, needs {gate.cosine:.2f}).")
    return anchor_refusal(retrieval)


# A question in one language over passages in another ("What was Northeast Electric's
# revenue?" over a Chinese filing) shares no words with them: coverage measures nothing, and
# multilingual-e5's cosine across languages sits lower (0.75-0.78 for the answerable
# English questions of tests/e2e/test_gate_crosslingual_real.py over the Chinese report,
# 0.74 for an unrelated one). So only a plainly distant best passage refuses; the rest is
# the anchors' (a handle written alike in every language, "PDF.js", must be mentioned) and
# the model's own abstention.
MIN_COSINE_ACROSS_LANGUAGES = 0.70


def _across_languages(retrieval: Retrieval) -> Refusal | None:
    if 0.0 < retrieval.best_cosine < MIN_COSINE_ACROSS_LANGUAGES:
        return Refusal(RefusalKind.OFF_TOPIC,
                       f"No passage is close in meaning to the question (best cosine"
                       f" {retrieval.best_cosine:.2f} across languages, needs {MIN_COSINE_ACROSS_LANGUAGES:.2f}).")
    if retrieval.unmentioned:  # passages in another language without the handle are no topic
        return Refusal(RefusalKind.UNMENTIONED,
                       f"The documents never mention {_quoted(retrieval.unmentioned)}, which the question"
                       f" asks about.")
    return anchor_refusal(retrieval)


def anchor_refusal(retrieval: Retrieval) -> Refusal | None:
    """Why the documents cannot state the answer when they lack a name or a number the
    question asks about (an on-topic question the signals let through; search found them
    once: ``Retrieval.unmentioned``, ``unmatched``), else None. The passages are on the
    topic: they are shown."""
    if retrieval.unmentioned:
        return Refusal(RefusalKind.UNMENTIONED,
                       f"The documents never mention {_quoted(retrieval.unmentioned)}, which the question"
                       f" asks about; the closest passages are below.", show_passages=True)
    if retrieval.unmatched:
        return Refusal(RefusalKind.UNMATCHED,
                       f"No passage found states {_quoted(retrieval.unmatched)}, which the question asks"
                       f" about; the closest ones are below.", show_passages=True)
    return None


def _quoted(items: Sequence[str]) -> str:
    quoted = [f"\u201c{item}\u201d" for item in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


# The model's own abstention: before it writes, Folio asks how likely the model is to
# reply with the no-answer sentence (prompts.NO_ANSWER) to this very prompt; at
# ABSTAIN_PROBABILITY or more the answer is "no basis" and the sources it read are shown.
# The lowest probability that refuses no answerable question the model would have answered,
# on the tuning half of bench/data/eval_*.json (``bench/gate.py answers --abstain 1.01`` then
# ``report --fit-abstain`` fit it; ``bench/gate.py answers`` measures what it declines).
ABSTAIN_PROBABILITY = 0.10


def abstention(probability: float) -> Refusal | None:
    """The refusal when the model, having read the passages, would say they do not hold the
    answer with ``probability`` at or above :data:`ABSTAIN_PROBABILITY`; else None."""
    if probability < ABSTAIN_PROBABILITY:
        return None
    return Refusal(RefusalKind.MODEL_DECLINES,
                   f"The model read the passages below and found no answer in them (it would say so with"
                   f" probability {probability:.0%}).", show_passages=True)
