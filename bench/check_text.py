"""How long `folio verify` / Check a Text… takes per sentence, through the facade.

Builds scratch libraries (nothing is written to the repository) from ``../shared/corpus``
PDFs with the configured embedder: a small one (the DPR paper and the PDF.js article, ~100
passages) and a larger one (RFC 2616 and RFC 6455, ~980 passages); checks the same text
(sentences about those documents, true and false, and a heading) against each, rounds
interleaved, and prints the median seconds per sentence and the ratio between libraries.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/check_text.py [--rounds 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from desktop_app.core import settings as settings_mod
from desktop_app.services.knowledge_base import KnowledgeBase

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
LIBRARIES = {
    "small": ("en_paper_dpr_multicolumn.pdf", "en_wiki_pdfjs_article.pdf"),
    "large": ("en_rfc2616_http11.pdf", "en_rfc6455_websocket.pdf"),
}
TEXT = """# Notes

The WebSocket protocol enables two-way communication between a client and a remote host.
If the payload length is 126, the following 2 bytes are interpreted as a 16-bit unsigned integer.
A single-user client should keep up to 2*N connections to one server.
The closing handshake is initiated by sending a Close frame.
PDF.js is a JavaScript library that renders PDF files using the HTML5 Canvas.
Andreas Gal launched the project in 2011.
This resulted in 21,015,324 passages in the corpus.
The retriever was trained on 40 million passages from Reddit.
Bananas are the best source of potassium in the tropics.
Dense retrieval is always slower than BM25 on every dataset.
"""


async def build(root: Path, name: str, files: tuple[str, ...]) -> KnowledgeBase:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    for file in files:
        if not (folder / file).exists():
            shutil.copy(CORPUS / file, folder / file)
    kb = KnowledgeBase(root / f"{name}.duckdb", settings_mod.load())
    async for _ in kb.library.index(folder):
        pass
    await kb.library.search("warm up", 1)
    return kb


async def main(rounds: int, keep: Path | None) -> None:
    root = keep or Path(tempfile.mkdtemp(prefix="folio-check-bench-"))
    kbs = {name: await build(root, name, files) for name, files in LIBRARIES.items()}
    per_sentence: dict[str, list[float]] = {name: [] for name in kbs}
    sentences = 0
    for _ in range(rounds):
        for name, kb in kbs.items():  # interleaved: both feel the same background load
            started, sentences = time.perf_counter(), 0
            async for event in kb.checking.check_text(TEXT, "notes.md"):
                sentences += event.event == "sentence_check"
            per_sentence[name].append((time.perf_counter() - started) / sentences)
    for name, kb in kbs.items():
        passages = len(kb.parts.store.chunk_ids())
        median = statistics.median(per_sentence[name])
        print(f"{name:<6} {passages:>5} passages  {median:.3f} s/sentence (median of {rounds} rounds, "
              f"{sentences} sentences)")
        await kb.close()
    small, large = (statistics.median(per_sentence[n]) for n in ("small", "large"))
    print(f"large / small: {large / small:.1f}x")
    if keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="keep the scratch libraries here (reused)")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.keep))
