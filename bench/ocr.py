"""OCR accuracy, speed and search recall, through Folio's own path.

1. Scans made from text: pages of ``../shared/corpus`` (English and Chinese) rendered with
   PDFium at ``--scan-dpi`` (150), JPEG-compressed (quality 75) and put in image-only PDFs
   (one per language, in a scratch folder: nothing is written to the repository). Folio's
   extractor reads them with OCR on (``extract_document(ocr=True)``: pypdfium2 at
   ``--dpi``, rapidocr on onnxruntime, 1 thread), and each page's OCR text is compared
   with the text layer of the page it was made from (PDFium's text within the crop box):

   - CER: Levenshtein distance / reference length, both sides NFKC, case-folded, quotes
     and dashes as ASCII, without whitespace; printed with the reference's lines in the
     order OCR read them (a text layer often holds footnotes or running heads elsewhere)
     and in the text layer's own order;
   - pages/s: OCR wall time, one process, one onnxruntime thread (a parse worker; Folio
     runs two on two cores);
   - search recall: the OCR'd pages chunked, embedded (the real embedder when installed)
     and written to a scratch library as the indexer does; a phrase from each page's text
     layer (8 words; 10 Chinese characters) is searched: is that page in the top 5?

2. The hostile scans (``scan_image_only.pdf``, ``scan_flattened_loremipsum.pdf``) and the
   garbled pages 2–22 of ``en_paper_TAMReview.pdf``: status, pages read by OCR, mean
   confidence, time, and whether a phrase from the page is found.

    FOLIO_MODELS_DIR=... .venv/bin/python bench/ocr.py [--dpi 200] [--scan-dpi 150] [--quick]
        [--scans-only]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import io  # noqa: E402
import logging  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import unicodedata  # noqa: E402
from contextlib import closing  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = REPO.parent / "shared"

from desktop_app.core.ingest import chunking, ocr  # noqa: E402
from desktop_app.core.ingest.extract import extract_document  # noqa: E402
from desktop_app.core.library.store import Store  # noqa: E402
from desktop_app.core.search.retrieve import Retriever  # noqa: E402
from desktop_app.core.text import words as termlib  # noqa: E402
from desktop_app.core.types import ExtractedDocument  # noqa: E402

# (file, 1-based pages): single-column pages of running text with a clean text layer. Not
# chosen: freeculture p30 (its text layer is mostly printer's marks outside the page),
# a table of contents (OCR drops the dot leaders, which count as characters) and the
# line-numbered Supreme Court transcript (its text layer lists the 25 numbers first).
ENGLISH = [
    ("en_rfc6455_websocket.pdf", [5, 20]),
    ("en_gov_dmca_summary.pdf", [3, 8]),
    ("en_book_freeculture.pdf", [60, 120, 200]),
    ("en_book_pdkids.pdf", [10]),
    ("en_paper_TAMReview.pdf", [1]),
    ("en_rfc2616_http11.pdf", [40]),
]
CHINESE = [
    ("zh_manual_ctex.pdf", [3, 6]),
    ("zh_manual_zhlineskip.pdf", [2, 4]),
    ("zh_manual_xeCJK.pdf", [4]),
    ("zh_book_lnotes.pdf", [20]),
    ("zh_notes_context.pdf", [3]),
]


_FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\x02": "-"})


def normalise(text: str) -> str:
    """NFKC, case-folded, typographic quotes and dashes as ASCII, no whitespace."""
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_FOLD)
    return "".join(c for c in folded if not c.isspace())


def levenshtein(a: str, b: str) -> int:
    """Edit distance, one numpy row at a time (insertions by a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    codes_b = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    offsets = np.arange(len(b) + 1)
    row = offsets.copy()
    for i, char in enumerate(a, start=1):
        substitute = row[:-1] + (codes_b != ord(char))
        delete = row[1:] + 1
        best = np.empty_like(row)
        best[0] = i
        best[1:] = np.minimum(substitute, delete)
        row = np.minimum.accumulate(best - offsets) + offsets
    return int(row[-1])


def cer(ocr_text: str, reference: str) -> float:
    """Strict: the reference in the text layer's order."""
    ref = normalise(reference)
    return levenshtein(normalise(ocr_text), ref) / max(1, len(ref))


def reordered(ocr_text: str, reference: str) -> str:
    """The reference's lines in the order OCR read them: each line goes where its first
    (or last) 10 characters occur in the OCR text (after the line before it if they occur
    there); a line found nowhere stays after the line before it. A text layer often holds footnotes, running heads or columns in
    another order than a reader of the page (and OCR) meets them."""
    target = normalise(ocr_text)
    placed: list[tuple[float, int, str]] = []
    position = 0.0
    for number, line in enumerate(filter(None, map(normalise, reference.splitlines()))):
        found = -1
        for probe in (line[:10], line[-10:]):
            if len(probe) >= 4:  # after the line before first: a probe can occur twice
                found = target.find(probe, int(position))
                found = found if found >= 0 else target.find(probe)
                if found >= 0:
                    found -= 0 if probe == line[:10] else max(0, len(line) - 10)
                    break
        position = float(found) if found >= 0 else position + 0.001
        placed.append((position, number, line))
    return "".join(line for _, _, line in sorted(placed))


def cer_in_ocr_order(ocr_text: str, reference: str) -> float:
    ref = reordered(ocr_text, reference)
    return levenshtein(normalise(ocr_text), ref) / max(1, len(ref))


def make_scan(pages: list[tuple[Path, int]], out: Path, dpi: int) -> list[str]:
    """An image-only PDF of ``pages`` (JPEG, quality 75); returns each page's text layer."""
    import pypdfium2 as pdfium
    from PIL import Image

    images: list[Any] = []
    references: list[str] = []
    for path, number in pages:
        pdf = pdfium.PdfDocument(str(path))
        page = pdf[number - 1]
        # The text layer within the page as shown (PDFium's, clipped to the crop box): a
        # book's printer's marks outside it are no text a scan could show.
        references.append(page.get_textpage().get_text_bounded(*page.get_cropbox()))
        image = page.render(scale=dpi / 72.0).to_pil().convert("RGB")
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=75)
        images.append(Image.open(io.BytesIO(buffer.getvalue())))
        pdf.close()
    images[0].save(out, "PDF", resolution=float(dpi), save_all=True, append_images=images[1:])
    return references


