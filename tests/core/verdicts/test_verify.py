"""Per-sentence trust: splitting, markers, factual-or-not, the rule scorer, answer verdicts
and the streaming verifier. Pure Python, no models.

The hand-made claim/passage pairs below (English and Chinese, labelled by a person) are what
the thresholds in ``desktop_app.core.verdicts.verify`` were calibrated on. Labels say what a careful
reader decides, not what the scorer manages: pairs a lexical scorer cannot see are listed in
``KNOWN_LEXICAL_MISSES``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import pytest

from desktop_app.core.text.words import text_language
from desktop_app.core.types import ClaimVerdict, Verdict
from desktop_app.core.verdicts.claim_score import Rule
from desktop_app.core.verdicts.verify import (
    PARTIAL_MIN,
    SUPPORTED_MIN,
    StreamingVerifier,
    all_unsupported,
    attach_citations,
    find_markers,
    is_factual,
    score_claim,
    split_sentences,
    verify_answer,
)

# ----------------------------------------------------------------- calibration pairs

S, P, U = Verdict.SUPPORTED, Verdict.NOT_CONFIRMED, Verdict.NOT_CONFIRMED
C = Verdict.CONTRADICTED  # the passage says otherwise (another number, the opposite)

RETURNS = (
    "Returns are accepted within 30 days of delivery. Items must be unused and in their "
    "original packaging. Refunds are issued to the original payment method within 5 business "
    "days after the returned item is received. Shipping costs are not refundable."
)
HTTP_304 = (
    "The 304 (Not Modified) status code indicates that a conditional GET request has been\n"
    "received and would have resulted in a 200 (OK) response if it were not for the fact that\n"
    "the condition evaluated to false. The server generating a 304 response must generate any\n"
    "header fields that would have been sent in a 200 response."
)
REVENUE = (
    "Net revenue for fiscal 2022 was $4.2 billion, an increase of 12% compared with fiscal "
    "2021. Operating margin declined to 18.5% from 21.0% in the prior year, mainly due to "
    "higher raw material costs."
)
OVERTIME = (
    "Employees who work more than 40 hours in a week are entitled to overtime pay at 1.5 times "
    "their regular rate. Overtime must be approved in advance by the employee's manager."
)
CONCRETE = (
    "混凝土浇筑应连续进行，间歇时间不得超过规范规定。浇筑完毕后应在12小时内进行覆盖和浇水养护，"
    "养护时间不得少于7天。"
)
CHANGES = "重大工序变更需经项目技术负责人审批后方可实施。变更申请应提前3个工作日提交，并附技术方案和安全评估报告。"
PROFIT = "2023年公司实现营业收入58.6亿元，同比增长2.5%；归属于上市公司股东的净利润为6.3亿元，同比下降12.4%。"
CTEX = "ctex 宏包提供了 UTF8 和 GBK 两种编码选项，默认使用 UTF8 编码。使用 XeLaTeX 或 LuaLaTeX 编译时只能使用 UTF8 编码。"

PAIRS: list[tuple[str, str, Verdict]] = [
    # English
    ("Returns are accepted within 30 days of delivery.", RETURNS, S),
    ("Customers can return items within 30 days after delivery.", RETURNS, S),
    ("Returns are accepted within 60 days of delivery.", RETURNS, C),
    ("Refunds are issued within 5 business days to the original payment method.", RETURNS, S),
    ("Refunds are issued within 10 business days.", RETURNS, C),
    ("Shipping costs are refunded together with the item price.", RETURNS, C),
    (
        "Returned items must be unused and in their original packaging, and customers must "
        "include the receipt and a signed return form.",
        RETURNS,
        P,
    ),
    ("The store offers free gift wrapping for all orders.", RETURNS, U),
    (
        "A 304 response means the conditional GET would have produced a 200 response, but the "
        "condition evaluated to false.",
        HTTP_304,
        S,
    ),
    ("A 404 status code means the condition evaluated to false.", HTTP_304, C),
    (
        "A server that sends a 304 response must send the header fields of a 200 response and "
        "must also include a full message body with a checksum.",
        HTTP_304,
        P,
    ),
    ("Net revenue in fiscal 2022 was $4.2 billion.", REVENUE, S),
    ("Net revenue increased 12% in fiscal 2022.", REVENUE, S),
    ("Operating margin fell to 1.85% in fiscal 2022.", REVENUE, U),
    ("Operating margin declined mainly because of higher raw material costs.", REVENUE, S),
    ("Net revenue increased by 2.5% compared with fiscal 2021.", REVENUE, C),
    ("The company plans to open new stores in Europe next year.", REVENUE, U),
    (
        "Operating margin declined because of higher raw material costs, a weaker euro and "
        "rising wages in Asia.",
        REVENUE,
        P,
    ),
    (
        "Overtime is paid at 1.5 times the regular rate for work beyond 40 hours a week.",
        OVERTIME,
        S,
    ),
    ("Overtime is paid at twice the regular rate.", OVERTIME, U),
    ("Overtime does not need approval from a manager.", OVERTIME, C),
    ("Overtime must be approved in advance by the employee's manager.", OVERTIME, S),
    (
        "Employees are entitled to overtime pay and to an extra day of paid leave each month.",
        OVERTIME,
        P,
    ),
    # Chinese
    ("混凝土浇筑应连续进行。", CONCRETE, S),
    ("混凝土浇筑完成后应在12小时内覆盖并浇水养护。", CONCRETE, S),
    ("养护时间不得少于14天。", CONCRETE, C),
    ("养护时间不得少于七天。", CONCRETE, S),
    ("混凝土浇筑应连续进行，并且必须使用预拌商品混凝土和专用泵车。", CONCRETE, P),
    ("钢筋焊接接头应进行拉伸试验。", CONCRETE, U),
    ("重大工序变更须由项目技术负责人审批后才能实施。", CHANGES, S),
    ("变更申请应提前5个工作日提交。", CHANGES, C),
    ("变更需报总部备案。", CHANGES, U),
    ("变更申请应提前3个工作日提交，并需公司总经理签字和董事会批准。", CHANGES, P),
    ("2023年公司营业收入为58.6亿元。", PROFIT, S),
    ("2023年营业收入同比增长25%。", PROFIT, C),
    ("公司净利润同比下降12.4%。", PROFIT, S),
    ("2023年公司净利润同比增长12.4%。", PROFIT, C),
    ("ctex 宏包默认使用 UTF8 编码。", CTEX, S),
    ("使用 XeLaTeX 编译时可以选择 GBK 编码。", CTEX, U),
    ("ctex 宏包支持 UTF8 和 GBK 编码，还支持 Big5 和 EUC-KR 等编码。", CTEX, P),
    # paraphrases: what an embedder is for
    ("Purchases can be sent back up to 30 days after they arrive.", RETURNS, S),
    (
        "Staff who work over 40 hours weekly receive one and a half times their normal wage "
        "(1.5 times) for the extra hours.",
        OVERTIME,
        S,
    ),
    ("Sales in fiscal 2022 reached $4.2 billion, 12% more than a year earlier.", REVENUE, S),
    ("Profitability weakened because inputs became more expensive.", REVENUE, S),
    (
        "Purchases can be sent back up to 30 days after they arrive, and the shop pays for "
        "the return label and the original delivery.",
        RETURNS,
        P,
    ),
    ("Items must be returned with a printed invoice from the warehouse.", RETURNS, U),
    # mixed: an English claim over a Chinese passage
    ("The ctex package uses UTF8 encoding by default.", CTEX, S),
]

# A lexical scorer cannot see these: paraphrases with other words (an embedder or the judge
# must), a number written as a word, a contradiction without a number or negation, a claim in
# another language than its passage, and a new requirement that reuses the passage's words.
KNOWN_LEXICAL_MISSES = {
    "Purchases can be sent back up to 30 days after they arrive.",
    "Staff who work over 40 hours weekly receive one and a half times their normal wage "
    "(1.5 times) for the extra hours.",
    "Sales in fiscal 2022 reached $4.2 billion, 12% more than a year earlier.",
    "Profitability weakened because inputs became more expensive.",
    "Purchases can be sent back up to 30 days after they arrive, and the shop pays for "
    "the return label and the original delivery.",
    "Overtime is paid at twice the regular rate.",
    "使用 XeLaTeX 编译时可以选择 GBK 编码。",
    "The ctex package uses UTF8 encoding by default.",
    "Items must be returned with a printed invoice from the warehouse.",
    # true, but with a word the passage does not have ("customers", "produced", "paid",
    # 完成 for 完毕, 须由 for 需经): the rules leave them amber and the judge decides
    # (a lexical scorer cannot tell such a word from a changed fact: bench/verdicts.py)
    "Customers can return items within 30 days after delivery.",
    "A 304 response means the conditional GET would have produced a 200 response, but the "
    "condition evaluated to false.",
    "Overtime is paid at 1.5 times the regular rate for work beyond 40 hours a week.",
    "混凝土浇筑完成后应在12小时内覆盖并浇水养护。",
    "重大工序变更须由项目技术负责人审批后才能实施。",
}


def texts(text: str) -> list[str]:
    return [s.text for s in split_sentences(text)]


# ----------------------------------------------------------------- splitting


def test_abbreviations_decimals_and_section_numbers_stay_whole() -> None:
    text = (
        "Dr. Smith moved to the U.S. in 2019. He works at No. 5 Main St. in Boston, i.e. "
        "downtown. The rate rose 3.5% to 1,234.56 units (see Fig. 3 and Sec. 8.3.2). "
        "It was 2.5 vs. 3.0 last year. Visit example.com for details."
    )
    assert texts(text) == [
        "Dr. Smith moved to the U.S. in 2019.",
        "He works at No. 5 Main St. in Boston, i.e. downtown.",
        "The rate rose 3.5% to 1,234.56 units (see Fig. 3 and Sec. 8.3.2).",
        "It was 2.5 vs. 3.0 last year.",
        "Visit example.com for details.",
    ]


def test_a_dotted_abbreviation_ends_a_sentence_before_a_typical_first_word() -> None:
    assert texts("The plant is in the U.S. It employs 300 people.") == [
        "The plant is in the U.S.",
        "It employs 300 people.",
    ]
    assert texts("The U.S. Department of Labor sets it.") == [
        "The U.S. Department of Labor sets it."
    ]


def test_chinese_and_mixed_terminators() -> None:
    text = "混凝土浇筑应连续进行。间歇时间不得超过规定；养护不少于7天！需要审批吗？It supports GBK too. 第8.3.2条规定了要求。"
    assert texts(text) == [
        "混凝土浇筑应连续进行。",
        "间歇时间不得超过规定；",
        "养护不少于7天！",
        "需要审批吗？",
        "It supports GBK too.",
        "第8.3.2条规定了要求。",
    ]


def test_markers_after_a_terminator_belong_to_the_sentence_they_end() -> None:
    text = "Returns take 30 days. [1] Refunds take 5 days [2]. Shipping is free.[1][3] 浇筑应连续进行。【1】养护7天［2］。Done."
    assert texts(text) == [
        "Returns take 30 days. [1]",
        "Refunds take 5 days [2].",
        "Shipping is free.[1][3]",
        "浇筑应连续进行。【1】",
        "养护7天［2］。",
        "Done.",
    ]
    pairs = attach_citations(split_sentences(text), find_markers(text))
    assert [ids for _, ids in pairs] == [("1",), ("2",), ("1", "3"), ("1",), ("2",), ()]


def test_sentence_offsets_index_the_original_text() -> None:
    text = "  Intro here.\n\n- First item is long [1]\n- Second item [2]\n\n结论如下。【3】 "
    for sentence in split_sentences(text):
        assert text[sentence.start : sentence.end] == sentence.text
        assert sentence.text == sentence.text.strip()


def test_lines_split_only_at_list_items_paragraphs_and_colons() -> None:
    text = (
        "This PDF line wraps\nin the middle of a sentence and\ngoes on\n\n"
        "The answer is:\n1. First item [1]\n2. Second item\n- A bullet\n\nNew paragraph"
    )
    assert texts(text) == [
        "This PDF line wraps\nin the middle of a sentence and\ngoes on",
        "The answer is:",
        "1. First item [1]",
        "2. Second item",
        "- A bullet",
        "New paragraph",
    ]


def test_question_and_exclamation_marks_inside_tokens_do_not_split() -> None:
    assert texts("Open a.php?x=1 now! Then wait; really.") == [
        "Open a.php?x=1 now!",
        "Then wait;",
        "really.",
    ]


def test_marker_grammar() -> None:
    text = "a [1, 3] b [2-4] c 【5】 d ［6］ e [abc1234] f [x] g [12345678901]"
    assert find_markers(text) == [
        ("1", (2, 8)), ("3", (2, 8)),
        ("2", (11, 16)), ("3", (11, 16)), ("4", (11, 16)),
        ("5", (19, 22)), ("6", (25, 28)), ("abc1234", (31, 40)),
    ]  # fmt: skip


def test_attach_accepts_a_mapping_or_a_sequence_of_markers() -> None:
    text = "One claim here [2]. Another claim [1][2]. A third one."
    sentences = split_sentences(text)
    as_map = {"2": [(15, 18), (37, 40)], "1": [(34, 37)]}
    as_seq = [("2", (15, 18)), ("1", (34, 37)), ("2", (37, 40))]
    expected = [("2",), ("1", "2"), ()]
    assert [ids for _, ids in attach_citations(sentences, as_map)] == expected
    assert [ids for _, ids in attach_citations(sentences, as_seq)] == expected


# ----------------------------------------------------------------- factual or not


@pytest.mark.parametrize(
    "sentence",
    [
        "Hello!",
        "Thanks for asking.",
        "Hope this helps!",
        "The documents do not say how long the warranty lasts.",
        "The provided context does not mention the warranty.",
        "I could not find this in the sources.",
        "There is no information about this in the provided documents.",
        "Here is a summary:",
        "What is the refund period?",
        "Yes.",
        "根据提供的资料无法回答该问题。",
        "资料中没有提到保修期限。",
        "以下是总结：",
        "您好！",
        "[1]",
    ],
)
def test_not_factual(sentence: str) -> None:
    assert not is_factual(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Returns are accepted within 30 days [1].",
        "Revenue was $4.2 billion.",
        "It rose 5%.",
        "混凝土浇筑应连续进行。",
        "营收58亿。",
        "1. Overtime must be approved in advance [2]",
        "Based on the documents, refunds take 5 business days.",
    ],
)
def test_factual(sentence: str) -> None:
    assert is_factual(sentence)


# ----------------------------------------------------------------- the scorer


def test_calibration_pairs_get_the_verdict_a_reader_gives() -> None:
    wrong = [
        (claim, label, got.verdict)
        for claim, passage, label in PAIRS
        if (got := score_claim(claim, passage)).verdict is not label
        and claim not in KNOWN_LEXICAL_MISSES
    ]
    assert wrong == []
    correct = sum(score_claim(c, p).verdict is label for c, p, label in PAIRS)
    assert correct >= len(PAIRS) - len(KNOWN_LEXICAL_MISSES)


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        ("Returns are accepted within 60 days of delivery.", RETURNS),  # 30 days
        ("Operating margin fell to 1.85% in fiscal 2022.", REVENUE),  # 18.5%
        ("Net revenue increased by 25% compared with fiscal 2021.", REVENUE),  # 12%
        ("Overtime applies after 40 days of work.", OVERTIME),  # 40 hours
        ("养护时间不得少于14天。", CONCRETE),  # 7天
        ("变更申请应提前5个工作日提交。", CHANGES),  # 3个工作日
        ("2023年营业收入同比增长25%。", PROFIT),  # 2.5%
        ("2023年公司净利润同比增长12.4%。", PROFIT),  # fell 12.4%
    ],
)
def test_a_number_the_passage_does_not_state_makes_the_claim_unsupported(
    claim: str, passage: str
) -> None:
    """Unsupported, or contradicted when the passage states the same thing with another
    number (30 days, not 60; fell, not rose), quoting it."""
    result = score_claim(claim, passage)
    assert result.verdict in (Verdict.NOT_CONFIRMED, Verdict.CONTRADICTED)
    assert result.score < PARTIAL_MIN
    if result.verdict is Verdict.CONTRADICTED:
        assert "the passage says" in result.reason or "opposite direction" in result.reason


def test_thirty_days_versus_sixty_days_names_the_number() -> None:
    passage = "Notice must be given within 60 days of the event."
    assert (
        score_claim("Notice must be given within 60 days of the event.", passage).verdict
        is Verdict.SUPPORTED
    )
    result = score_claim("Notice must be given within 30 days of the event.", passage)
    assert result.verdict is Verdict.CONTRADICTED
    assert "30 days" in result.reason and "60 days" in result.reason
    assert result.quote == "Notice must be given within 60 days of the event."


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        ("The fund holds 1234 accounts.", "The fund holds 1,234 accounts in total."),
        ("The limit is 2.5% of income.", "The limit is 2.50 percent of income."),
        ("Revenue was $1.2 billion.", "Revenue was $1,200 million."),
        ("养护时间不得少于七天。", CONCRETE),
        ("Curing must last at least 7 days.", "Curing must last at least 7 calendar days."),
    ],
)
def test_numbers_are_compared_after_normalisation(claim: str, passage: str) -> None:
    assert score_claim(claim, passage).verdict is Verdict.SUPPORTED


def test_support_spans_point_at_the_passage_sentences_that_state_the_claim() -> None:
    result = score_claim(
        "Refunds go to the original payment method within 5 business days [1].", RETURNS
    )
    assert result.verdict is Verdict.SUPPORTED
    assert [RETURNS[s:e] for s, e in result.support] == [
        "Refunds are issued to the original payment method within 5 business days after the "
        "returned item is received."
    ]
    zh = score_claim("养护时间不得少于7天。", CONCRETE)
    assert [CONCRETE[s:e] for s, e in zh.support] == [
        "浇筑完毕后应在12小时内进行覆盖和浇水养护，养护时间不得少于7天。"
    ]


def test_a_claim_joining_two_passage_sentences_is_supported_by_both() -> None:
    result = score_claim(
        "Returns are accepted within 30 days and shipping costs are not refundable.", RETURNS
    )
    assert result.verdict is Verdict.SUPPORTED
    assert len(result.support) == 2


def test_a_negation_the_passage_does_not_share_lowers_the_verdict() -> None:
    passage = "Visitors must register at the front desk before entering the laboratory."
    assert (
        score_claim(
            "Visitors must register at the front desk before entering the laboratory.", passage
        ).verdict
        is Verdict.SUPPORTED
    )
    assert (
        score_claim(
            "Visitors must not register at the front desk before entering the laboratory.", passage
        ).verdict
        is Verdict.CONTRADICTED
    )


def _bag_embedder(calls: list[Sequence[str]], synonyms: dict[str, str]) -> object:
    """A fake embedder: hashed bag of words after mapping synonyms, so a paraphrase the test
    declares equivalent gets cosine 1 and unrelated text about 0."""

    def embed(batch: Sequence[str]) -> np.ndarray:
        calls.append(list(batch))
        out = np.zeros((len(batch), 64), dtype=np.float32)
        for row, text in enumerate(batch):
            for word in re.findall(r"[a-z]+", text.lower()):
                word = synonyms.get(word, word)
                if word:
                    out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        return out

    return embed


def test_an_embedder_lifts_a_paraphrase_but_never_past_partial_on_its_own() -> None:
    claim = "Purchases may be sent back up to thirty days after arrival."
    synonyms = {
        "purchases": "returns",
        "sent": "accepted",
        "after": "within",
        "arrival": "delivery",
    }
    synonyms |= dict.fromkeys(["may", "be", "back", "up", "to", "thirty", "are", "of"], "")
    assert score_claim(claim, RETURNS).verdict is Verdict.NOT_CONFIRMED
    calls: list[Sequence[str]] = []
    lifted = score_claim(claim, RETURNS, _bag_embedder(calls, synonyms))  # type: ignore[arg-type]
    assert lifted.verdict is Verdict.NOT_CONFIRMED
    assert lifted.cosine is not None and lifted.cosine > 0.8
    assert [RETURNS[s:e] for s, e in lifted.support][
        0
    ] == "Returns are accepted within 30 days of delivery."
    assert calls, "the embedder was consulted"


# ----------------------------------------------------------------- verifying an answer

SOURCES = {"1": RETURNS, "2": OVERTIME, "3": CONCRETE}


def test_each_sentence_of_an_answer_gets_one_verdict() -> None:
    answer = (
        "Sure! Returns are accepted within 30 days of delivery [1]. "
        "Overtime must be approved in advance by the employee's manager [1]. "
        "Refunds are issued within 5 business days. "
        "Shipping costs are not refundable [7]. "
        "Returns are accepted within 60 days [1]. "
        "The documents do not say whether gift cards can be returned."
    )
    verdicts = verify_answer(answer, find_markers(answer), SOURCES, SOURCES)
    got = [
        (answer[v.sentence_span[0] : v.sentence_span[1]][:24], v.verdict, v.ids, v.suggested)
        for v in verdicts
    ]
    assert got == [
        ("Sure!", Verdict.NOT_FACTUAL, (), None),
        ("Returns are accepted wit", Verdict.SUPPORTED, ("1",), None),
        ("Overtime must be approve", Verdict.NOT_CONFIRMED, ("1",), "2"),  # right claim, wrong source
        ("Refunds are issued withi", Verdict.UNCITED, (), "1"),  # inferred by Folio
        ("Shipping costs are not r", Verdict.NOT_CONFIRMED, ("7",), "1"),  # hallucinated label
        ("Returns are accepted wit", Verdict.CONTRADICTED, ("1",), None),  # 60 vs 30 days
        ("The documents do not say", Verdict.NOT_FACTUAL, (), None),
    ]
    wrong_source, uncited, invented = verdicts[2], verdicts[3], verdicts[4]
    assert "[7]" in invented.reason and "not among the sources" in invented.reason
    assert "inferred by Folio" in uncited.reason and uncited.suggested_label == "1"
    assert uncited.score >= SUPPORTED_MIN
    assert uncited.support_id == "1" and uncited.support
    assert RETURNS[uncited.support[0][0] : uncited.support[0][1]].startswith("Refunds are issued")
    assert wrong_source.support_id == "2"
    assert OVERTIME[wrong_source.support[0][0] : wrong_source.support[0][1]].startswith(
        "Overtime must"
    )
    assert not all_unsupported(verdicts)


def test_the_right_claim_citing_the_wrong_source_is_unsupported_against_it() -> None:
    claim = "重大工序变更需经项目技术负责人审批后方可实施 [2]。"
    sources = {"1": CHANGES, "2": CONCRETE}
    (verdict,) = verify_answer(claim, find_markers(claim), sources, sources)
    assert verdict.verdict is Verdict.NOT_CONFIRMED
    assert verdict.score < PARTIAL_MIN
    (uncited,) = verify_answer(
        "重大工序变更需经项目技术负责人审批后方可实施。", {}, sources, sources
    )
    assert uncited.verdict is Verdict.UNCITED and uncited.suggested == "1"


def test_with_several_ids_the_best_source_decides() -> None:
    answer = "养护时间不得少于7天【1，3】。"
    sources = {"1": CHANGES, "3": CONCRETE}
    (verdict,) = verify_answer(answer, find_markers(answer), sources, sources)
    assert verdict.verdict is Verdict.SUPPORTED
    assert verdict.ids == ("1", "3") and verdict.support_id == "3"


def test_suggestions_come_from_the_library_and_map_back_to_a_label() -> None:
    library = {"abc:1:0": RETURNS, "abc:2:0": OVERTIME, "def:9:1": REVENUE}
    sources = {"1": OVERTIME}
    (verdict,) = verify_answer(
        "Net revenue for fiscal 2022 was $4.2 billion.", {}, sources, library
    )
    assert verdict.verdict is Verdict.UNCITED
    assert verdict.suggested == "def:9:1" and verdict.suggested_label is None
    (again,) = verify_answer(
        "Overtime must be approved in advance by a manager.", {}, sources, library
    )
    assert again.suggested == "abc:2:0" and again.suggested_label == "1"


def test_an_uncited_claim_nothing_supports_gets_no_suggestion() -> None:
    (verdict,) = verify_answer(
        "The warehouse closes at noon on public holidays.", {}, SOURCES, SOURCES
    )
    assert verdict.verdict is Verdict.UNCITED and verdict.suggested is None
    assert verdict.score < SUPPORTED_MIN


def test_all_unsupported_raises_the_banner_only_when_no_fact_is_backed() -> None:
    bad = (
        "Returns are accepted within 90 days [1]. The warehouse closes at noon on holidays. Thanks!"
    )
    assert all_unsupported(verify_answer(bad, find_markers(bad), SOURCES, SOURCES))
    good = bad + " Overtime must be approved in advance [2]."
    assert not all_unsupported(verify_answer(good, find_markers(good), SOURCES, SOURCES))
    misattributed = "Overtime must be approved in advance by the employee's manager [1]."
    (verdict,) = verify_answer(misattributed, find_markers(misattributed), SOURCES, SOURCES)
    assert verdict.verdict is Verdict.NOT_CONFIRMED and verdict.suggested == "2"
    assert not all_unsupported([verdict])  # the documents do back it, in another source
    refusal = "The documents do not say. Please verify manually."
    assert not all_unsupported(verify_answer(refusal, {}, SOURCES, SOURCES))


def test_claim_events_serialise() -> None:
    answer = "Returns are accepted within 30 days of delivery [1]."
    (verdict,) = verify_answer(answer, find_markers(answer), SOURCES, SOURCES)
    data = verdict.to_json()
    assert data["event"] == "claim" and data["verdict"] == "supported"
    assert data["support_id"] == "1" and data["support"] == [[0, 48]]


def test_embeddings_are_computed_once_per_text() -> None:
    calls: list[Sequence[str]] = []
    embed = _bag_embedder(calls, {})
    answer = "Returns are accepted within 30 days [1]. Refunds take 5 business days [1]. Overtime needs approval."
    verify_answer(answer, find_markers(answer), SOURCES, SOURCES, embed)  # type: ignore[arg-type]
    embedded = [t for batch in calls for t in batch]
    assert len(embedded) == len(set(embedded))


# ----------------------------------------------------------------- streaming

STREAM_ANSWERS = [
    "Sure! Returns are accepted within 30 days of delivery. [1] Overtime must be approved "
    "in advance [2][1]. Refunds are issued within 5 business days. Shipping costs are not "
    "refundable [7].",
    "混凝土浇筑应连续进行。【3】养护时间不得少于14天［3］；Dr. Smith approved it on Jan. 5 in "
    "the U.S. It costs 3.5% more.\n\nHere is a list:\n1. First item [1]\n2. Second item [2]\n- done",
    "The rate is 2.5 vs. 3.0 in Sec. 8.3.2 [1]. I could not find more. [2",
    # each of these once made a streamed sentence differ from the batch one
    "Here is a list:！ [[1]\n1. Returns are accepted within 30 days [1]",
    "It is sold in the U.S. Thermo Fisher makes it [2]. Done here now.",
    "Returns are accepted. - [1] Overtime must be approved.",
    # a clause without a marker takes the marker that ends its sentence
    "混凝土浇筑应连续进行；养护7天 [3]。Returns are accepted; overtime must be approved [1]. Done; done.",
]


def _stream(answer: str, step: int) -> list[ClaimVerdict]:
    verifier = StreamingVerifier(SOURCES, SOURCES)
    emitted: list[ClaimVerdict] = []
    for end in range(step, len(answer) + step, step):
        partial = answer[: min(end, len(answer))]
        seen = [(i, s) for i, s in find_markers(partial)]  # a marker counts once it is closed
        emitted += verifier.feed(partial, seen)
    emitted += verifier.finish(answer, find_markers(answer))
    assert emitted == verifier.verdicts
    return emitted


@pytest.mark.parametrize("answer", STREAM_ANSWERS)
@pytest.mark.parametrize("step", [1, 3, 7])
def test_streaming_emits_the_batch_verdicts_each_once(answer: str, step: int) -> None:
    batch = verify_answer(answer, find_markers(answer), SOURCES, SOURCES)
    streamed = _stream(answer, step)
    assert streamed == batch
    assert len({v.sentence_span for v in streamed}) == len(streamed)


def test_a_sentence_is_emitted_once_its_markers_arrived_and_the_next_began() -> None:
    verifier = StreamingVerifier(SOURCES, SOURCES)
    text = "Returns are accepted within 30 days of delivery."
    assert verifier.feed(text, []) == []
    text += " ["
    assert verifier.feed(text, []) == []  # a marker may be arriving
    text += "1]"
    assert verifier.feed(text, [("1", (49, 52))]) == []  # another marker may follow
    text += " Over"
    assert verifier.feed(text, [("1", (49, 52))]) == []  # the first word may still grow
    text += "time "
    (first,) = verifier.feed(text, [("1", (49, 52))])
    assert (
        first.verdict is Verdict.SUPPORTED
        and first.ids == ("1",)
        and first.sentence_span == (0, 52)
    )
    text += "must be approved in advance [2]."
    assert verifier.feed(text, [("1", (49, 52)), ("2", (86, 89))]) == []
    (last,) = verifier.finish(text, [("1", (49, 52)), ("2", (86, 89))])
    assert last.verdict is Verdict.SUPPORTED and last.ids == ("2",)
    with pytest.raises(RuntimeError):
        verifier.feed(text + " More.", [])


def test_a_chinese_sentence_is_emitted_at_the_first_character_of_the_next() -> None:
    verifier = StreamingVerifier(SOURCES, SOURCES)
    assert verifier.feed("混凝土浇筑应连续进行。【3】", [("3", (11, 14))]) == []
    (first,) = verifier.feed("混凝土浇筑应连续进行。【3】养", [("3", (11, 14))])
    assert first.verdict is Verdict.SUPPORTED and first.sentence_span == (0, 14)


def test_table_rows_of_a_passage_are_units_of_support() -> None:
    passage = (
        "Key figures\nItem 2018 2017 Change\nRevenue (yuan) 4,755,785.11 5,699,227.63 -16.55%\n"
        "Net profit (yuan) -4,648,986.52 -15,563,758.44 70.13%\nTotal assets grew slightly."
    )
    result = score_claim("Revenue was 4,755,785.11 yuan (-16.55%).", passage)
    assert result.verdict is Verdict.SUPPORTED
    assert [passage[s:e] for s, e in result.support] == [
        "Revenue (yuan) 4,755,785.11 5,699,227.63 -16.55%"
    ]
    assert len(split_sentences(passage)) == 1  # lines of an answer are not cut as table rows


def test_a_clause_ending_at_a_semicolon_shares_the_marker_that_ends_its_sentence() -> None:
    answer = "混凝土浇筑应连续进行；养护7天 [3]。Returns are accepted; it rains; overtime must be approved [1]."
    verdicts = verify_answer(answer, find_markers(answer), SOURCES, SOURCES)
    assert [v.ids for v in verdicts] == [("3",), ("3",), ("1",), ("1",), ("1",)]
    assert verdicts[0].verdict is not Verdict.UNCITED
    # a clause with its own marker keeps it; one followed by an unmarked sentence stays uncited
    own = "混凝土浇筑应连续进行 [3]；养护7天 [1]。"
    assert [v.ids for v in verify_answer(own, find_markers(own), SOURCES, SOURCES)] == [("3",), ("1",)]
    bare = "Returns are accepted; overtime must be approved. Done [1]."
    assert [v.ids for v in verify_answer(bare, find_markers(bare), SOURCES, SOURCES)][:2] == [(), ()]


def test_streaming_rejects_text_that_does_not_grow() -> None:
    verifier = StreamingVerifier(SOURCES)
    verifier.feed("Returns are accepted.", [])
    with pytest.raises(ValueError):
        verifier.feed("Something else.", [])


FRAGMENTS = [
    "Returns are accepted within 30 days", "Overtime must be approved", "混凝土浇筑应连续进行",
    "养护7天", ".", "。", "！", "?", "；", " ", "\n", "\n\n", "- ", "1. ", "2) ", "[1]", " [2]",
    "【3】", "［2］", "[abc1234]", " [", "]", "Dr. Smith", " e.g. the rate", " U.S.", " The",
    " it", " vs. ", "No. 5", " 3.5%", "1,234.56", " Sec. 8.3.2", " etc.", "...", "……",
    "\"quoted.\"", "“引用。”", ")", "(see Fig. 2)", "# Heading", "|a|b|", "Here is a list:",
    " I could not find it", "* ",
]  # fmt: skip


def test_streaming_matches_batch_on_random_fragment_soup() -> None:
    import random

    rng = random.Random(7)
    for _ in range(1000):
        answer = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 20)))
        verifier = StreamingVerifier(SOURCES, SOURCES)
        streamed: list[ClaimVerdict] = []
        end = 0
        while end < len(answer):
            end = min(len(answer), end + rng.randint(1, 6))
            streamed += verifier.feed(answer[:end], find_markers(answer[:end]))
        streamed += verifier.finish(answer, find_markers(answer))
        assert streamed == verify_answer(answer, find_markers(answer), SOURCES, SOURCES), answer


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Der DMCA wurde am 28. Oktober 1998 unterzeichnet [1]. Danach kam mehr.", 2),
        ("Der Beweis steht in der 0. Auflage des Buches [2].", 1),
        ("Das war im 19. Jahrhundert [1].", 1),
        ("Es waren 28. Danach kam er.", 2),  # a number, then a new sentence
        ("It was 1998. Then more.", 2),
    ],
)
def test_a_german_ordinal_does_not_end_the_sentence(text: str, count: int) -> None:
    assert len(split_sentences(text)) == count


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Die Frist richtet sich nach § 5 Abs. 2 Satz 1 BGB und gilt sofort.", 1),
        ("Vgl. Art. 12 Abs. 1 GG [1]. Danach kam mehr.", 2),
        ("Das steht in Kap. 3 und Bd. 2 der 2. Aufl. von 2019.", 1),
        ("Der Beweis kann in Stöcker auf S.\n301f nachgelesen werden.", 1),  # wrapped in the PDF
        ("See pp. 12-14 and Fig.\n3 for details.", 1),
        ("Das war es.\n2019 kam mehr.", 2),  # a sentence, then a year on the next line
    ],
)
def test_a_numbered_abbreviation_keeps_its_number(text: str, count: int) -> None:
    assert len(split_sentences(text)) == count


def test_a_number_that_names_a_thing_is_not_a_count_of_another() -> None:
    """"408 Request Timeout" names the status the sentence calls "408 status": not the
    "21,015,324 questions vs passages" mismatch (held-out en-a-004 went red on this)."""
    passage = ("10.4.9 408 Request Timeout\n   The client did not produce a request within the time "
               "that the server\n   was prepared to wait.")
    sentence = ("A 408 status means the client did not produce a request within the time that the "
                "server was prepared to wait.")
    assert score_claim(sentence, passage).verdict in (Verdict.SUPPORTED, Verdict.NOT_CONFIRMED)
    counted = score_claim("The corpus has 21,015,324 questions.", "The corpus has 21,015,324 passages in total.")
    assert counted.verdict is Verdict.NOT_CONFIRMED and "another thing" in counted.reason


CONTROL_FRAMES = ("Control frames can be interjected in the middle of a fragmented message. All control"
                  " frames MUST have a payload length of 125 bytes or less and MUST NOT be fragmented.")


@pytest.mark.parametrize("claim", [
    "所有控制帧的负载长度必须不超过 125 字节，并且不得分片。",
    "Alle Kontrollframes dürfen höchstens 125 Bytes Nutzlast haben und dürfen nicht fragmentiert werden.",
    "控制帧不能插在分片消息的中间。",  # false, but no word of it can be matched: the judge decides
])
def test_a_sentence_in_another_language_than_its_passage_is_left_to_the_judge(claim: str) -> None:
    """Words cannot be matched across languages: amber (the judge weighs it), not red."""
    result = score_claim(claim, CONTROL_FRAMES)
    assert result.verdict is Verdict.NOT_CONFIRMED
    assert "another language" in result.reason


def test_across_languages_a_number_the_passage_lacks_is_still_unsupported() -> None:
    result = score_claim("控制帧的负载最多可以有 256 字节。", CONTROL_FRAMES)
    assert result.verdict is Verdict.NOT_CONFIRMED and "256" in result.reason
    # in the passage's own language an unrelated sentence stays unsupported
    assert score_claim("Ping frames carry the time of day.", CONTROL_FRAMES).verdict is Verdict.NOT_CONFIRMED


@pytest.mark.parametrize(("claim", "passage"), [
    ("FAA 必须在 2020 年 9 月 21 日之前收到意见。", "The FAA must receive comments on this AD action by September 21, 2020."),
    ("DMCA 于 1998 年 10 月 28 日签署成为法律。", "The DMCA was signed into law by President Clinton on Oct. 28, 1998."),
    ("Die Frist endet am 21. September 2020.", "Comments are due by September 21, 2020."),
])
def test_a_month_named_beside_a_day_or_year_states_its_number(claim: str, passage: str) -> None:
    assert score_claim(claim, passage).rule is not Rule.UNSUPPORTED


def test_a_month_the_passage_does_not_name_is_a_missing_number() -> None:
    result = score_claim("FAA 必须在 2020 年 10 月 21 日之前收到意见。",
                         "The FAA must receive comments on this AD action by September 21, 2020.")
    assert result.verdict in (Verdict.NOT_CONFIRMED, Verdict.CONTRADICTED)


def test_a_question_the_passage_asks_contradicts_nothing() -> None:
    """An FAQ's question heading is not a statement: the claim is weighed against the answer."""
    faq = ("9.1 当处理完一个 asy 文件后如何禁止对 PS 查看器的自动调用？ 事实上默认是不自动调用的，除非你恰好是在用"
           "微软 Windows。Windows 用户可以通过命令行选项 -noV 来禁止它，或者把如下代码放入 config.asy 文件中。")
    result = score_claim("在 Windows 下处理完 asy 文件后，可以用命令行选项 -noV 禁止自动调用 PS 查看器 [1]。", faq)
    assert result.verdict is not Verdict.CONTRADICTED, result.reason


