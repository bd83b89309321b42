"""Prompt templates (editable files in resources/prompts/) and context packing. Qt-free.

Sources are listed as ``[n] (title, section, p. label)`` followed by the passage, best
first, as many as fit the model's window after the answer's own budget. The
instruction to cite sits right before the answer, where a small model attends to it,
with a worked example using the request's own labels.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.terms import is_cjk_query
from desktop_app.core.types import Passage

logger = logging.getLogger(__name__)

NO_ANSWER = {
    "en": "The documents do not contain the answer.",
    "zh": "文档中没有这个问题的答案。",
}
NO_BASIS_MESSAGE = {
    "en": "The documents hold no basis for answering this question. Please verify manually.",
    "zh": "文档中没有回答这个问题的依据,请人工核实。",
}
MAX_PASSAGE_CHARS = 1600


@dataclass(frozen=True)
class PackedPrompt:
    messages: list[dict[str, str]]
    labels: list[str]  # the labels of the sources that made it into the prompt, in order
    language: str


def language_for(question: str, setting: str = "auto") -> str:
    if setting in ("en", "zh"):
        return setting
    return "zh" if is_cjk_query(question) else "en"


def _template(name: str, prompts_dir: Path | None) -> str:
    folder = prompts_dir or paths.resources_dir() / "prompts"
    return (folder / name).read_text(encoding="utf-8")


def format_source(label_marker: str, passage: Passage) -> str:
    where = [passage.doc_title]
    if passage.section:
        where.append(passage.section)
    where.append(f"p. {passage.page_label}")
    text = " ".join(passage.text.split())
    if len(text) > MAX_PASSAGE_CHARS:
        text = text[:MAX_PASSAGE_CHARS] + " …"
    return f"{label_marker} ({', '.join(where)})\n{text}"


def build_prompt(
    question: str,
    sources: Sequence[tuple[str, str, Passage]],
    *,
    count_tokens: Callable[[str], int],
    context_tokens: int,
    answer_tokens: int,
    language: str = "auto",
    prompts_dir: Path | None = None,
) -> PackedPrompt:
    """``sources`` are (label, marker text, passage), best first."""
    lang = language_for(question, language)
    system_t = _template(f"system_{lang}.txt", prompts_dir)
    task_t = _template(f"task_{lang}.txt", prompts_dir)
    first = sources[0][1] if sources else "[1]"
    second = sources[1][1] if len(sources) > 1 else first
    system = system_t.replace("{example_marker}", first)

    def render(blocks: list[str]) -> str:
        return (
            task_t.replace("{sources}", "\n\n".join(blocks))
            .replace("{question}", question.strip())
            .replace("{example_marker_2}", second)
            .replace("{example_marker}", first)
        )

    # Leave room for the chat template's own tokens.
    budget = context_tokens - answer_tokens - count_tokens(system) - 64
    blocks: list[str] = []
    labels: list[str] = []
    for label, marker, passage in sources:
        block = format_source(marker, passage)
        if count_tokens(render(blocks + [block])) > budget:
            if not blocks:
                # Not even the best source fits whole: cut it to what fits.
                while len(block) > 200 and count_tokens(render([block])) > budget:
                    block = block[: int(len(block) * 0.8)] + " …"
                blocks.append(block)
                labels.append(label)
            break
        blocks.append(block)
        labels.append(label)
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": render(blocks)},
    ]
    return PackedPrompt(messages=messages, labels=labels, language=lang)