def phrase(text: str) -> str:
    """A phrase from the middle of a page: 8 words, or 10 CJK characters."""
    cjk = [c for c in text if ocr.is_cjk(c) and c.isalpha()]
    if len(cjk) > 40:
        middle = len(cjk) // 2
        return "".join(cjk[middle : middle + 10])
    words = [w for w in text.split() if any(c.isalpha() for c in w)]
    middle = max(0, len(words) // 2 - 4)
    return " ".join(words[middle : middle + 8])


def embedder() -> Any:
    from desktop_app.core.models.embed import OnnxEmbedder

    models = Path(os.environ.get("FOLIO_MODELS_DIR", REPO / ".folio-test-home" / "data" / "models"))
    folder = models / "all-MiniLM-L6-v2-int8"
    if (folder / "model.onnx").is_file():
        return OnnxEmbedder(folder / "model.onnx", folder / "tokenizer.json")
    print("(the embedder is not installed: search recall is BM25 only)")
    return None


def write(store: Store, doc: ExtractedDocument, model: Any) -> None:
    count = model.count_tokens if model is not None else None
    chunks = chunking.chunk_document(doc, max_tokens=204, count_tokens=count)
    vectors = model.embed_passages([c.text for c in chunks]) if model is not None and chunks else None
    store.write_document(doc, chunks, [dict(termlib.term_counts(c.text)) for c in chunks],
                         vectors, getattr(model, "model_id", ""), 1)


def read(path: Path) -> tuple[ExtractedDocument, float]:
    started = time.perf_counter()
    doc = extract_document(str(path), ocr=True)
    return doc, time.perf_counter() - started


def two_workers(paths: list[Path], pages: int) -> None:
    """pages/s of Folio's parse pool, two workers (its default on two cores), OCR on."""
    from desktop_app.core.ingest.parse_pool import parse_many

    started = time.perf_counter()
    docs = list(parse_many([str(p) for p in paths], workers=2, ocr=True, timeout_s=600))
    seconds = time.perf_counter() - started
    read = sum(d.ocr_pages for d in docs)
    print(f"parse pool, 2 workers: {read}/{pages} pages by OCR in {seconds:.1f} s, {read / seconds:.2f} pages/s"
          f" (load {os.getloadavg()[0]:.1f})\n")


def scans(args: argparse.Namespace, scratch: Path, model: Any, store: Store) -> None:
    made: list[Path] = []
    total = 0
    for language, plan in (("English", ENGLISH), ("Chinese", CHINESE)):
        pages = [(SHARED / "corpus" / name, n) for name, numbers in plan for n in numbers]
        if args.quick:
            pages = pages[:3]
        out = scratch / f"scan_{language.lower()}.pdf"
        references = make_scan(pages, out, args.scan_dpi)
        made.append(out)
        total += len(pages)
        doc, seconds = read(out)
        write(store, doc, model)
        retriever = Retriever(store, model)
        rates, strict, found = [], [], 0
        for (source, number), page, reference in zip(pages, doc.pages, references, strict=True):
            rate, strict_rate = cer_in_ocr_order(page.text, reference), cer(page.text, reference)
            rates.append(rate)
            strict.append(strict_rate)
            query = phrase(reference)
            hits = retriever.search(query, k=5).passages
            hit = any(p.doc_id == doc.doc_id and p.page == page.page for p in hits)
            found += hit
            print(f"  {language:7} {source.name:34} p{number:<4} CER {rate:6.2%} (text-layer order {strict_rate:6.2%})"
                  f"  conf {page.ocr_confidence:.3f}  {'found' if hit else 'MISSED'}: {query!r}")
        sizes = [len(normalise(r)) for r in references]
        pooled = sum(r * n for r, n in zip(rates, sizes, strict=True)) / sum(sizes)
        pooled_strict = sum(r * n for r, n in zip(strict, sizes, strict=True)) / sum(sizes)
        print(f"{language}: {len(pages)} pages, CER {pooled:.2%} with lines in OCR order, {pooled_strict:.2%} in the"
              f" text layer's order (pooled; median {statistics.median(rates):.2%}),"
              f" {len(pages) / seconds:.2f} pages/s ({seconds / len(pages):.1f} s a page),"
              f" search recall@5 {found}/{len(pages)}; {doc.ocr_pages} pages by OCR, status {doc.status}\n")
    two_workers(made, total)


HOSTILE = [
    ("hostile/scan_image_only.pdf", "Docling bundles PDF document conversion to JSON and Markdown", None),
    ("hostile/scan_flattened_loremipsum.pdf", "Lorem ipsum dolor sit amet, consectetur adipiscing elit", None),
    ("corpus/en_paper_TAMReview.pdf", "", (2, 22)),
]


def hostile(model: Any, store: Store) -> None:
    for name, query, garbled in HOSTILE:
        path = SHARED / name
        doc, seconds = read(path)
        write(store, doc, model)
        pages = [p for p in doc.pages if garbled is None or garbled[0] <= p.page <= garbled[1]]
        read_pages = [p for p in pages if p.ocr]
        confidence = statistics.mean(p.ocr_confidence for p in read_pages) if read_pages else 0.0
        retriever = Retriever(store, model)
        queries = [query] if query else [phrase(p.text) for p in read_pages]
        found = 0
        for text in queries:
            hits = retriever.search(text, k=5).passages
            found += any(p.doc_id == doc.doc_id for p in hits)
        print(f"{path.name}: {doc.status}, {len(read_pages)}/{len(pages)} pages by OCR, mean confidence"
              f" {confidence:.3f}, {seconds:.1f} s ({len(read_pages) / seconds:.2f} pages/s);"
              f" searchable: {found}/{len(queries)} phrases found in the top 5")
        if read_pages:
            print(f"    {read_pages[0].text[:160]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dpi", type=int, default=ocr.RENDER_DPI, help="OCR render resolution")
    parser.add_argument("--scan-dpi", type=int, default=150, help="resolution of the made-up scans")
    parser.add_argument("--quick", action="store_true", help="three pages per language, no hostile files")
    parser.add_argument("--scans-only", action="store_true", help="no hostile files")
    args = parser.parse_args()
    if not SHARED.is_dir():
        print(f"{SHARED} is absent")
        return 2
    ocr.RENDER_DPI = args.dpi
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # warns on every odd font
    print(f"OCR at {args.dpi} dpi of scans made at {args.scan_dpi} dpi (JPEG q75); load {os.getloadavg()[0]:.1f}\n")
    model = embedder()
    with tempfile.TemporaryDirectory() as folder, closing(Store(Path(folder) / "bench.duckdb")) as store:
        scans(args, Path(folder), model, store)
        if not (args.quick or args.scans_only):
            hostile(model, store)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
