from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core import paths
from desktop_app.core.search.glossary import Entry, Glossary, load_default, parse

FINANCE = Glossary([
    Entry(("capex", "capital expenditure"), "purchases of property, plant and equipment"),
    Entry(("quick ratio",), "cash; receivables; total current liabilities"),
    Entry(("资本支出",), "购建固定资产支付的现金"),
])


@pytest.mark.parametrize(
    ("question", "expansion"),
    [
        ("What was 3M's FY2018 CapEx?", "purchases of property, plant and equipment"),
        ("What is the capital   expenditure for 2018?", "purchases of property, plant and equipment"),
        ("Has the quick ratio improved, and what was capex?",
         "purchases of property, plant and equipment; cash; receivables; total current liabilities"),
        ("2022年的资本支出是多少？", "购建固定资产支付的现金"),
        ("What is the capexit strategy?", ""),  # whole words only
        ("What was revenue?", ""),
    ],
)
def test_expand_finds_whole_phrases_in_any_case(question: str, expansion: str) -> None:
    assert FINANCE.expand(question) == expansion


def test_parse_names_the_malformed_entry() -> None:
    assert parse('[[entry]]\nask = "ebitda"\nfind = "earnings before interest"') == [
        Entry(("ebitda",), "earnings before interest")
    ]
    with pytest.raises(ValueError, match="entry 2: 'find'"):
        parse('[[entry]]\nask = ["a b"]\nfind = "c"\n[[entry]]\nask = ["d"]\nfind = ""')
    with pytest.raises(ValueError, match="entry 1: 'ask'"):
        parse('[[entry]]\nask = []\nfind = "c"')


def test_a_user_glossary_adds_to_the_built_in_one_and_a_broken_file_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(paths, "config_dir", lambda: tmp_path)
    (tmp_path / "glossary.toml").write_text('[[entry]]\nask = ["tls"]\nfind = "transport layer security"\n')
    glossary = load_default()
    assert glossary.expand("Which TLS version?") == "transport layer security"
    assert "property, plant and equipment" in glossary.expand("What was capex?")  # built in
    (tmp_path / "glossary.toml").write_text("[[entry]\nask =")
    assert "property, plant and equipment" in load_default().expand("What was capex?")
    assert "glossary" in caplog.text


def test_the_built_in_glossary_parses_and_each_phrase_is_unique() -> None:
    entries = parse((paths.resources_dir() / "glossary.toml").read_text(encoding="utf-8"))
    phrases = [phrase.lower() for entry in entries for phrase in entry.ask]
    assert len(entries) >= 30 and len(phrases) == len(set(phrases))
