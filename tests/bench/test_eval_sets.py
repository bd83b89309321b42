"""The evaluation sets of bench/data/eval_<lang>.json: schema, unique ids, the tuning and
held-out halves, and every answerable question's evidence on its stated page of the real
PDF as Folio's extractor reads it (OCR for a scanned page)."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from desktop_app.core.ingest.extract import extract_document
from desktop_app.core.types import PageQuality
from tests.conftest import REPO, SHARED, require

_spec = importlib.util.spec_from_file_location("eval_sets", REPO / "bench" / "eval_sets.py")
assert _spec is not None and _spec.loader is not None
eval_sets = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("eval_sets", eval_sets)
_spec.loader.exec_module(eval_sets)

LANGUAGES = eval_sets.available()


def test_there_are_eval_sets_in_english_and_german() -> None:
    assert {"en", "de"} <= set(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_eval_set_has_enough_questions_in_both_halves(language: str) -> None:
    questions = eval_sets.load(language)
    answerable = [q for q in questions if q.answerable]
    unanswerable = [q for q in questions if not q.answerable]
    assert len(answerable) >= 40 and len(unanswerable) >= 20, (len(answerable), len(unanswerable))
    data = json.loads((eval_sets.DATA / f"eval_{language}.json").read_text(encoding="utf-8"))
    assert "odd" in data["about"] + data.get("split", "")  # the split is written down
    for half in ("tune", "held"):
        part = [q for q in questions if eval_sets.half(q) == half]
        assert sum(q.answerable for q in part) >= 15, (half, "answerable")
        assert sum(not q.answerable for q in part) >= 8, (half, "unanswerable")
        assert len({q.file for q in part if q.answerable}) >= 2, (half, "documents")
    # spread over the documents, not most of them from one
    native = [q.file for q in answerable if not q.cross_lingual]
    assert Counter(native).most_common(1)[0][1] <= max(10, len(native) // 2) or \
        len(set(native)) == 1  # German: one document in the corpus
    assert all(q.question.strip() != q.answer.strip() for q in answerable)


@cache
def _pages(name: str, ocr: bool) -> dict[int, tuple[str, PageQuality]]:
    document = extract_document(str(SHARED / "corpus" / name), ocr=ocr)
    return {p.page: (eval_sets.normalise(p.text), p.quality) for p in document.pages}


def _page_texts(name: str, wanted: tuple[int, ...]) -> dict[int, str]:
    pages = _pages(name, False)
    if any(pages.get(n, ("", PageQuality.EMPTY))[1] is not PageQuality.OK for n in wanted):
        pages = _pages(name, True)  # a scanned or garbled page: as Folio reads it, by OCR
    return {n: text for n, (text, _quality) in pages.items()}


@pytest.mark.e2e
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_evidence_is_on_its_page_of_the_real_pdf(language: str) -> None:
    require((SHARED / "corpus").is_dir(), f"{SHARED / 'corpus'} is absent")
    questions = eval_sets.load(language)
    missing_files = sorted({q.file for q in questions if not q.path.is_file()})
    assert not missing_files, f"not in ../shared/corpus: {missing_files}"
    wrong = []
    for q in questions:
        if not q.answerable:
            continue
        texts = _page_texts(q.file, q.pages)
        assert all(n in texts for n in q.pages), (q.id, q.pages, len(texts))
        for evidence in q.evidence:
            needle = eval_sets.normalise(evidence)
            if not any(needle in texts[n] for n in q.pages):
                found = [n for n, text in texts.items() if needle in text]
                wrong.append(f"{q.id} {q.file} p{list(q.pages)}: {evidence[:60]!r} (found on {found})")
    assert not wrong, "\n".join(wrong)


def _write(tmp_path: Path, questions: list[dict[str, object]]) -> Path:
    path = tmp_path / "eval_en.json"
    path.write_text(json.dumps({"about": "odd tune", "questions": questions}), encoding="utf-8")
    return path


GOOD = {"id": "en-a-001", "language": "en", "question": "Which port?", "file": "x.pdf",
        "pages": [3], "answer": "80", "evidence": "port 80 is assumed"}
UNANSWERABLE = {"id": "en-u-002", "language": "en", "question": "What does 429 mean?",
                "file": "x.pdf", "answerable": False, "why": "RFC 2616 stops at 417"}


def test_the_loader_reads_both_kinds_and_splits_by_the_ids_number(tmp_path: Path) -> None:
    questions = eval_sets.load("en", _write(tmp_path, [GOOD, UNANSWERABLE]))
    assert [(q.id, q.answerable, eval_sets.half(q)) for q in questions] == [
        ("en-a-001", True, "tune"), ("en-u-002", False, "held")]
    assert questions[0].evidence == ("port 80 is assumed",) and questions[0].pages == (3,)
    assert questions[1].why.startswith("RFC 2616")
    assert eval_sets.half("zh-u-010") == "held" and eval_sets.half("de-a-007") == "tune"


@pytest.mark.parametrize("bad", [
    {**GOOD, "id": "en-a-1"},  # id form
    {**GOOD, "language": "de"},  # language does not match the id
    {**GOOD, "pages": [0]},  # pages are 1-based
    {**GOOD, "pages": []},
    {**GOOD, "evidence": ""},
    {**GOOD, "evidence": ["ok", 3]},
    {k: v for k, v in GOOD.items() if k != "answer"},
    {**GOOD, "answerable": False},  # an -a- id cannot be unanswerable
    {k: v for k, v in UNANSWERABLE.items() if k != "why"},
    {k: v for k, v in UNANSWERABLE.items() if k != "answerable"},
    {**GOOD, "file": "x.txt"},
])
def test_the_loader_rejects_a_malformed_question(tmp_path: Path, bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        eval_sets.load("en", _write(tmp_path, [bad]))


def test_the_loader_rejects_duplicate_ids_and_other_languages(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="duplicate"):
        eval_sets.load("en", _write(tmp_path, [GOOD, GOOD]))
    with pytest.raises(ValueError):
        eval_sets.load("fr")


def test_normalising_folds_ligatures_whitespace_and_breaks_inside_chinese() -> None:
    assert eval_sets.normalise("ﬁnd  the\n ﬁrst") == "find the first"
    assert eval_sets.normalise("保修期为自交货之日\n起24个月") == "保修期为自交货之日起24个月"
    assert eval_sets.normalise("open  source\nsoftware") == "open source software"
