"""The hand-written evaluation sets over ``../shared/corpus``: ``bench/data/eval_<lang>.json``.

One file per language (``en``, ``de``, ``zh``), one schema. Each question is either

- answerable: ``{"id": "en-a-001", "language", "question", "file", "pages", "answer",
  "evidence"}``: ``file`` is a PDF of ../shared/corpus, ``pages`` the 1-based physical pages
  that state the answer, ``evidence`` the sentence(s) (a string or a list of strings) copied
  from the text Folio extracts from one of those pages; or
- near-domain unanswerable: ``{"id": "en-u-001", "language", "question", "file",
  "answerable": false, "why"}``: the topic is in ``file``, the fact is not; ``why`` says
  what the document has instead.

``"cross_lingual": true`` marks a question asked in another language than its document's.

The split is by id, fixed in advance: a question whose id ends in an odd number belongs to
the tuning half, an even number to the held-out half (so both halves hold answerable and
unanswerable questions over most documents). Choose thresholds on ``half(q) == "tune"`` and
quote ``"held"``::

    import eval_sets                      # from a script in bench/
    qs = eval_sets.load("zh")
    tune = [q for q in qs if eval_sets.half(q) == "tune"]

``tests/bench/test_eval_sets.py`` checks every file: schema, unique ids, and that each
evidence string is on its stated page of the real PDF as Folio's extractor reads it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

DATA = Path(__file__).resolve().parent / "data"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
LANGUAGES = ("en", "de", "zh")
ID = re.compile(r"^(en|de|zh)-(a|u)-(\d{3})$")


@dataclass(frozen=True)
class Question:
    id: str
    language: str
    question: str
    file: str  # a PDF name in ../shared/corpus
    answerable: bool
    pages: tuple[int, ...] = ()  # 1-based physical pages that hold the answer
    answer: str = ""
    evidence: tuple[str, ...] = ()  # copied from the extracted text of one of ``pages``
    why: str = ""  # unanswerable: what the document has instead
    cross_lingual: bool = False

    @property
    def path(self) -> Path:
        return CORPUS / self.file


def half(q: Question | str) -> Literal["tune", "held"]:
    """``"tune"`` when the id's number is odd, ``"held"`` when it is even."""
    ident = q if isinstance(q, str) else q.id
    match = ID.match(ident)
    if match is None:
        raise ValueError(f"not an eval-set id: {ident!r}")
    return "tune" if int(match.group(3)) % 2 else "held"


def normalise(text: str) -> str:
    """How evidence is compared with page text: NFKC (ligatures, full-width forms), every
    run of whitespace one space; for Chinese and Japanese, no space between two CJK
    characters (extractors break lines inside Chinese sentences)."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()
    return re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", text)


def _question(raw: dict[str, Any], source: str) -> Question:
    def need(key: str, kind: type) -> Any:
        value = raw.get(key)
        if not isinstance(value, kind) or (kind is str and not str(value).strip()):
            raise ValueError(f"{source}: {raw.get('id', '?')}: {key!r} must be a non-empty "
                             f"{kind.__name__}")
        return value

    ident = str(need("id", str))
    match = ID.match(ident)
    if match is None:
        raise ValueError(f"{source}: bad id {ident!r} (want like en-a-001)")
    language = str(need("language", str))
    if language != match.group(1):
        raise ValueError(f"{source}: {ident}: language {language!r} does not match the id")
    file = str(need("file", str))
    if not file.endswith(".pdf"):
        raise ValueError(f"{source}: {ident}: file must name a PDF")
    common: dict[str, Any] = {"id": ident, "language": language, "file": file,
                              "question": str(need("question", str)),
                              "cross_lingual": raw.get("cross_lingual") is True}
    if match.group(2) == "u":
        if raw.get("answerable") is not False:
            raise ValueError(f"{source}: {ident}: an unanswerable question has answerable: false")
        return Question(**common, answerable=False, why=str(need("why", str)))
    if raw.get("answerable", True) is not True:
        raise ValueError(f"{source}: {ident}: an -a- id is an answerable question")
    pages = need("pages", list)
    if not pages or not all(isinstance(p, int) and p >= 1 for p in pages):
        raise ValueError(f"{source}: {ident}: pages must be 1-based page numbers")
    evidence = raw.get("evidence")
    items = [evidence] if isinstance(evidence, str) else evidence
    if not isinstance(items, list) or not items or not all(
            isinstance(e, str) and e.strip() for e in items):
        raise ValueError(f"{source}: {ident}: evidence must be a string or a list of strings")
    return Question(**common, answerable=True, pages=tuple(pages),
                    answer=str(need("answer", str)), evidence=tuple(items))


def load(language: str, path: Path | None = None) -> list[Question]:
    """The questions of ``bench/data/eval_<language>.json`` (or ``path``), validated."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; have {LANGUAGES}")
    file = path or DATA / f"eval_{language}.json"
    data = json.loads(file.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise ValueError(f"{file.name}: want an object with a 'questions' list")
    questions = [_question(raw, file.name) for raw in data["questions"]]
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise ValueError(f"{file.name}: duplicate id {q.id}")
        if q.language != language:
            raise ValueError(f"{file.name}: {q.id} is not a {language} question")
        seen.add(q.id)
    return questions


def available() -> list[str]:
    """The languages that have an eval file."""
    return [lang for lang in LANGUAGES if (DATA / f"eval_{lang}.json").exists()]
