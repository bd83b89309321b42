"""What a passage binds to what, and a claim unbinds (core/verdicts/bindings.py via
score_claim): a condition dropped from the clause that states a claim, a party's thing
given to the other party, a number given to another group, a ticked box answered
otherwise, and sentences that repeat themselves or break off. Quotes of RFC 6455 p. 19,
the ctex and xeCJK manuals and the DBDQ 2018 Q1 report of ../shared/corpus (as in
bench/data/verdict_pairs.jsonl, questions issue-s6-*). Pure Python."""

from __future__ import annotations

from desktop_app.core.types import Verdict
from desktop_app.core.verdicts.verify import score_claim

VALIDATE = (
    "The client MUST validate the server’s response as follows:\n 1. If the status code received"
    " from the server is not 101, the\n client handles the response per HTTP [RFC2616] procedures."
    " In\n particular, the client might perform authentication if it\n receives a 401 status code."
)
EXTENSIONS = (
    " 5. If the response includes a |Sec-WebSocket-Extensions| header\n field and this header field"
    " indicates the use of an extension\n that was not present in the client’s handshake (the server"
    " has\n indicated an extension not requested by the client), the client\n MUST _Fail the"
    " WebSocket Connection_."
)
CCT = (
    "缺省 CCT 会使用 CJK 字库，因为这种字库方式比传统 CCT 字库更方便，兼\n容性也更好。"
    "如果要使用传统 CCT 字库，则还要加上 CCTfont 选项。"
)
FALLBACK = "设置备用字体，如果主字体没有相应的符号，将尝试使用备用字体显示。"
BOXES = (
    "归属于上市公司股东的净资产（元） -200,136,703.31 -198,631,842.02 -0.76%\n"
    "非经常性损益项目和金额\n√ 适用 □ 不适用\n单位：元"
)
AUDIT = "二、审计报告\n第一季度报告是否经过审计\n□ 是 √ 否\n"
BATCH = "We use a batch size of 32 for the base model and 8 for the tiny model in all runs."


def verdict(sentence: str, passage: str) -> Verdict:
    return score_claim(sentence, passage).verdict


def test_a_condition_the_claim_leaves_out_makes_it_unsupported_one_it_keeps_does_not() -> None:
    dropped = score_claim("The client handles the server's response per HTTP procedures [1].", VALIDATE)
    assert dropped.verdict is Verdict.NOT_CONFIRMED and "condition" in dropped.reason
    assert "not 101" in dropped.quote
    assert verdict("The client might perform authentication if it receives a 401 status code [1].",
                   VALIDATE) is Verdict.SUPPORTED
    assert verdict("The client must fail the WebSocket Connection [1].", EXTENSIONS) is Verdict.NOT_CONFIRMED
    assert verdict("配合 CCT 使用时，还要加上 CCTfont 选项 [1]。", CCT) is Verdict.NOT_CONFIRMED
    assert verdict("如果要使用传统 CCT 字库，还要加上 CCTfont 选项 [1]。", CCT) is Verdict.SUPPORTED
    assert verdict("设置备用字体后，将尝试使用备用字体显示 [1]。", FALLBACK) is Verdict.NOT_CONFIRMED


def test_a_thing_given_to_the_other_party_is_contradicted_with_the_quote() -> None:
    swapped = score_claim(
        "The client must fail the WebSocket connection if the server indicates an extension that was"
        " not present in the server's handshake [1].", EXTENSIONS)
    assert swapped.verdict is Verdict.CONTRADICTED and "other party" in swapped.reason
    assert swapped.quote.startswith("If the response includes")
    assert verdict(
        "The client must fail the WebSocket connection if the server indicates an extension that was"
        " not present in the client's handshake [1].", EXTENSIONS) is Verdict.SUPPORTED


def test_a_number_given_to_another_group_is_contradicted() -> None:
    assert verdict("The batch size is 8 for the base model [1].", BATCH) is Verdict.CONTRADICTED
    assert verdict("The batch size is 32 for the base model [1].", BATCH) is Verdict.SUPPORTED


def test_a_ticked_box_answered_otherwise_is_contradicted() -> None:
    wrong = score_claim("非经常性损益项目和金额一项不适用 [1]。", BOXES)
    assert wrong.verdict is Verdict.CONTRADICTED and wrong.quote.endswith("适用")
    agreed = score_claim("非经常性损益项目和金额一项适用 [1]。", BOXES)
    # the ticked box is the evidence: quoted, so the judge is not asked to doubt it
    assert agreed.verdict is Verdict.SUPPORTED and agreed.quote == "非经常性损益项目和金额 适用"
    assert verdict("第一季度报告经过了审计 [1]。", AUDIT) is Verdict.CONTRADICTED
    assert verdict("第一季度报告没有经过审计 [1]。", AUDIT) is not Verdict.CONTRADICTED


def test_sentences_that_repeat_themselves_or_break_off_are_unsupported() -> None:
    assert verdict("The client handles the response the response the response per HTTP [1].",
                   VALIDATE) is Verdict.NOT_CONFIRMED
    assert verdict("and the client handles the response per HTTP procedures [1].", VALIDATE) is Verdict.NOT_CONFIRMED
    assert verdict("The client handles the response per HTTP procedures of the [1].", VALIDATE) is Verdict.NOT_CONFIRMED


REDIRECT = (
    "In\n particular, the client might perform authentication if it\n receives a 401 status code;"
    " the server might redirect the client\n using a 3xx status code (but clients are not required"
    " to follow\n them), etc."
)
CAUSBY = (
    "The airplanes, of course, never touched the surface of the Causbys’ land. But if, as\n"
    "Blackstone, Kent, and Coke had said, their land reached to “an indeﬁ-\nnite extent, upwards,”"
    " then the government was trespassing on their\nproperty, and the Causbys wanted it to stop."
)


def test_a_negation_in_brackets_negates_only_what_the_brackets_say() -> None:
    assert verdict("The server might redirect the client using a 3xx status code [1].", REDIRECT) \
        is Verdict.SUPPORTED
    assert verdict("Clients are required to follow a 3xx redirect from the server [1].", REDIRECT) \
        is Verdict.CONTRADICTED


def test_the_if_part_of_if_then_stated_as_a_fact_is_unsupported() -> None:
    assert verdict("The Causbys' land reached to an indefinite extent upwards [1].", CAUSBY) \
        is Verdict.NOT_CONFIRMED
    assert verdict("The Causbys wanted the government to stop [1].", CAUSBY) is Verdict.SUPPORTED
