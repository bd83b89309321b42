"""The steering with the real small GGUF, in process and through the worker process: asked to
repeat a Chinese sentence, the model ends it with "。" and no marker; steered, it writes a
marker where the full stop would have gone. And the number inside a marker: the small model
cites [3] wherever the source that states its sentence sits; weighed, it cites that source."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.worker import WorkerGenerator
from desktop_app.core.types import Steering

pytestmark = pytest.mark.e2e

REPEAT = [{"role": "user", "content": "请逐字重复这句话：租户必须在发现损坏后十四天内书面通知房东。"}]
STEERING = Steering(refusal="文档中没有这个问题的答案。")


def test_a_chinese_sentence_gets_a_marker_before_it_ends(small_model_path: Path) -> None:
    model = LlamaGenerator(small_model_path, context_tokens=1024, threads=1)
    plain = "".join(model.stream(REPEAT, max_tokens=40, temperature=0.0))
    assert "房东。" in plain and "[" not in plain  # what the model does on its own
    steered = "".join(model.stream(REPEAT, max_tokens=40, temperature=0.0, steering=STEERING))
    assert steered.startswith("租户必须在发现损坏后十四天内书面通知房东 [")
    assert model.last_steer is not None and model.last_steer.forced >= 1
    # the next answer without steering is the model's own again
    assert "".join(model.stream(REPEAT, max_tokens=40, temperature=0.0)) == plain


def test_the_worker_passes_the_steering_to_its_model(small_model_path: Path) -> None:
    worker = WorkerGenerator(small_model_path, context_tokens=1024, threads=1)
    try:
        steered = "".join(worker.stream(REPEAT, max_tokens=40, temperature=0.0, steering=STEERING))
    finally:
        worker.close()
    assert steered.startswith("租户必须在发现损坏后十四天内书面通知房东 [")


EXAMPLE = [
    {"role": "user", "content": "Sources:\n[1] Pears are green.\n[2] The rent is 500 euro.\n\nQuestion: How much is the rent?"},
    {"role": "assistant", "content": "The rent is 500 euro [2]."},
]
FEE = "The monthly fee is 12 euro for students."
OTHERS = ("Apples are red.", "Bananas are yellow.")


def fee_question(place: int) -> tuple[list[dict[str, str]], Steering]:
    texts = list(OTHERS)
    texts.insert(place, FEE)
    body = "\n".join(f"[{n}] {text}" for n, text in enumerate(texts, start=1))
    messages = [*EXAMPLE, {"role": "user", "content": f"Sources:\n{body}\n\nQuestion: How much is the monthly fee for students?"}]
    return messages, Steering(mark_sentences=False, sources=tuple((str(n), t) for n, t in enumerate(texts, start=1)))


def test_the_marker_names_the_source_that_states_the_sentence(small_model_path: Path) -> None:
    model = LlamaGenerator(small_model_path, context_tokens=1024, threads=1)
    for place in (0, 1, 2):
        messages, steering = fee_question(place)
        plain = "".join(model.stream(messages, max_tokens=40, temperature=0.0))
        assert plain == "The monthly fee is 12 euro [3]."  # wherever the fee is
        steered = "".join(model.stream(messages, max_tokens=40, temperature=0.0, steering=steering))
        assert steered == f"The monthly fee is 12 euro [{place + 1}]."
        assert model.last_choice is not None and model.last_choice.weighed == 1
        assert model.last_steer is None  # English: the sentence steering is off


def test_the_worker_weighs_the_marker_too(small_model_path: Path) -> None:
    messages, steering = fee_question(0)
    worker = WorkerGenerator(small_model_path, context_tokens=1024, threads=1)
    try:
        steered = "".join(worker.stream(messages, max_tokens=40, temperature=0.0, steering=steering))
    finally:
        worker.close()
    assert steered == "The monthly fee is 12 euro [1]."
