"""The facade as the area tests build it: a KnowledgeBase with the fake models over two
generated PDFs (a lease and a pump manual), and how its streams are read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from desktop_app.core.settings import Settings
from desktop_app.services.knowledge_base import KnowledgeBase
from tests.fakes import FakeEmbedder, FakeGenerator

LEASE = [
    ["Residential Lease Agreement", "Section 1 Parties", "This lease is made between the landlord and the tenant."],
    ["Section 4 Repairs", "The tenant must report damage to the landlord within 30 days of discovering it.",
     "The landlord pays for repairs caused by normal wear."],
    ["Section 5 Rent", "Rent is due on the first day of each month.", "A late fee of 50 dollars applies after 5 days."],
]
MANUAL = [
    ["Pump Manual", "Chapter 2 Maintenance", "Replace the impeller seal every 2000 operating hours.",
     "Lubricate the bearings with lithium grease every 500 hours."],
]


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


def make_kb(tmp_path: Path, generator: FakeGenerator | None = None, **settings: Any) -> KnowledgeBase:
    return KnowledgeBase(
        tmp_path / "lib.duckdb", Settings(**settings), embedder=FakeEmbedder(),
        generator=generator or FakeGenerator(),
    )


def close(kb: KnowledgeBase) -> None:
    asyncio.run(kb.close())
