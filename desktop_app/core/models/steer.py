"""Steering the local model while it writes: a Chinese sentence does not end without its
source marker, and a marker's number leans to the source that states its sentence. Qt-free,
no asyncio.

The default 1.5B model cites English sentences as asked, but in Chinese it often ends a
sentence at "。" with no marker, or piles every marker at the end of the paragraph. An
unmarked sentence cannot be checked against a passage, and a reader cannot click it.

:class:`SentenceMarkers` is a llama.cpp logits processor. When the model's most likely next
token ends a Chinese sentence (a token holding "。", "！" or "？") and the sentence written so
far carries no marker, it makes "[" the most likely token instead and forbids the full stop
for this step: the model then writes the marker, choosing the source itself, and ends the
sentence after it, as the prompt's worked example does ("…报告 [1]。"). Nothing else is
touched: which source, the wording, and every sentence that already has a marker are the
model's. The no-answer sentence is never marked. ASCII full stops are left alone: "." also
sits inside numbers ("3.14") and abbreviations, so it does not reliably end a sentence.
bench/gate.py answers measures it (factual sentences with a valid marker, per language).

:class:`SourceChoice` acts on the number inside the marker, in every language. The model
often cites a source lower in the list although the first one states what it wrote. At the
step after "[", when the sentence has no marker yet, each source's number is raised by the
share of the sentence's terms that source's evidence holds (:data:`SUPPORT_WEIGHT` a unit of
coverage) and lowered by its place in the retrieval order (:data:`RANK_PENALTY` a place); a
clear preference of the model still wins. The weights are chosen on the tuning half by
replaying the model's recorded choices, then checked by running it (bench/gate.py answers,
against the number left to the model). Both processors' figures, tuning and held-out, are in
docs/evaluation.md ("Steering").
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from desktop_app.core.text import words as termlib
from desktop_app.core.text.markers import find_markers
from desktop_app.core.text.sentences import split_sentences
from desktop_app.core.types import Steering

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    # What llama-cpp-python hands a logits processor: the tokens so far (prompt and
    # answer), and the next token's logits, which the processor returns changed.
    TokenIds = npt.NDArray[np.intc] | Sequence[int]
    Logits = npt.NDArray[np.single]

CJK_TERMINATORS = "。！？"
MIN_SENTENCE_CHARS = 6  # shorter runs ("是。") are not worth a marker
OPENERS = ("[", "［", "【")
# Chosen on the tuning half (module docstring): logits added to a source's number per unit of
# the sentence's terms its evidence holds, and taken per place down the retrieval order.
SUPPORT_WEIGHT = 3.0
RANK_PENALTY = 1.0
_MARKER = re.compile(r"[\[【［][^\[\]【】［］\s]{1,12}[\]】］]")  # [1], [abc1234], 【1】, ［1］


class Detokenizer(Protocol):
    """What the table reads from a ``llama_cpp.Llama``."""

    def n_vocab(self) -> int: ...

    def detokenize(self, tokens: list[int]) -> bytes: ...


class TokenTable:
    """The vocabulary's pieces that the steering looks for, read once per model."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self.pieces = list(pieces)
        self.terminators: list[int] = []
        self.brackets: list[int] = []
        self.digits: dict[str, int] = {}  # "1".."9": the token that is just that digit
        for token, piece in enumerate(self.pieces):
            text = piece.decode("utf-8", errors="ignore")
            if any(c in text for c in CJK_TERMINATORS):
                self.terminators.append(token)
            if text.strip() == "[":
                self.brackets.append(token)
            if len(text) == 1 and text in "123456789":
                self.digits.setdefault(text, token)
        self.terminator_set = frozenset(self.terminators)

    @classmethod
    def of(cls, llm: Detokenizer) -> TokenTable:
        """The table of a ``llama_cpp.Llama`` (0.33 s for Qwen2.5's 151k pieces)."""
        return cls([llm.detokenize([token]) for token in range(llm.n_vocab())])


class Written:
    """What the model has written so far in one answer, decoded as it grows (``input_ids``
    holds prompt and answer); shared by the processors of that answer."""

    def __init__(self, table: TokenTable, prompt_tokens: int) -> None:
        self.table = table
        self.prompt_tokens = prompt_tokens
        self._written = bytearray()
        self._seen = 0

    def text(self, input_ids: TokenIds) -> str:
        generated = input_ids[self.prompt_tokens:]
        for token in generated[self._seen:]:
            self._written += self.table.pieces[int(token)]
        self._seen = len(generated)
        return self._written.decode("utf-8", errors="ignore")


