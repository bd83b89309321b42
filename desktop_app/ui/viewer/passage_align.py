"""Find a passage extracted by pypdf inside the text PDFium gives for the same page. Qt-free.

The page viewer highlights a cited passage with rectangles that PDFium computes from
character indexes of *its* text (``QPdfDocument.getAllText``). The passage comes from
pypdf, whose text of the same page differs in small ways: tabs or no spaces between
words, ``\\r\\n`` against ``\\n``, ligatures (``ﬁ`` against ``fi``), hyphens at line ends,
full-width punctuation, a dropped or repeated character here and there.

Both sides are normalised to their letters and digits (NFKC, case-folded, everything
else dropped), with a map back to the original indexes. An exact find on the normalised
strings answers most cases; otherwise k-gram anchors vote for the best diagonal (page
offset minus passage offset) and the anchors near it give the matching segments. Cost is
linear in the two lengths (a 4,000-character page takes a few milliseconds).
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass

Span = tuple[int, int]

# Segments of the page closer than this (in normalised characters) are joined into one.
_JOIN_GAP = 48
# Below this share of the passage matched, the passage is taken as not found.
_MIN_COVERAGE = 0.35
# A k-gram that occurs more often than this on the page is too common to anchor on.
_MAX_OCCURRENCES = 4


@dataclass(frozen=True)
class Normalised:
    """``text`` holds only case-folded letters and digits; ``origin[i]`` is the index in
    the original string of the character that produced ``text[i]``."""

    text: str
    origin: tuple[int, ...]
    raw: str = ""

    @property
    def length(self) -> int:
        return len(self.raw)


def normalise(text: str) -> Normalised:
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii():
            if char.isalnum():
                chars.append(char.lower())
                origin.append(index)
            continue
        for part in unicodedata.normalize("NFKC", char).casefold():
            if part.isalnum():
                chars.append(part)
                origin.append(index)
    return Normalised("".join(chars), tuple(origin), text)


@dataclass(frozen=True)
class Anchor:
    """``passage[q:q+length]`` equals ``page[p:p+length]`` (normalised offsets)."""

    q: int
    p: int
    length: int


@dataclass(frozen=True)
class Alignment:
    """Where a passage sits in a page text.

    ``segments`` are ``(start, end)`` character offsets into the *original* page text, in
    page order; ``coverage`` is the share of the passage's letters and digits matched.
    """

    segments: tuple[Span, ...]
    coverage: float
    exact: bool
    anchors: tuple[Anchor, ...]
    page: Normalised
    passage: Normalised

    @property
    def span(self) -> Span:
        return self.segments[0][0], self.segments[-1][1]

    def map_span(self, start: int, end: int) -> list[Span]:
        """Map ``passage[start:end]`` (original passage offsets) to page offsets, following
        the anchors: used to highlight the sentences of a passage that support a claim."""
        qs = self.passage.origin
        q0 = bisect.bisect_left(qs, start)
        q1 = bisect.bisect_left(qs, end)
        pieces: list[tuple[int, int]] = []
        for anchor in self.anchors:
            lo = max(q0, anchor.q)
            hi = min(q1, anchor.q + anchor.length)
            if lo < hi:
                pieces.append((anchor.p + lo - anchor.q, anchor.p + hi - anchor.q))
        return _to_page_segments(pieces, self.page)


def align_passage(page_text: str, passage: str, hint: int | None = None) -> Alignment | None:
    """Locate ``passage`` in ``page_text``; ``hint`` is where pypdf said the passage starts
    in its own page text (used to pick among repeated occurrences). None if not found."""
    page = normalise(page_text)
    quote = normalise(passage)
    if not quote.text or not page.text:
        return None
    expected = None
    if hint is not None and page_text:
        expected = _expected_norm_offset(page, hint)
    exact = _exact(page, quote, expected)
    if exact is not None:
        return exact
    return _by_anchors(page, quote, expected)


def _expected_norm_offset(page: Normalised, hint: int) -> int:
    return bisect.bisect_left(page.origin, hint)


def _exact(page: Normalised, quote: Normalised, expected: int | None) -> Alignment | None:
    found = page.text.find(quote.text)
    if found < 0:
        return None
    if expected is not None:
        best = found
        while found >= 0:
            if abs(found - expected) < abs(best - expected):
                best = found
            found = page.text.find(quote.text, found + 1)
        found = best
    anchor = Anchor(0, found, len(quote.text))
    segments = _to_page_segments([(found, found + len(quote.text))], page)
    return Alignment(tuple(segments), 1.0, True, (anchor,), page, quote)


def _kgram_size(length: int) -> int:
    return max(3, min(8, length // 4))


def _by_anchors(page: Normalised, quote: Normalised, expected: int | None) -> Alignment | None:
    k = _kgram_size(len(quote.text))
    if len(quote.text) < k or len(page.text) < k:
        return None
    positions: dict[str, list[int]] = {}
    text = page.text
    for p in range(len(text) - k + 1):
        positions.setdefault(text[p : p + k], []).append(p)
    hits: list[tuple[int, int]] = []  # (diagonal, q)
    qtext = quote.text
    for q in range(len(qtext) - k + 1):
        found = positions.get(qtext[q : q + k])
        if found is None or len(found) > _MAX_OCCURRENCES:
            continue
        for p in found:
            hits.append((p - q, q))
    if not hits:
        return None
    diagonal = _best_diagonal(hits, len(qtext), expected)
    band = max(12, len(qtext) // 8)
    chosen = sorted((q, q + d) for d, q in hits if abs(d - diagonal) <= band)
    anchors = _merge_anchors(chosen, k)
    matched = _covered(anchors)
    coverage = matched / len(qtext)
    if coverage < _MIN_COVERAGE:
        return None
    segments = _to_page_segments([(a.p, a.p + a.length) for a in anchors], page)
    return Alignment(tuple(segments), coverage, False, tuple(anchors), page, quote)


def _best_diagonal(hits: list[tuple[int, int]], quote_len: int, expected: int | None) -> int:
    """The diagonal with the most k-gram hits within a small window around it."""
    hits_sorted = sorted(hits)
    window = max(8, quote_len // 10)
    best_d, best_score = hits_sorted[0][0], -1.0
    lo = 0
    for hi in range(len(hits_sorted)):
        d_hi = hits_sorted[hi][0]
        while hits_sorted[lo][0] < d_hi - window:
            lo += 1
        score = float(hi - lo + 1)
        if expected is not None:
            # Among equally good diagonals prefer the one nearest pypdf's own offset.
            score -= abs(d_hi - expected) / (10.0 * (quote_len + 1))
        if score > best_score:
            best_score, best_d = score, hits_sorted[(lo + hi) // 2][0]
    return best_d


def _merge_anchors(pairs: list[tuple[int, int]], k: int) -> list[Anchor]:
    """Turn k-gram hits (q, p), sorted by q, into maximal runs on one diagonal, keeping
    the runs monotonic in both strings."""
    anchors: list[Anchor] = []
    last_q_end = -1
    last_p_end = -1
    for q, p in pairs:
        if anchors:
            prev = anchors[-1]
            if p - q == prev.p - prev.q and q <= prev.q + prev.length:
                end = max(prev.q + prev.length, q + k)
                anchors[-1] = Anchor(prev.q, prev.p, end - prev.q)
                last_q_end, last_p_end = end, prev.p + end - prev.q
                continue
        if q < last_q_end or p < last_p_end:
            # Overlaps or goes backwards relative to the previous run: trim or skip.
            shift = max(last_q_end - q, last_p_end - p, 0)
            if shift >= k:
                continue
            q, p, length = q + shift, p + shift, k - shift
        else:
            length = k
        anchors.append(Anchor(q, p, length))
        last_q_end, last_p_end = q + length, p + length
    return anchors


def _covered(anchors: list[Anchor]) -> int:
    return sum(a.length for a in anchors)


def _to_page_segments(pieces: list[tuple[int, int]], page: Normalised) -> list[Span]:
    """Join normalised page ranges closer than ``_JOIN_GAP`` and map them back to offsets
    into the original page text (end exclusive)."""
    if not pieces:
        return []
    pieces = sorted(pieces)
    joined: list[list[int]] = [list(pieces[0])]
    for start, end in pieces[1:]:
        if start - joined[-1][1] <= _JOIN_GAP:
            joined[-1][1] = max(joined[-1][1], end)
        else:
            joined.append([start, end])
    return [_widen(page, start, end) for start, end in joined if end > start]


def _widen(page: Normalised, start: int, end: int) -> Span:
    """Original offsets of a normalised range, taking in the punctuation that closes it
    (the full stop after the last word), which normalisation dropped."""
    first = page.origin[start]
    last = page.origin[end - 1] + 1
    limit = page.origin[end] if end < len(page.origin) else page.length
    while last < limit and last - page.origin[end - 1] <= 3 and not page.raw[last].isspace():
        last += 1
    return first, last
