"""The sentence-marker steering with the real small GGUF, in process and through the worker
process: asked to repeat a Chinese sentence, the model ends it with "。" and no marker;
steered, it writes a marker where the full stop would have gone."""

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
