"""Prompt templates (editable files in resources/prompts/) and context packing. Qt-free.

A prompt is three parts, in this order:

1. ``system_{lang}.txt``: who answers and the rules (answer from the sources only, cite,
   refuse). It never changes between questions. A language without its own templates (a
   lexicon file alone, core/text/lang/) is prompted with the default language's, its own
   no-answer sentence filled in.
2. Worked examples from ``example_{lang}.txt``, as a user turn (sources + question in the
   same layout as the real one) and the assistant's cited answer. A small model copies the
   citing habit of a previous turn far more reliably than it follows a rule. They never
   change either, so llama.cpp's prefix cache keeps parts 1-2 evaluated across questions.
   A follow-up question's earlier turns come next, briefly: each question and the start
   of its answer without its markers (:func:`recalled_turns`), so the markers of the
   request refer to its own sources only.
3. ``task_{lang}.txt``: the request's sources, ``[n] (title, section, p. label)`` and the
   passage, best first, then the question and the instruction to cite right after it,
   where a small model attends to it.

Sources are packed into the model's window after the answer's own budget, best first. A
passage longer than ``passage_chars`` is cut to the window of it that holds most of the
question's terms (the whole passage still resolves as the citation). Figures that chose
these defaults: bench/citing.py.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.answer.evidence import evidence_text
from desktop_app.core.text import lang
from desktop_app.core.text import words as termlib
from desktop_app.core.text.markers import strip_markers
from desktop_app.core.text.words import question_language
from desktop_app.core.types import PDF_FORMAT, SECTION_SEPARATOR, Passage

logger = logging.getLogger(__name__)



class _Sentences(Mapping[str, str]):
    """One sentence of every registered language, by its code: each lexicon's own
    (core/text/lang/), read when asked, so a language registered later is there too."""

    def __init__(self, field: str) -> None:
        self._field = field

    def __getitem__(self, code: str) -> str:
        lexicon = lang.get(code)
        if lexicon is None or not getattr(lexicon, self._field):
            raise KeyError(code)
        return str(getattr(lexicon, self._field))

    def __iter__(self) -> Iterator[str]:
        return iter([x.code for x in lang.all_lexicons() if getattr(x, self._field)])

    def __len__(self) -> int:
        return sum(1 for _ in self)


NO_ANSWER: Mapping[str, str] = _Sentences("no_answer")  # the prompt's refusal, by language
NO_BASIS_MESSAGE: Mapping[str, str] = _Sentences("no_basis")  # the answer when the gate finds no basis
MAX_PASSAGE_CHARS = 600  # per source shown to the model (bench/citing.py: caps and speed)
# PDF text keeps typographic ligatures ("Deﬁnition", "hausdorﬀsch": one character each, as
# viewers show them); the model reads them as rare tokens and missed "Metrische Räume sind
# hausdorﬀsch" for "hausdorffsch". The prompt spells them out; stored text, highlights and
# the checks (which normalise with NFKC) are unchanged.
_LIGATURES = str.maketrans(
    {chr(c): unicodedata.normalize("NFKC", chr(c)) for c in range(0xFB00, 0xFB07)}  # ﬀ … ﬆ
)
# ... and at most this many tokens: a Chinese or table-heavy passage costs 2-3x the tokens
# of English prose per character, and each prompt token costs ~25-35 ms on 1 thread.
MAX_PASSAGE_TOKENS = 200
MESSAGE_OVERHEAD_TOKENS = 8  # role markers the chat template adds around each message
TEMPLATE_MARGIN_TOKENS = 32  # the template's own head and the generation prompt
_ELLIPSIS = "…"
# A follow-up's earlier turns in the prompt: the last RECALLED_TURNS, each answer cut to
# RECALLED_ANSWER_CHARS, all of them within RECALLED_TOKENS (each token read costs prefill
# before the first word: bench/first_word.py followup measures it with the default model).
RECALLED_TURNS = 2
RECALLED_ANSWER_CHARS = 120
RECALLED_TOKENS = 64
_EXAMPLE_KEY = re.compile(r"^(question|source|answer):\s*(.*)$", re.IGNORECASE)
_EXAMPLE_LABEL = re.compile(r"\[(\d{1,2})\]")


@dataclass(frozen=True)
class PackedPrompt:
    messages: list[dict[str, str]]
    labels: list[str]  # the labels of the sources that made it into the prompt, in order
    language: str
    request_tokens: int = 0  # the tokens after the cached head (recalled turns and request), counted while packing


@dataclass(frozen=True)
class Example:
    """A worked example: a question, its sources (title, where, text) and the cited answer."""

    question: str
    sources: tuple[tuple[str, str, str], ...]
    answer: str


def _folder(prompts_dir: Path | None) -> Path:
    return prompts_dir or paths.resources_dir() / "prompts"


def _template(name: str, prompts_dir: Path | None) -> str:
    return (_folder(prompts_dir) / name).read_text(encoding="utf-8")


def template_language(language: str, prompts_dir: Path | None = None) -> str:
    """The language whose templates prompt a question in ``language``: its own when it has
    a ``system_{language}.txt``, else the default language's (a language added as a lexicon
    file alone)."""
    if (_folder(prompts_dir) / f"system_{language}.txt").is_file():
        return language
    logger.debug("no prompt templates for %r: the default language's (%s) are used", language, lang.DEFAULT)
    return lang.DEFAULT


def load_examples(language: str, prompts_dir: Path | None = None) -> list[Example]:
    """The worked examples of ``example_{language}.txt`` (none if the file is absent).

    Format: ``question:``, then one or more ``source: title | where`` lines each followed
    by its text, then ``answer:``; examples are separated by a line ``===``; lines starting
    with ``#`` are comments. Labels in the answer are ``[1]``, ``[2]`` by source order.
    """
    path = _folder(prompts_dir) / f"example_{language}.txt"
    if not path.is_file():
        return []
    examples: list[Example] = []
    for block in re.split(r"^===\s*$", path.read_text(encoding="utf-8"), flags=re.MULTILINE):
        question, answer, sources = "", "", []
        current: list[str] | None = None
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            key = _EXAMPLE_KEY.match(line)
            if key and key.group(1).lower() == "source":
                title, *where = (part.strip() for part in key.group(2).split("|"))
                current = [title, ", ".join(w for w in where if w), ""]
                sources.append(current)
            elif key and key.group(1).lower() == "question":
                question, current = key.group(2).strip(), None
            elif key:
                answer, current = key.group(2).strip(), None
            elif current is not None:
                current[2] = f"{current[2]} {line.strip()}".strip()
        if question and answer and sources:
            examples.append(Example(question, tuple((t, w, x) for t, w, x in sources), answer))
    return examples


def focus_text(text: str, question: str, max_chars: int) -> str:
    """``text`` whitespace-normalised, cut to the ``max_chars`` window that holds the most
    of the question's terms (among equal windows the middle one, so the matches sit in the
    middle; the start when nothing matches), with ``…`` where it was cut."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    wanted = set(termlib.tokenize(question))
    step = max(20, max_chars // 8)
    starts = sorted({min(s, len(text) - max_chars) for s in range(0, len(text) - max_chars + step, step)})
    scores = []
    for start in starts:
        found = termlib.tokenize(text[start : start + max_chars])
        scores.append(len(wanted.intersection(found)) + 0.01 * sum(t in wanted for t in found))
    best = max(scores)
    tied = [s for s, score in zip(starts, scores, strict=True) if score == best]
    start = 0 if best == 0 else tied[len(tied) // 2]
    end = start + max_chars
    if start > 0:  # begin at a word
        space = text.find(" ", start, start + 40)
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", end - 40, end)
        end = space if space > start else end
    head = _ELLIPSIS + " " if start > 0 else ""
    tail = " " + _ELLIPSIS if end < len(text) else ""
    return f"{head}{text[start:end]}{tail}"


def _where(title: str, section: str, page_label: str) -> str:
    # The innermost heading only ("5.5 Control Frames", not "5 Data Framing > 5.5 Control
    # Frames"): the outer ones cost the model ~8 tokens a source and say little more.
    section = section.rsplit(SECTION_SEPARATOR, 1)[-1].strip()
    parts = [title] + ([section] if section else []) + ([f"p. {page_label}"] if page_label else [])
    return ", ".join(p for p in parts if p)


def format_source(label_marker: str, passage: Passage, question: str = "",
                  max_chars: int = MAX_PASSAGE_CHARS, *, count_tokens: Callable[[str], int] | None = None,
                  max_tokens: int | None = None) -> str:
    """``[n] (title, section, p. label)`` and the passage, cut to ``max_chars`` around the
    question's terms and, given ``count_tokens``, to ``max_tokens``."""
    source = evidence_text(passage)  # the kept sentences when evidence.select cut it
    text = focus_text(source, question, max_chars)
    if count_tokens is not None and max_tokens:
        chars = min(max_chars, len(text))
        for _ in range(4):  # converges in one or two steps: tokens per character is ~constant
            tokens = count_tokens(text)
            if tokens <= max_tokens or chars <= 60:
                break
            chars = max(60, int(chars * max_tokens / tokens * 0.95))
            text = focus_text(source, question, chars)
    # A reflowable document's part label is its section number, already in the section
    # path: no "p." for it.
    page_label = passage.page_label if passage.format == PDF_FORMAT else ""
    where = _where(passage.doc_title, passage.section, page_label)
    return f"{label_marker} ({where})\n{text}".translate(_LIGATURES)


def _fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def _example_turns(examples: Sequence[Example], task_t: str, values: dict[str, str],
                   markers: Sequence[str]) -> list[dict[str, str]]:
    """The examples as user/assistant turns, labelled like the real request."""
    turns: list[dict[str, str]] = []
    for example in examples:
        blocks = []
        for n, (title, where, text) in enumerate(example.sources, start=1):
            marker = markers[n - 1] if n <= len(markers) else f"[{n}]"
            blocks.append(f"{marker} ({', '.join(p for p in (title, where) if p)})\n{text}")

        def relabel(match: re.Match[str]) -> str:
            n = int(match.group(1))
            return markers[n - 1] if 1 <= n <= len(markers) else match.group(0)

        user = _fill(task_t, {**values, "sources": "\n\n".join(blocks), "question": example.question})
        turns += [{"role": "user", "content": user},
                  {"role": "assistant", "content": _EXAMPLE_LABEL.sub(relabel, example.answer)}]
    return turns


def short_answer(text: str, max_chars: int = RECALLED_ANSWER_CHARS) -> str:
    """An earlier answer as a later prompt recalls it: without its markers (they named that
    turn's sources), whitespace-normalised, cut at a word to ``max_chars``."""
    text = " ".join(strip_markers(text).split())
    text = re.sub(r"\s+([.,;:!?。，；：！？])", r"\1", text)
    if len(text) <= max_chars:
        return text
    cut = text.rfind(" ", 0, max_chars)
    return text[: cut if cut > max_chars // 2 else max_chars].rstrip(" ,;:") + " " + _ELLIPSIS


def recalled_turns(history: Sequence[tuple[str, str]], count_tokens: Callable[[str], int],
                   budget_tokens: int = RECALLED_TOKENS) -> list[dict[str, str]]:
    """The last :data:`RECALLED_TURNS` of ``history`` (question, answer; oldest first) as
    user/assistant turns, the answers short, the oldest dropped until they fit
    ``budget_tokens``; the last turn alone has its answer cut further to fit (a Chinese
    answer costs about a token a character)."""

    def messages(turns: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
        return [m for q, a in turns for m in ({"role": "user", "content": q},
                                              {"role": "assistant", "content": a or _ELLIPSIS})]

    def cost(turns: Sequence[tuple[str, str]]) -> int:
        return sum(count_tokens(m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in messages(turns))

    recent = [(q.strip(), a) for q, a in history[-RECALLED_TURNS:] if q.strip()]
    turns = [(q, short_answer(a)) for q, a in recent]
    while len(turns) > 1 and cost(turns) > budget_tokens:
        turns, recent = turns[1:], recent[1:]
    if not turns:
        return []
    (question, answer), chars = recent[0], RECALLED_ANSWER_CHARS
    while cost(turns) > budget_tokens and chars >= 24:  # one turn: its answer shorter
        chars = int(chars * 0.7)
        turns = [(question, short_answer(answer, chars))]
    if cost(turns) > budget_tokens:
        turns = [(question, _ELLIPSIS)]
    return messages(turns) if cost(turns) <= budget_tokens else []


def prompt_head(language: str, *, count_tokens: Callable[[str], int], context_tokens: int,
                answer_tokens: int) -> list[dict[str, str]]:
    """The messages a model primes its cache with for the prompts a question in
    ``language`` (decided: "en", "de", "zh", ...: a lexicon's code) gets: their fixed head,
    the system prompt and worked examples, the same for every question in that language with
    numbered labels (followed by an empty request)."""
    return build_prompt("", [], count_tokens=count_tokens, context_tokens=context_tokens,
                        answer_tokens=answer_tokens, language=language).messages


def build_prompt(
    question: str,
    sources: Sequence[tuple[str, str, Passage]],
    *,
    count_tokens: Callable[[str], int],
    context_tokens: int,
    answer_tokens: int,
    language: str = "auto",
    prompts_dir: Path | None = None,
    max_sources: int | None = None,
    passage_chars: int = MAX_PASSAGE_CHARS,
    passage_tokens: int | None = MAX_PASSAGE_TOKENS,
    focus: str = "",
    history: Sequence[tuple[str, str]] = (),
) -> PackedPrompt:
    """``sources`` are (label, marker text, passage), best first.

    Each passage is cut to ``passage_chars`` characters and ``passage_tokens`` tokens
    around the question's terms (None: no token cap). Keeps the best sources that fit
    ``context_tokens`` after ``answer_tokens`` (at most ``max_sources``); if not even the
    best one fits, it is cut to what fits. ``focus``: the question as searched (a
    follow-up made to stand alone) that passages are cut around (default: ``question``);
    ``history``: the conversation's earlier turns, recalled briefly before the request.
    ``language``: the question's language as retrieval decided it (``Retrieval.language``, a
    lexicon's code), used as it is; "auto" only where no retrieval happened (a bench, a
    test): the language ``question`` is written in. A language without prompt templates of
    its own gets the default language's, with its own no-answer sentence.
    """
    code = question_language(question) if language == "auto" else language
    if lang.get(code) is None:
        raise ValueError(f"no lexicon for the language {code!r} (core/text/lang/)")
    templates = template_language(code, prompts_dir)
    system_t = _template(f"system_{templates}.txt", prompts_dir)
    task_t = _template(f"task_{templates}.txt", prompts_dir)
    markers = [marker for _, marker, _ in sources] or ["[1]", "[2]"]
    values = {
        "example_marker": markers[0],
        "example_marker_2": markers[1] if len(markers) > 1 else markers[0],
        "refusal": NO_ANSWER[code],
    }
    system = _fill(system_t, values)
    head = [{"role": "system", "content": system}]
    head += _example_turns(load_examples(templates, prompts_dir), task_t, values, markers)
    values["question"] = question.strip()
    focus = focus.strip() or question
    recalled = recalled_turns(history, count_tokens) if history else []

    def render(blocks: list[str]) -> str:
        return _fill(task_t, {**values, "sources": "\n\n".join(blocks)})

    fixed = sum(count_tokens(m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in [*head, *recalled])
    budget = context_tokens - answer_tokens - fixed - MESSAGE_OVERHEAD_TOKENS - TEMPLATE_MARGIN_TOKENS
    chosen = list(sources if max_sources is None else sources[:max_sources])
    blocks: list[str] = []
    labels: list[str] = []
    request_tokens = -1  # the count of render(blocks) when the last block was added
    for label, marker, passage in chosen:
        block = format_source(marker, passage, focus, passage_chars, count_tokens=count_tokens,
                              max_tokens=passage_tokens)
        tokens = count_tokens(render(blocks + [block]))
        if tokens > budget:
            if not blocks:
                # Not even the best source fits whole: cut it to what fits.
                chars = len(passage.text)
                while chars > 120 and count_tokens(render([block])) > budget:
                    chars = int(min(chars, passage_chars) * 0.8)
                    block = format_source(marker, passage, focus, chars)
                request_tokens = count_tokens(render([block]))
                if request_tokens <= budget:
                    blocks.append(block)
                    labels.append(label)
                else:
                    request_tokens = -1
            break
        blocks.append(block)
        labels.append(label)
        request_tokens = tokens
    if len(labels) < len(chosen):
        logger.info("prompt holds %d of %d sources (window %d tokens)", len(labels), len(chosen),
                    context_tokens)
    request = render(blocks)
    if request_tokens < 0:
        request_tokens = count_tokens(request)
    # The recalled turns are read with the request (only the head is cached).
    request_tokens += sum(count_tokens(m["content"]) + MESSAGE_OVERHEAD_TOKENS for m in recalled)
    messages = [*head, *recalled, {"role": "user", "content": request}]
    return PackedPrompt(messages=messages, labels=labels, language=code, request_tokens=request_tokens)