def test_square_metres_written_either_way_are_one_unit() -> None:
    passage = '神鹰集团将"朗臻·幸福家园"小区的 14 间商铺 (共计建筑面积3,805.07 平米) 抵押给菲达环保作为反担保。'
    result = score_claim("神鹰集团拿朗臻·幸福家园小区的 14 间商铺做反担保，面积 3,805.07 平方米 [1]。", passage)
    assert result.rule is not Rule.UNSUPPORTED, result.reason
    wrong = score_claim("神鹰集团拿朗臻·幸福家园小区的 14 间商铺做反担保，面积 3,805.07 公里 [1]。", passage)
    assert wrong.verdict in (Verdict.NOT_CONFIRMED, Verdict.CONTRADICTED)


def test_a_passage_of_formulas_is_not_another_language() -> None:
    """A German sentence citing a passage of formulas that names no language of its own is
    matched by its words, and an unrelated one stays unsupported, not amber 'across languages'."""
    formulas = "f(x) = x^2 + 3x, g(x) = sin(x) / x, f'(x) = 2x + 3, g'(0) = 0, lim x -> 0 g(x) = 1"
    result = score_claim("Die Kurve beschreibt den Umsatz der Firma im dritten Quartal.", formulas)
    assert result.verdict is Verdict.NOT_CONFIRMED
    assert "another language" not in result.reason


@pytest.mark.parametrize(("text", "language"), [
    ("所有控制帧的负载长度必须不超过 125 字节。", "zh"),
    (CONTROL_FRAMES, "en"),
    ("Die Frist endet mit dem Ablauf des Tages, an dem die Erklärung bei der Behörde eingeht.", "de"),
    ("f(x) = x^2 + 3x, g(x) = sin(x)", None),
    ("Berlin, Paris, London, Rom", None),
])
def test_the_language_of_a_passage_is_told_only_when_its_words_say_it(text: str, language: str | None) -> None:
    assert text_language(text) == language
