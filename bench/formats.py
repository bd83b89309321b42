"""Retrieval on the documents of ../shared/formats (HTML, EPUB, DOCX, ODT, PPTX, Markdown,
text): for each answerable question of bench/data/formats_questions.jsonl, whether a top-5
passage comes from the file that answers it and holds the phrase that answers it, per
language and half (bench/retrieval.py's ``half``: choose on "tune", quote "held"); and for
the unanswerable ones, how many the evidence gate refuses.

The folder's PDF (the whole Chinese Debian Reference, which pypdf needs minutes for) is
left out unless ``--with-pdf``: the question is whether the other formats are found.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/formats.py [--work DIR] [--with-pdf]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.retrieval import _embedder, ensure_library, half  # noqa: E402
from desktop_app.core.answer.gate import refusal  # noqa: E402
from desktop_app.core.search.retrieve import Retriever  # noqa: E402

FORMATS = REPO.parent / "shared" / "formats"
QUESTIONS = REPO / "bench" / "data" / "formats_questions.jsonl"


def _norm(text: str) -> str:
    return " ".join(text.split())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="keep the library here (reused)")
    parser.add_argument("--with-pdf", action="store_true")
    parser.add_argument("--embedder", default="default")
    args = parser.parse_args(argv)
    if not FORMATS.is_dir():
        print(f"{FORMATS} is absent", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="folio-formats-"))
    folder = work / "formats"
    folder.mkdir(parents=True, exist_ok=True)
    for file in sorted(FORMATS.iterdir()):
        link = folder / file.name
        if (args.with_pdf or file.suffix != ".pdf") and not link.exists():
            link.symlink_to(file)
    embedder = _embedder(args.embedder)
    store = ensure_library(work / "formats.duckdb", folder, embedder)
    retriever = Retriever(store, embedder)
    retriever.search("warm up the caches", 5)
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line]
    hits: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    refusals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for q in questions:
        found = retriever.search(q["question"], 5)
        key = (q["lang"], half(q["id"]))
        if not q["answerable"]:
            refusals[key][0] += refusal(found) is not None
            refusals[key][1] += 1
            continue
        phrase = _norm(q["phrase"])
        rank = next((r for r, p in enumerate(found.passages, 1)
                     if Path(p.doc_path).name in q["files"] and phrase in _norm(p.text)), None)
        hits[key][0] += rank is not None
        hits[key][1] += 1
        if rank is None:
            top = found.passages[0] if found.passages else None
            where = f"{Path(top.doc_path).name} {top.where}" if top else "nothing"
            print(f"  miss {q['id']} [{key[1]}] {q['question']}  (top: {where})")
    print("\nfile + passage in the top 5 (answerable):")
    for lang in ("en", "zh", "de"):
        row = []
        for part in ("tune", "held"):
            got, total = hits[(lang, part)]
            row.append(f"{part} {got}/{total} ({got / max(1, total):.0%})")
        print(f"  {lang}: " + ", ".join(row))
    print("unanswerable refused by the evidence gate:")
    for lang in ("en", "zh", "de"):
        row = [f"{part} {refusals[(lang, part)][0]}/{refusals[(lang, part)][1]}" for part in ("tune", "held")]
        print(f"  {lang}: " + ", ".join(row))
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
