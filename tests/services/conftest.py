"""The area tests' library folder: the lease and the pump manual as PDFs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pdfgen import write_pdf
from tests.services.facade import LEASE, MANUAL


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "lease.pdf", LEASE, title="Residential Lease")
    write_pdf(docs / "pump.pdf", MANUAL, title="Pump Manual")
    return docs
