"""Index and contents pages are listings, not statements: they fill a source last."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.text.listing import asks_for_listing, reads_as_listing
from tests.core.search.test_retrieve import add_document

# Lines as pypdf reads them from ../shared/corpus (GeoTopo p. 115, Free Culture p. 342,
# the xeCJK manual's index, RFC 2616's contents).
GEOTOPO_INDEX = """Stichwortverzeichnis
Abbildung
affine, 107
differenzierbare, 29
homotope, 50
offene, 53
Euler-Charakteristik, siehe Eulerzahl
Eulersche Polyederformel, 38
Eulerzahl, 36"""
FREE_CULTURE_INDEX = """copyright law (cont.)
copies as core issue of, 139–40, 141–44,
146, 171, 319n, 320n
circumvention technology ban and,
157–58
fair use, 141–43
Fairbank, Robert, 105
Godwin, Mike, 40
Google, 48–49, 50"""
XECJK_INDEX = """435, 473, 483, 497, 500, 521,
537, 579, 581, 588, 603, 613,
635, 641, 654, 697, 740, 750,
753, 768, 780, 840, 924, 934,
943, 946, 985, 987, 1114, 1122
\\encodingdefault ............. 868"""
RFC_CONTENTS = """1 Introduction ...................................................7
1.1 Purpose......................................................7
1.2 Requirements .................................................8
1.3 Terminology ..................................................8
1.4 Overall Operation ............................................12
2 Notational Conventions and Generic Grammar ....................14
2.1 Augmented BNF ................................................14"""
# Not listings: a table of counts, a tax table, a shareholder table, references, prose.
NICS_TABLE = """Georgia 14,111 16,635 15,227 448 758 0 10 14 01,7721,796 4 0 0 0 10 9 1 0 0 050,795
Hawaii 1,248 00000 0 0 0 0 0 0 1 3 0 0 0 0 0 0 01,252
Idaho 1,944 3,609 5,227 190 189 0 0 4 0 273 455 1 22 4 1 1 2 0 0 3 011,925
Illinois 87,190 24,412 17,227 0 1,032 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0129,861
Indiana 81,935 25,519 20,227 1,113 808 0 2 3 0 13 629 5 28 0 0 31 13 1 2 4 0130,333
Iowa 7,521 11,394 11,183 374 379 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 030,852"""
TAX_TABLE = "\n".join(["25,200", "25,250", "3,393", "3,400", "25,250", "25,300", "3,400", "3,408"])
SHAREHOLDERS = """香港中央结算(代理人)有限公司 257,055,899 境外上市外资股 257,055,899
北京海鸿源投资管理有限公司 81,494,850 人民币普通股 81,494,850
杨琴秀 27,955,752 人民币普通股 27,955,752
南京方凯企业管理有限公司 4,332,700 人民币普通股 4,332,700
10,739,518 人民币普通股 10,739,518
上述股东关联关系或一致行动的说明 未知"""
REFERENCES = """Davis, F. D. (1989). Perceived usefulness, perceived ease of use, and user acceptance
of information technology. MIS Quarterly, 13(3), 319-340.
Information Systems Education Journal, 5, 1-11.
use measurement.Decision Sciences,25,(5/6),863-74.
InternationalJournalof ManagementScience,10(2),157-165.
18(1), 131-145.
EngineeringManagement29(1),28-45.
Venkatesh, V. and Davis, F. D. (2000). A theoretical extension of the TAM.
Management Science, 46(2), 186-204."""
PROSE = ("Control frames are identified by opcodes where the most significant bit of the opcode is 1.\n"
         "Currently defined opcodes for control frames include 0x8 (Close), 0x9 (Ping), and 0xA (Pong).")


@pytest.mark.parametrize("text", [GEOTOPO_INDEX, FREE_CULTURE_INDEX, XECJK_INDEX, RFC_CONTENTS])
def test_an_index_or_a_contents_page_is_a_listing(text: str) -> None:
    assert reads_as_listing(text)


@pytest.mark.parametrize("text", [NICS_TABLE, TAX_TABLE, SHAREHOLDERS, REFERENCES, PROSE, ""])
def test_tables_references_and_prose_are_not(text: str) -> None:
    assert not reads_as_listing(text)


def test_an_index_page_fills_a_source_only_after_the_pages_that_state_things(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.duckdb")
    add_document(store, None, "geotopo", [
        ["Satz 5.8 (Gauß-Bonnet). Für eine kompakte orientierbare Fläche S gilt: das Integral der "
         "Gauß-Krümmung ist 2 pi mal die Euler-Charakteristik von S."],
        ["Die Eulerzahl einer Triangulierung ist die Anzahl der Ecken minus Kanten plus Dreiecke."],
        [GEOTOPO_INDEX],
    ])
    retriever = Retriever(store, None)
    question = "Was ist die Euler-Charakteristik, die Eulerzahl einer Fläche, Euler-Polyederformel?"
    # By its words the index page is the closest: it names every term of the question.
    ranked, _ = retriever.bm25(question, 3)
    assert store.chunk_places([ranked[0][0]])[ranked[0][0]][1] == 3
    # It comes last among the sources, and not at all when the others fill them.
    assert [p.page for p in retriever.search(question, k=3).passages][-1] == 3
    assert sorted(p.page for p in retriever.search(question, k=2).passages) == [1, 2]
    store.close()


@pytest.mark.parametrize(("question", "asks"), [
    ("How many chapters are in this report?", True),
    ("What are the last 4 chapters listed in the table of contents?", True),
    ("Was steht im Stichwortverzeichnis unter Eulerzahl?", True),
    ("《LaTeX Notes》第九章介绍了哪些定制方法？", True),
    ("Was ist die Euler-Charakteristik einer geschlossenen Fläche?", False),
    ("Which opcode denotes a ping frame?", False),
    ("WebSocket 控制帧的负载最多可以有多少字节？", False),
])
def test_a_question_about_the_documents_parts_keeps_their_listings(question: str, asks: bool) -> None:
    assert asks_for_listing(question) is asks


def test_a_contents_page_is_found_when_the_question_asks_for_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.duckdb")
    add_document(store, None, "rfc", [
        [RFC_CONTENTS],
        ["1.1 Purpose. The Hypertext Transfer Protocol is an application-level protocol with the "
         "lightness and speed necessary for distributed information systems: its introduction."],
    ])
    retriever = Retriever(store, None)
    words = "Purpose, Requirements, Terminology, Overall Operation, Augmented BNF"
    assert [p.page for p in retriever.search(f"Which {words} sections are in the contents?", k=1).passages] == [1]
    assert [p.page for p in retriever.search(f"What about {words}?", k=1).passages] == [2]
    store.close()
