"""The real all-MiniLM-L6-v2 int8 embedder (the "minilm" choice) on English sentences.

Uses the models installed under FOLIO_HOME, else the repo's development home
``.folio-home``; when neither holds the embedder it skips with the install command, and
fails under `make test` and in CI.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from desktop_app.core import paths
from desktop_app.core.errors import ModelMissingError
from desktop_app.core.models.catalog import open_embedder
from desktop_app.core.models.embed import OnnxEmbedder
from tests.conftest import require

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    homes = [os.environ.get("FOLIO_HOME", ""), str(paths.repo_root() / ".folio-home")]
    for home in filter(None, homes):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("FOLIO_HOME", home)
            try:
                return open_embedder("minilm")
            except ModelMissingError:
                continue
    require(False, "the embedder is not installed: run `folio models install --small`")
    raise AssertionError("not reached")


def _cos(embedder: OnnxEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return float(va @ vb)


def test_vectors_are_384_dim_unit_float32(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["The HTTP/1.1 protocol.", "Tax forms for nonresident aliens.", ""])
    assert embedder.dim == 384 and vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.model_id == "all-minilm-l6-v2-int8:8199be6f699a"


@pytest.mark.parametrize(
    ("query", "similar", "unrelated"),
    [
        (
            "How do I renew my passport?",
            "What is the process for getting a new passport?",
            "The recipe needs two cups of flour and an egg.",
        ),
        (
            "The server returned a 404 Not Found error.",
            "The requested page could not be found on the web server.",
            "Photosynthesis converts sunlight into chemical energy.",
        ),
        (
            "Who must file a nonresident tax return?",
            "Nonresident aliens with US income have to file Form 1040-NR.",
            "The football match ended in a draw after extra time.",
        ),
    ],
)
def test_similar_sentences_score_higher_than_unrelated(
    embedder: OnnxEmbedder, query: str, similar: str, unrelated: str
) -> None:
    assert _cos(embedder, query, similar) > _cos(embedder, query, unrelated) + 0.2


def test_matches_the_published_model_on_a_known_pair(embedder: OnnxEmbedder) -> None:
    # sentence-transformers all-MiniLM-L6-v2 (float32) gives 0.755 for this pair
    score = _cos(embedder, "A man is eating food.", "A man is eating a piece of bread.")
    assert 0.70 < score < 0.80


def test_batching_does_not_change_vectors(embedder: OnnxEmbedder) -> None:
    texts = [f"Sentence number {i} talks about {'long ' * i}documents." for i in range(40)]
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-4)


def test_text_past_256_tokens_is_cut(embedder: OnnxEmbedder) -> None:
    head = " ".join(f"word{i}" for i in range(400))
    assert embedder.count_tokens(head) > 256
    tail_a = head + " about cooking pasta and tomato sauce"
    tail_b = head + " about the rules of ice hockey"
    va, vb = embedder.embed([tail_a, tail_b])
    np.testing.assert_allclose(va, vb, atol=1e-6)  # the differing tails were cut off
