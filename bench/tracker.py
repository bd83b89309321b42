"""Streaming citation tracking: Folio's incremental tracker vs an R2R-style rescan.

Feeds answers of the lengths Folio writes (320 and 1,024 tokens: ~1,300 and ~4,100
characters, one marker per ~40 characters as in a cited answer) and an 8,000-character one
with 200 markers, in ~4-character deltas (as a model streams tokens), to

- Folio: ``CitationTracker.feed(delta)`` (scans the delta plus a bounded unclosed tail);
- R2R: ``buffer += delta; find_new_citation_spans(buffer, tracker)`` (re-runs the regex
  over the whole buffer and filters every span ever seen, on every delta).

Two answers: short-id markers ``[abc1234]`` (R2R's own regex and functions), and label
markers ``[1]``, ``[1, 3]``, ``【2】`` (the rescan re-runs Folio's whole-text extraction).
Prints the median of the repeats and Folio's cost as a share of the rescan's.

    .venv/bin/python bench/tracker.py [--repeats 7] [--chars 8000] [--markers 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.core.answer.citations import (  # noqa: E402
    CitationTracker,
    SourceMap,
    find_markers,
    find_new_citation_spans,
)
from desktop_app.core.types import Passage  # noqa: E402

WORDS = (
    "the company reported revenue growth of 5.2 percent in fiscal 2023 while operating "
    "costs declined and margins improved across segments 收入 增长 成本 下降 利润"
).split()


def make_answer(chars: int, markers: list[str], rng: random.Random) -> str:
    """About ``chars`` characters of prose, each of ``markers`` after a stretch of words."""
    every = max(1, (chars - sum(len(m) + 2 for m in markers)) // len(markers))
    parts: list[str] = []
    for marker in markers:
        since = 0
        while since + 3 < every:  # a word overshoots by about 3 characters
            word = rng.choice(WORDS) + " "
            parts.append(word)
            since += len(word)
        parts.append(marker + ". ")
    return "".join(parts)


def split_deltas(text: str, rng: random.Random) -> list[str]:
    deltas, pos = [], 0
    while pos < len(text):
        step = rng.randint(2, 6)  # ~4 characters, like a token
        deltas.append(text[pos : pos + step])
        pos += step
    return deltas


def folio(deltas: list[str], style: str) -> dict[str, list[tuple[int, int]]]:
    tracker = CitationTracker(style)
    for delta in deltas:
        tracker.feed(delta)
    return tracker.finish()


def r2r_rescan(deltas: list[str], style: str) -> dict[str, list[tuple[int, int]]]:
    tracker = CitationTracker()
    buffer = ""
    for delta in deltas:
        buffer += delta
        if style == "shortid":
            find_new_citation_spans(buffer, tracker)  # R2R's own function
        else:
            for cid, span in find_markers(buffer, style):  # the same grammar, whole buffer
                tracker.is_new_span(cid, span)
    return tracker.get_all_spans()


def timed(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--lengths", default="1300:32,4100:100,8000:200",
                        help="answers to measure, CHARS:MARKERS (320 and 1,024 tokens, then 8k)")
    args = parser.parse_args()
    for item in args.lengths.split(","):
        chars, markers = (int(x) for x in item.split(":"))
        measure(chars, markers, args.repeats)


def measure(chars: int, marker_count: int, repeats: int) -> None:
    rng = random.Random(2024)
    passages = [
        Passage(f"{'ab' * 8}:{i}:0", "d", "/x.pdf", "X", i, str(i), "", 0, 1, 1.0, "t")
        for i in range(1, 6)
    ]
    short_ids = SourceMap.build(passages, "shortid").labels()
    answers = {
        "shortid": [f"[{rng.choice(short_ids)}]" for _ in range(marker_count)],
        "label": [
            rng.choice(["[1]", "[2]", "[1, 3]", "【2】", "[4][5]", "[1-3]"])
            for _ in range(marker_count)
        ],
    }
    print(f"{chars} characters, {repeats} repeats, median wall time per whole answer")
    for style, markers in answers.items():
        text = make_answer(chars, markers, rng)
        deltas = split_deltas(text, rng)
        ours, theirs = folio(deltas, style), r2r_rescan(deltas, style)
        if ours != theirs:
            raise SystemExit(f"{style}: the two trackers disagree")
        spans = sum(len(v) for v in ours.values())
        t_folio = timed(lambda d=deltas, s=style: folio(d, s), repeats)
        t_rescan = timed(lambda d=deltas, s=style: r2r_rescan(d, s), repeats)
        print(
            f"[{style}] {len(text)} chars, {len(deltas)} deltas, {len(markers)} markers, "
            f"{spans} (id, span) pairs\n"
            f"  folio incremental : {t_folio * 1e3:8.2f} ms  ({t_folio / len(deltas) * 1e6:6.2f} us/delta)\n"
            f"  R2R-style rescan  : {t_rescan * 1e3:8.2f} ms  ({t_rescan / len(deltas) * 1e6:6.2f} us/delta)\n"
            f"  folio / rescan    : {t_folio / t_rescan:8.2%}  (target <= 5%)"
        )


if __name__ == "__main__":
    main()
