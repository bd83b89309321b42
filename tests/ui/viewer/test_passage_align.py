"""The passage-to-PDFium alignment (Qt-free): what the highlight lands on."""

from __future__ import annotations

import random

from desktop_app.ui.viewer.passage_align import align_passage, normalise
from tests.timing import ratio_to_calibration

PDFIUM_PAGE = (
    "The warranty period for the pump is thirty days from delivery.\r\n"
    "Claims after that date are handled by the regional office.\r\n"
    "Unrelated trailing paragraph about something else entirely."
)
PYPDF_PAGE = (
    "The\twarranty\tperiod\tfor\tthe\tpump\tis\tthirty\tdays\tfrom\tdelivery.\n"
    "Claims\tafter\tthat\tdate\tare\thandled\tby\tthe\tregional\to\ufb03ce.\n"
    "Unrelated\ttrailing\tparagraph\tabout\tsomething\telse\tentirely."
)


def test_normalise_keeps_a_map_back_to_the_original() -> None:
    norm = normalise("o\ufb03ce, Ｆull-width")
    assert norm.text == "officefullwidth"
    assert norm.origin[:6] == (0, 1, 1, 1, 2, 3)  # the ligature expands to three letters


def test_tabs_and_ligatures_of_pypdf_match_pdfium_text_exactly() -> None:
    passage = PYPDF_PAGE.split("\n")[1]  # "Claims ... o\ufb03ce."
    found = align_passage(PDFIUM_PAGE, passage)
    assert found is not None and found.exact
    start, end = found.span
    assert PDFIUM_PAGE[start:end] == "Claims after that date are handled by the regional office."


def test_hyphen_at_line_end_and_cjk_full_width() -> None:
    page = "Das Gerät muss jähr-\r\nlich geprüft werden. 第8.3.2条　保修期为三十天。"
    assert align_passage(page, "jährlich geprüft werden") is not None
    found = align_passage(page, "第8.3.2条 保修期为三十天")
    assert found is not None
    start, end = found.span
    assert page[start:end] == "第8.3.2条　保修期为三十天。"  # with its closing full stop


def test_differences_inside_the_passage_still_locate_it() -> None:
    passage = (
        "Claims after that dote are handled by the regionl office. "
        "Unrelated trailing paragraph about somethng else entirely."
    )
    found = align_passage(PDFIUM_PAGE, passage)
    assert found is not None and not found.exact
    start, end = found.span
    assert PDFIUM_PAGE[start:].startswith("Claims after")
    assert PDFIUM_PAGE[:end].endswith("entirely.")
    assert 0.6 < found.coverage < 1.0


def test_a_passage_from_another_page_is_not_found() -> None:
    assert align_passage(PDFIUM_PAGE, "Completely different words about a hydraulic crane.") is None
    assert align_passage(PDFIUM_PAGE, "") is None


def test_repeated_text_prefers_the_occurrence_near_the_hint() -> None:
    page = "Section A. The fee is ten euros.\nSection B. The fee is ten euros.\n"
    second = page.index("Section B") + len("Section B. ")
    found = align_passage(page, "The fee is ten euros.", hint=second)
    assert found is not None
    assert found.span[0] == second


def test_support_spans_map_into_the_page() -> None:
    passage = PYPDF_PAGE
    found = align_passage(PDFIUM_PAGE, passage)
    assert found is not None
    claim = passage.index("Claims")
    spans = found.map_span(claim, claim + len("Claims\tafter\tthat\tdate"))
    assert len(spans) == 1
    start, end = spans[0]
    assert PDFIUM_PAGE[start:end] == "Claims after that date"


def test_alignment_is_fast_on_a_dense_page() -> None:
    rng = random.Random(7)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(900)
    ]
    page = " ".join(words)[:4000]
    passage = page[1500:2500].replace(" ", "\t")
    # Damage the passage a little so the anchor path runs, not the exact find.
    passage = passage[:300] + "XYZ" + passage[310:700] + passage[720:]
    found = align_passage(page, passage)
    assert found is not None and not found.exact
    assert found.span[0] <= 1501 and found.span[1] >= 2490
    # Against a fixed interpreter workload timed in the same test (tests/timing.py): about
    # 1.05x it (1.6 ms) on the 2-core machine, loaded or not; the bound leaves room for
    # noise, not for an alignment that turned quadratic in the page.
    ratio = ratio_to_calibration(lambda: align_passage(page, passage))
    assert ratio < 10, f"alignment took {ratio:.1f}x the calibration workload"
