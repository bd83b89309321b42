"""A made-up language, "Toy", in one lexicon file: what adding French or Spanish takes.
test_lang.py drops it into the lexicon package as toy.py, and nothing else."""

from __future__ import annotations

from desktop_app.core.text.lang.lexicon import Lexicon

LEXICON = Lexicon(
    code="toy",
    script="latin",
    letters="ŧ",
    name="Toy",
    no_answer="Ko dokuma nai tir mave.",
    no_basis="Ko dokuma nai tir sul mave kana.",
    function_words=frozenset("ko sul mave tir dan ŧen".split()),
    stopwords=frozenset("ko sul dan".split()),
    abbreviations=frozenset({"abr"}),  # "abr. Pelo" does not end a sentence
    negations=("nai",),
    modals={"must": ("devan",)},
    conditions=("sefi",),
    consequences=("tan",),
)
