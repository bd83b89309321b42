"""A name across languages in the evidence gate, on a real Chinese filing with the real
multilingual embedder: an English question naming "Northeast Electric", which the filing
names only as 东北电气, is not refused; an English question about "PDF.js", a handle written
the same in every language that the filing never mentions, still is (and shows no Chinese
passages as if they were on its topic)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.answer import gate
from desktop_app.core.errors import ModelMissingError
from desktop_app.core.models.catalog import open_embedder
from desktop_app.core.settings import Settings
from desktop_app.services.knowledge_base import KnowledgeBase
from tests.conftest import require

pytestmark = pytest.mark.e2e

ANSWERABLE = (
    "What was Northeast Electric's operating revenue in the first quarter of 2018?",
    "Who is the largest shareholder of Northeast Electric?",
    "How many shareholders did Northeast Electric have at the end of the reporting period?",
)


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path, models_dir: Path) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FOLIO_MODELS_DIR", str(models_dir))
        try:
            e5 = open_embedder("default", threads=2)
        except ModelMissingError as exc:
            require(False, f"multilingual-e5-small is not installed ({exc}): run `folio models install --small`")
            raise
    root = tmp_path_factory.mktemp("gate-crosslingual")
    folder = root / "docs"
    folder.mkdir()
    shutil.copy(shared_dir / "corpus" / "zh_report_dbdq_2018q1.pdf", folder)
    base = KnowledgeBase(root / "lib.duckdb", Settings(judge=False), embedder=e5)
    collect(base.library.index(folder))
    yield base
    asyncio.run(base.close())


@pytest.mark.parametrize("question", ANSWERABLE)
def test_an_english_question_naming_a_company_the_chinese_filing_names_in_chinese_is_not_refused(
    kb: Any, question: str,
) -> None:
    found = kb.parts.retriever.search(question, 6)
    assert found.language == "en" and found.documents_language == "zh"
    assert found.unmentioned == ()  # "Northeast", "Electric": the filing says 东北电气
    assert gate.refusal(found) is None, gate.refusal(found)
    assert any("东北电气" in p.text for p in found.passages)


def test_a_handle_written_alike_in_every_language_must_still_be_mentioned(kb: Any) -> None:
    found = kb.parts.retriever.search("Who launched the PDF.js project, and in which year?", 6)
    assert found.documents_language == "zh" and found.unmentioned == ("PDF.js",)
    refused = gate.refusal(found)
    assert refused is not None and refused.kind is gate.RefusalKind.UNMENTIONED
    assert not refused.show_passages and "PDF.js" in refused.reason
    # the same question in the filing's own language is judged as before: it is answered
    assert gate.refusal(kb.parts.retriever.search("东北电气 2018 年第一季度的营业收入是多少？", 6)) is None
