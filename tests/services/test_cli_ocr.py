"""`folio index --ocr/--no-ocr` overrides Settings' OCR switch (on by default)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from desktop_app import cli


def _settings_ocr(argv: list[str]) -> bool:
    args = cli.build_parser().parse_args(argv)
    kb = cli._knowledge_base(args)
    try:
        return bool(kb.settings.ocr)
    finally:
        asyncio.run(kb.close())


def test_index_reads_scans_with_ocr_unless_told_not_to(tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "lib.duckdb")]
    assert _settings_ocr(["index", str(tmp_path), *db]) is True
    assert _settings_ocr(["index", str(tmp_path), "--no-ocr", *db]) is False
    assert _settings_ocr(["index", str(tmp_path), "--ocr", *db]) is True