class SentenceMarkers:
    """A logits processor (``llama_cpp.LogitsProcessorList`` member) for one answer."""

    def __init__(self, table: TokenTable, prompt_tokens: int, steering: Steering,
                 written: Written | None = None) -> None:
        self.table = table
        self.refusal = steering.refusal.strip()
        self.written = written or Written(table, prompt_tokens)
        self.forced = 0  # markers this processor opened

    def text(self, input_ids: TokenIds) -> str:
        """What the model has written so far (``input_ids`` holds prompt and answer)."""
        return self.written.text(input_ids)

    def needs_marker(self, written: str) -> bool:
        """Whether the sentence being written would end without a marker."""
        if self.refusal and self.refusal.startswith(written.strip()):
            return False  # the no-answer sentence, or the start of it
        last_end = max(written.rfind(c) for c in CJK_TERMINATORS)
        sentence = written[last_end + 1:]
        if _MARKER.search(sentence):
            return False
        return len("".join(sentence.split())) >= MIN_SENTENCE_CHARS

    def __call__(self, input_ids: TokenIds, scores: Logits) -> Logits:
        table = self.table
        if not table.terminators or not table.brackets:
            return scores
        top = int(scores.argmax())
        if top not in table.terminator_set:
            return scores
        if not self.needs_marker(self.text(input_ids)):
            return scores
        best = max(table.brackets, key=lambda token: float(scores[token]))
        scores[best] = float(scores[top]) + 1.0
        scores[table.terminators] = -float("inf")
        self.forced += 1
        return scores



def current_sentence(written: str) -> str:
    """The sentence being written at the end of ``written`` (with any marker it holds)."""
    sentences = split_sentences(written)
    return sentences[-1].text if sentences else ""


class SourceChoice:
    """A logits processor that weighs the source number after "[" (module docstring)."""

    def __init__(self, table: TokenTable, prompt_tokens: int, steering: Steering,
                 written: Written | None = None) -> None:
        self.table = table
        self.written = written or Written(table, prompt_tokens)
        self.openers = tuple(o.encode("utf-8") for o in OPENERS)
        # (token of the number, terms of that source's evidence, place in the order); none
        # when a label has two digits: "1" then also opens "10".."19"
        single = all(label in table.digits for label, _ in steering.sources)
        self.sources = [(table.digits[label], frozenset(termlib.tokenize(text)), rank)
                        for rank, (label, text) in enumerate(steering.sources)] if single else []
        self.weighed = 0  # markers whose number this processor weighed
        self.moved = 0  # of them, those whose likeliest number it changed

    def __call__(self, input_ids: TokenIds, scores: Logits) -> Logits:
        if not self.sources or len(input_ids) <= self.written.prompt_tokens:
            return scores
        if not self.table.pieces[int(input_ids[-1])].rstrip().endswith(self.openers):
            return scores
        tokens = [token for token, _, _ in self.sources]
        before = int(scores.argmax())
        if before not in tokens:
            return scores  # not a source number the model means to write ("[0,1]", "[x]")
        written = self.written.text(input_ids)
        head = written.rstrip()
        head = head[: len(head) - 1]  # without the opener
        sentence = current_sentence(head)
        if find_markers(sentence):
            return scores  # a second marker of the sentence: the model's own choice
        terms = set(termlib.tokenize(sentence))
        if not terms:
            return scores
        for token, source_terms, rank in self.sources:
            coverage = len(terms & source_terms) / len(terms)
            scores[token] += SUPPORT_WEIGHT * coverage - RANK_PENALTY * rank
        self.weighed += 1
        self.moved += max(tokens, key=lambda token: float(scores[token])) != before
        return scores


def processors(table: TokenTable, prompt_tokens: int,
               steering: Steering) -> tuple[SentenceMarkers | None, SourceChoice | None]:
    """The processors ``steering`` asks for, sharing one :class:`Written` (None: not asked)."""
    written = Written(table, prompt_tokens)
    markers = SentenceMarkers(table, prompt_tokens, steering, written) if steering.mark_sentences else None
    choice = SourceChoice(table, prompt_tokens, steering, written) if steering.sources else None
    return markers, choice
