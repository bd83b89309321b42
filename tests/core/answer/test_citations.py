"""Citation markers: grammar, streaming in every split, R2R compatibility, SourceMap styles,
resolution into events, and the GBNF grammar helper."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

from desktop_app.core.answer import citations
from desktop_app.core.answer.citations import (
    CitationResolver,
    CitationTracker,
    SourceMap,
    citation_grammar,
    extract_citation_spans,
    extract_citations,
    find_markers,
    find_new_citation_spans,
    marker_ids,
)
from desktop_app.core.text.markers import MAX_MARKER_CHARS
from desktop_app.core.types import CitationStyle, Passage
from tests.conftest import require

# --------------------------------------------------------------------------- helpers


def make_passages(n: int, prefix: str = "0f1e2d3c4b5a6978") -> list[Passage]:
    return [
        Passage(
            chunk_id=f"{prefix}:{i + 1}:0",
            doc_id=prefix * 4,
            doc_path=f"/docs/report-{i + 1}.pdf",
            doc_title=f"Report {i + 1}",
            page=i + 1,
            page_label=f"p{i + 1}",
            section=f"Section {i + 1}",
            char_start=10 * i,
            char_end=10 * i + 50,
            score=1.0 / (i + 1),
            text=f"Passage number {i + 1}.",
        )
        for i in range(n)
    ]


def stream(
    text: str, cuts: list[int], style: str | None = None
) -> list[tuple[str, tuple[int, int]]]:
    """Feed ``text`` split at ``cuts``; return everything the tracker reported."""
    tracker = CitationTracker(style)
    found: list[tuple[str, tuple[int, int]]] = []
    bounds = [0, *sorted(cuts), len(text)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        found += tracker.feed(text[a:b])
    assert tracker.text == text
    return found


def all_splits(text: str) -> list[list[int]]:
    """No split, every single split, every pair of splits (short texts), one char at a time."""
    n = len(text)
    splits = [[], list(range(1, n))]
    splits += [[i] for i in range(1, n)]
    if n <= 40:
        splits += [[i, j] for i in range(1, n) for j in range(i + 1, n)]
    return splits


_ORACLE = re.compile(f"[\\[【［][^\\[\\]【】［］]{{0,{MAX_MARKER_CHARS - 2}}}[\\]】］]")


def oracle(text: str, style: str | None = None) -> list[tuple[str, tuple[int, int]]]:
    """Whole-text reference: one regex pass, then the marker grammar on each candidate."""
    return [
        (cid, (m.start(), m.end()))
        for m in _ORACLE.finditer(text)
        for cid in marker_ids(m.group(), style)
    ]


# --------------------------------------------------------------------------- grammar

GRAMMAR_CASES: list[tuple[str, str | None, list[tuple[str, tuple[int, int]]]]] = [
    ("[1]", None, [("1", (0, 3))]),
    ("Rates rose [2].", "label", [("2", (11, 14))]),
    ("A [1, 3] b", None, [("1", (2, 8)), ("3", (2, 8))]),
    ("A [1,3] b", None, [("1", (2, 7)), ("3", (2, 7))]),
    ("x[1][2]", None, [("1", (1, 4)), ("2", (4, 7))]),
    ("[1-3]", "label", [("1", (0, 5)), ("2", (0, 5)), ("3", (0, 5))]),
    ("[2 – 4]", "label", [("2", (0, 7)), ("3", (0, 7)), ("4", (0, 7))]),
    ("收入增长【1】。", None, [("1", (4, 7))]),
    ("见［2］", None, [("2", (1, 4))]),
    ("见【1，3】", None, [("1", (1, 6)), ("3", (1, 6))]),
    ("见【1、２】", None, [("1", (1, 6)), ("2", (1, 6))]),
    ("【１】", "label", [("1", (0, 3))]),
    ("[01]", "label", [("1", (0, 4))]),
    ("[abc1234]", None, [("abc1234", (0, 9))]),
    ("[abcd1234]", "shortid", [("abcd1234", (0, 10))]),
    ("[abc1234, def5678]", "shortid", [("abc1234", (0, 18)), ("def5678", (0, 18))]),
    ("[2023]", "label", [("2023", (0, 6))]),  # a marker; the resolver flags it invalid
    ("[1](https://x.org)", None, [("1", (0, 3))]),
    ("[1, 1]", None, [("1", (0, 6))]),  # an id appears once per marker
    ("[1-3, 2]", None, [("1", (0, 8)), ("2", (0, 8)), ("3", (0, 8))]),
    ("[3-1]", None, [("3", (0, 5)), ("1", (0, 5))]),  # descending: the endpoints only
    ("[1-50]", None, [("1", (0, 6)), ("50", (0, 6))]),  # more than 20 labels: endpoints
    ("[1-20]", None, [(str(n), (0, 6)) for n in range(1, 21)]),
    ("[[1]", None, [("1", (1, 4))]),
    ("[1]]", None, [("1", (0, 3))]),
    ("end [7]", None, [("7", (4, 7))]),
    ("[1]\n[2]", None, [("1", (0, 3)), ("2", (4, 7))]),
    ("[1】", None, [("1", (0, 3))]),  # any opener with any closer
]

NOT_MARKERS = [
    "[abc123]",
    "[abcdefghi]",
    "[abc-1234]",
    "[ abc1234]",
    "[abc1234 ]",
    "[ 1]",
    "[]",
    "[a]",
    "[1,]",
    "[,1]",
    "[1,,2]",
    "[12345]",
    "[1 3]",
    "[text](https://x.org)",
    "[1.5]",
    "1]",
    "[1",
    "[" + "1, " * 30 + "1]",  # longer than MAX_MARKER_CHARS
]


@pytest.mark.parametrize("text,style,expected", GRAMMAR_CASES)
def test_grammar_case_in_every_split(text: str, style: str | None, expected: list) -> None:
    assert find_markers(text, style) == expected
    for cuts in all_splits(text):
        assert stream(text, cuts, style) == expected, cuts
    for cid, (start, end) in expected:
        marker = text[start:end]
        assert marker[0] in "[【［" and marker[-1] in "]】］"
        assert cid in marker_ids(marker, style)


@pytest.mark.parametrize("text", NOT_MARKERS)
def test_not_markers_in_every_split(text: str) -> None:
    for style in (None, "label", "shortid"):
        assert find_markers(text, style) == []
        for cuts in all_splits(text):
            assert stream(text, cuts, style) == []


def test_style_limits_what_counts_as_a_marker() -> None:
    text = "See [Appendix] and [1] and [abc1234]."
    assert [cid for cid, _ in find_markers(text, "label")] == ["1"]
    assert [cid for cid, _ in find_markers(text, "shortid")] == ["Appendix", "abc1234"]
    assert [cid for cid, _ in find_markers(text)] == ["Appendix", "1", "abc1234"]
    assert find_markers("[1-3]", "shortid") == []


def test_markers_at_start_and_end_and_duplicates() -> None:
    text = "[1] The same source again [1] and at the end [1]"
    spans = [span for _, span in find_markers(text)]
    assert spans == [(0, 3), (26, 29), (45, 48)]
    assert [text[a:b] for a, b in spans] == ["[1]"] * 3
    for cuts in all_splits(text):
        found = stream(text, cuts)
        assert found == [("1", s) for s in spans]


def test_half_written_marker_is_reported_only_when_it_closes() -> None:
    tracker = CitationTracker()
    assert tracker.feed("Growth was 5% [") == []
    assert tracker.feed("1") == []
    assert tracker.feed(", 3") == []
    assert tracker.feed("] next") == [("1", (14, 20)), ("3", (14, 20))]
    assert tracker.feed(" more") == []
    assert tracker.finish() == {"1": [(14, 20)], "3": [(14, 20)]}


def test_unclosed_bracket_is_abandoned_after_the_bound() -> None:
    tracker = CitationTracker()
    tracker.feed("[")
    for _ in range(MAX_MARKER_CHARS):
        assert tracker.feed("x") == []
    assert tracker.feed("]") == []
    assert tracker.feed(" then [2]") == [("2", (MAX_MARKER_CHARS + 8, MAX_MARKER_CHARS + 11))]


def test_finish_drops_the_unclosed_tail_and_stops_feeding() -> None:
    tracker = CitationTracker()
    tracker.feed("ok [1] and [2")
    assert tracker.finish() == {"1": [(3, 6)]}
    with pytest.raises(RuntimeError):
        tracker.feed("]")
    tracker.reset()
    assert tracker.feed("[2]") == [("2", (0, 3))]
    assert tracker.text == "[2]"


ALPHABET = list("[[[]]]【】［］1234567890123abcdXYZ ,，、-～.文\n") + [
    "[1]",
    "[12]",
    "[abc1234]",
    "[1, 2]",
]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 90)))


def test_random_texts_streamed_in_random_splits_match_whole_text_extraction() -> None:
    rng = random.Random(20240611)
    for _ in range(1500):
        text = random_text(rng)
        style = rng.choice([None, "label", "shortid"])
        expected = oracle(text, style)
        cuts = (
            sorted(rng.sample(range(1, len(text)), rng.randint(0, len(text) - 1)))
            if len(text) > 1
            else []
        )
        found = stream(text, cuts, style)
        assert found == expected, (text, cuts, style)
        assert len(set(found)) == len(found)


def test_random_r2r_texts_match_r2r_extraction() -> None:
    """On ASCII single-id brackets the shortid tracker finds exactly what R2R finds."""
    rng = random.Random(7)
    alphabet = list("[]abcXYZ0123456789 -") + ["[abc1234]", "[abcd1234]", "[abc123]"]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        r2r = extract_citation_spans(text)
        ours: dict[str, list[tuple[int, int]]] = {}
        for cid, span in stream(text, list(range(1, len(text))), "shortid"):
            ours.setdefault(cid, []).append(span)
        assert ours == r2r, text


# --------------------------------------------------------------------------- R2R API


def test_r2r_extract_citations_keeps_order_and_duplicates() -> None:
    text = "A [abc1234] b [def5678] c [abc1234] d [abcd1234]"
    assert extract_citations(text) == ["abc1234", "def5678", "abc1234", "abcd1234"]
    assert extract_citations("") == []


@pytest.mark.parametrize(
    "text", ["[abc123]", "[abcdefghi]", "[abc-1234]", "[ abc1234]", "[1]", "【abc1234】"]
)
def test_r2r_negative_cases(text: str) -> None:
    assert extract_citations(text) == []
    assert extract_citation_spans(text) == {}


def test_r2r_spans_start_at_bracket_and_end_after_it() -> None:
    text = "x [abc1234] y [abc1234]"
    assert extract_citation_spans(text) == {"abc1234": [(2, 11), (14, 23)]}
    assert text[2:11] == "[abc1234]"


def test_r2r_find_new_citation_spans_on_a_growing_buffer() -> None:
    tracker = CitationTracker()
    assert find_new_citation_spans("a [abc12", tracker) == {}
    assert find_new_citation_spans("a [abc1234] b", tracker) == {"abc1234": [(2, 11)]}
    assert find_new_citation_spans("a [abc1234] b [abc1234]", tracker) == {"abc1234": [(14, 23)]}
    assert find_new_citation_spans("a [abc1234] b [abc1234]", tracker) == {}
    assert tracker.get_all_spans() == {"abc1234": [(2, 11), (14, 23)]}
    assert tracker.is_new_citation("abc1234") is True
    assert tracker.is_new_citation("abc1234") is False
    assert tracker.is_new_span("def5678", (30, 39)) is True
    assert tracker.is_new_span("def5678", (30, 39)) is False
    assert tracker.is_new_span("", (1, 2)) is False
    assert tracker.is_new_citation("") is False and tracker.is_new_citation(None) is False  # as R2R's
    tracker.reset()
    assert tracker.get_all_spans() == {}
    assert tracker.is_new_citation("abc1234") is True


def test_feed_does_not_consume_is_new_citation() -> None:
    tracker = CitationTracker()
    assert tracker.feed("[abc1234]") == [("abc1234", (0, 9))]
    assert tracker.is_new_citation("abc1234") is True


# --------------------------------------------------------------------------- SourceMap


def test_label_source_map() -> None:
    passages = make_passages(3)
    sources = SourceMap.build(passages)
    assert sources.labels() == ["1", "2", "3"]
    assert len(sources) == 3 and "2" in sources and "4" not in sources and 2 not in sources
    assert sources.resolve("2") == passages[1]
    assert sources.resolve("02") is None
    assert sources.marker("2") == "[2]"
    payload = sources.payload("3")
    assert payload is not None
    assert (payload.id, payload.chunk_id, payload.doc_path, payload.page, payload.page_label) == (
        "3",
        passages[2].chunk_id,
        "/docs/report-3.pdf",
        3,
        "p3",
    )
    assert (payload.section, payload.text, payload.char_start, payload.char_end) == (
        "Section 3",
        "Passage number 3.",
        20,
        70,
    )
    assert sources.payload("9") is None


def test_repeated_passage_keeps_its_first_label() -> None:
    passages = make_passages(3)
    sources = SourceMap.build([passages[0], passages[1], passages[0], passages[2]])
    assert sources.labels() == ["1", "2", "3"]
    assert [sources.resolve(x) for x in sources.labels()] == passages


def test_shortid_source_map_exact_and_case_insensitive() -> None:
    passages = make_passages(5)
    sources = SourceMap.build(passages, CitationStyle.SHORTID)
    labels = sources.labels()
    assert all(re.fullmatch("[0-9a-z]{7}", label) for label in labels)
    assert len(set(labels)) == 5
    assert SourceMap.build(passages, "shortid").labels() == labels  # deterministic
    assert sources.resolve(labels[2]) == passages[2]
    assert sources.resolve(labels[2].upper()) == passages[2]
    assert sources.resolve(labels[2][:6]) is None  # never a prefix match
    assert sources.marker(labels[0]) == f"[{labels[0]}]"
    assert marker_ids(sources.marker(labels[0]), "shortid") == [labels[0]]


# Two chunk ids whose real 7-character digests collide (found by brute force offline).
COLLIDING = ("0f1e2d3c4b5a6978:5052:3", "0f1e2d3c4b5a6978:12752:9")


def _passage(chunk_id: str) -> Passage:
    return Passage(chunk_id, "d", "/x.pdf", "X", 1, "1", "", 0, 1, 0.5, "t")


def test_shortid_collision_lengthens_to_eight_for_the_colliding_sources() -> None:
    a, b = COLLIDING
    other = "0f1e2d3c4b5a6978:1:0"
    sources = SourceMap.build([_passage(a), _passage(other), _passage(b)], "shortid")
    la, lo, lb = sources.labels()
    assert (len(la), len(lo), len(lb)) == (8, 7, 8)
    assert la[:7] == lb[:7] and la != lb
    assert sources.resolve(la).chunk_id == a and sources.resolve(lb).chunk_id == b
    assert sources.resolve(la[:7]) is None  # the shared prefix names no source
    for label in sources.labels():
        assert not any(o != label and o.startswith(label) for o in sources.labels())
    # Without the collision both keep 7 characters.
    assert [
        len(x) for x in SourceMap.build([_passage(a), _passage(other)], "shortid").labels()
    ] == [7, 7]


def test_shortid_eight_character_collision_is_rederived(monkeypatch: pytest.MonkeyPatch) -> None:
    real = citations._digest

    def colliding(chunk_id: str, salt: int = 0) -> str:
        return "zzzzzzzz" if salt == 0 and chunk_id.startswith("c") else real(chunk_id, salt)

    monkeypatch.setattr(citations, "_digest", colliding)
    sources = SourceMap.build(
        [_passage("c1"), _passage("c2"), _passage("c3"), _passage("d")], "shortid"
    )
    labels = sources.labels()
    assert len(set(labels)) == 4
    assert [len(x) for x in labels] == [8, 8, 8, 7]
    assert [sources.resolve(x).chunk_id for x in labels] == ["c1", "c2", "c3", "d"]
    assert not any(x != y and x.startswith(y) for x in labels for y in labels)


# --------------------------------------------------------------------------- resolution


def test_resolver_first_report_carries_payload_later_ones_do_not() -> None:
    sources = SourceMap.build(make_passages(3))
    resolver = CitationResolver(sources)
    answer = ["Revenue grew [1", "]. Costs fell [2][1]. Margins", " held [9]."]
    events = [e for delta in answer for e in resolver.feed(delta)]
    text = "".join(answer)
    assert [(e.id, e.is_new, e.valid, e.source is not None) for e in events] == [
        ("1", True, True, True),
        ("2", True, True, True),
        ("1", False, True, False),
        ("9", True, False, False),
    ]
    assert events[0].source is not None and events[0].source.doc_path == "/docs/report-1.pdf"
    for e in events:
        assert text[e.span[0] : e.span[1]] == f"[{e.id}]"
    assert resolver.hallucinated == ("9",)
    done = resolver.finished()
    assert done.text == text
    assert done.citations == {"1": [(13, 16), (32, 35)], "2": [(29, 32)], "9": [(50, 53)]}
    assert done.hallucinated == ("9",)
    assert done.to_json()["citations"]["1"] == [[13, 16], [32, 35]]


def test_resolver_shortid_canonical_ids_and_hallucinations() -> None:
    sources = SourceMap.build(make_passages(2), "shortid")
    first, second = sources.labels()
    resolver = CitationResolver(sources)
    text = f"A [{first.upper()}] b [{second}, zzzzzzz] c [1] d [zzzzzzz]"
    events = resolver.feed(text)
    assert [(e.id, e.valid, e.is_new) for e in events] == [
        (first, True, True),
        (second, True, True),
        ("zzzzzzz", False, True),
        ("zzzzzzz", False, False),
    ]
    assert resolver.hallucinated == ("zzzzzzz",)  # "[1]" is not a marker in shortid style
    assert resolver.finished().citations[first] == [(2, 11)]


def test_resolver_finished_equals_union_of_streamed_in_random_splits() -> None:
    rng = random.Random(99)
    sources = SourceMap.build(make_passages(4))
    for _ in range(300):
        text = random_text(rng)
        resolver = CitationResolver(sources)
        streamed: dict[str, list[tuple[int, int]]] = {}
        payloads: dict[str, int] = {}
        pos = 0
        while pos < len(text):
            step = rng.randint(1, 6)
            for e in resolver.feed(text[pos : pos + step]):
                streamed.setdefault(e.id, []).append(e.span)
                payloads[e.id] = payloads.get(e.id, 0) + (e.source is not None)
                assert e.valid == (e.id in sources)
            pos += step
        done = resolver.finished()
        assert done.text == text
        assert done.citations == {k: sorted(v) for k, v in streamed.items()}
        assert all(payloads[k] == (1 if k in sources else 0) for k in streamed)
        assert set(done.hallucinated) == {k for k in streamed if k not in sources}


def test_resolver_rejects_spans_that_are_not_markers_of_the_text() -> None:
    resolver = CitationResolver(SourceMap.build(make_passages(1)))
    resolver.resolve([("1", (0, 3))])
    with pytest.raises(ValueError):
        resolver.finished("no marker here")
    assert resolver.finished("[1] fine").citations == {"1": [(0, 3)]}


# --------------------------------------------------------------------------- GBNF


def _gbnf_to_regex(grammar: str) -> re.Pattern[str]:
    """Translate our (non-recursive) GBNF into a Python regex, to test what it accepts."""
    rules = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines() if " ::= " in line)
    token = re.compile(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[A-Za-z][A-Za-z0-9-]*|[()|*+?]|\s+')

    def convert(name: str, depth: int = 0) -> str:
        assert depth < 10, "grammar is recursive"
        out = []
        for tok in token.findall(rules[name]):
            if tok.isspace():
                continue
            if tok.startswith('"'):
                out.append(
                    re.escape(
                        tok[1:-1].encode().decode("unicode_escape").encode("latin-1").decode()
                    )
                )
            elif tok.startswith("["):
                out.append(tok)
            elif tok[0].isalpha():
                out.append(f"(?:{convert(tok, depth + 1)})")
            else:
                out.append("(?:" if tok == "(" else tok)
        return "".join(out)

    return re.compile(convert("root"), re.DOTALL)


def test_grammar_structure_and_labels() -> None:
    grammar = citation_grammar(["1", "2", "3"])
    lines = grammar.strip().splitlines()
    assert lines[0].startswith("root ::= ")
    defined = [line.split(" ::= ")[0] for line in lines]
    assert len(defined) == len(set(defined))
    bodies = [
        re.sub(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]', " ", line.split(" ::= ")[1])
        for line in lines
    ]
    used = set(re.findall(r"[A-Za-z][A-Za-z0-9-]*", " ".join(bodies)))
    assert used == set(defined) - {"root"}  # every rule is defined and used
    assert 'label ::= "1" | "2" | "3"' in lines
    assert "\\x5B" in grammar and "\\u3010" in grammar and "\\uFF3B" in grammar
    for line in lines:
        body = re.sub(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]', "", line)
        assert body.count("(") == body.count(")"), line
    with pytest.raises(ValueError):
        citation_grammar([])


def test_free_grammar_accepts_prose_and_only_valid_markers() -> None:
    accepts = _gbnf_to_regex(citation_grammar(["1", "2", "3"])).fullmatch
    assert accepts("Revenue rose 5.2% in 2023 [1]. Costs fell [2, 3]; see notes]")
    assert accepts("收入增长了百分之五[1]。成本下降[2,3]。\n\n- item (a)")
    assert accepts("")
    assert not accepts("Revenue rose [4].")  # hallucinated label
    assert not accepts("Revenue rose [1-3].")
    assert not accepts("收入增长【1】。")  # only the ASCII marker form may be produced
    assert not accepts("see [note]")


def test_every_sentence_grammar_forces_a_marker_per_sentence() -> None:
    grammar = citation_grammar(
        ["abc1234", "def5678"], every_sentence=True, refusals=["The documents do not say."]
    )
    accepts = _gbnf_to_regex(grammar).fullmatch
    assert accepts("Revenue was 3.5 billion [abc1234]. Costs fell.[def5678]\n")
    assert accepts("收入增长[abc1234]。成本下降[abc1234, def5678]。")
    assert accepts("The documents do not say.")
    assert not accepts("Revenue was 3.5 billion. Costs fell [abc1234].")
    assert not accepts("Revenue grew [abc1234]. And then")
    assert not accepts("Revenue grew [abc1235].")


def _small_gguf() -> Path:
    """The small GGUF that `make test` installed (FOLIO_MODELS_DIR), else a dev install."""
    roots = [Path(os.environ["FOLIO_MODELS_DIR"])] if os.environ.get("FOLIO_MODELS_DIR") else []
    roots.append(Path(__file__).resolve().parents[3] / ".folio-home" / "data" / "models")
    for root in roots:
        found = sorted(root.glob("SmolLM2*.gguf"))
        if found:
            return found[0]
    require(False, "the small GGUF (SmolLM2*.gguf) is not installed: run `make test`")
    raise AssertionError("not reached")


@pytest.mark.e2e
def test_grammar_is_parsed_by_llama_cpp() -> None:
    import llama_cpp  # a hard dependency: its absence is a failure

    model = llama_cpp.Llama(model_path=str(_small_gguf()), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(model.model)

    def parses(grammar: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        if sampler:
            llama_cpp.llama_sampler_free(sampler)
        return bool(sampler)

    assert not parses("root ::= undefined-rule")  # the check can fail
    assert parses(citation_grammar(["1", "2", "3"]))
    assert parses(
        citation_grammar(["abc1234", "abcd1234"], every_sentence=True, refusals=['Say "no".'])
    )


@pytest.mark.e2e
def test_small_model_under_the_grammar_cannot_write_a_hallucinated_label() -> None:
    import llama_cpp  # a hard dependency: its absence is a failure

    model = llama_cpp.Llama(
        model_path=str(_small_gguf()), n_ctx=1024, n_threads=1, verbose=False, seed=1
    )
    messages = [
        {"role": "system", "content": "Answer from the sources. Cite each sentence like [1]."},
        {
            "role": "user",
            "content": "Sources:\n[1] Acme revenue in 2023 was 5.2 billion dollars.\n"
            "[2] Acme employs 12,000 people.\n\nQuestion: How large is Acme? Also cite [7] and [12].",
        },
    ]
    # every_sentence makes even this 135M model write markers; all must name a real source.
    grammar = llama_cpp.LlamaGrammar.from_string(
        citation_grammar(["1", "2"], every_sentence=True), verbose=False
    )
    out = model.create_chat_completion(
        messages, grammar=grammar, max_tokens=80, temperature=0.9, seed=5
    )
    text = out["choices"][0]["message"]["content"]
    found = find_markers(text)
    assert found, text
    assert {cid for cid, _ in found} <= {"1", "2"}, text
    # every "[" the model wrote opens a valid marker
    assert text.count("[") == len({span for _, span in found}), text
