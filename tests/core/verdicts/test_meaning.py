"""Verdicts that look at meaning (issue 14): the sentences the issue reported with the
passages they cited (short quotes of RFC 2616 p. 47, RFC 6455 p. 29, the DPR paper p. 4
and Free Culture p. 2 of ../shared/corpus, as Folio extracts them), negation and modal
verbs in English, Chinese and German, conditions and reports stated as facts, the party
a figure belongs to, and sentence splitting around abbreviations. Pure Python."""

from __future__ import annotations

import pytest

from desktop_app.core.text.markers import find_markers
from desktop_app.core.types import Verdict
from desktop_app.core.verdicts import meaning
from desktop_app.core.verdicts.claim_score import Rule
from desktop_app.core.verdicts.verify import score_claim, split_sentences, verify_answer

RFC2616_P47 = (
    "Clients that use persistent connections SHOULD limit the number of\n"
    "   simultaneous connections that they maintain to a given server. A\n"
    "   single-user client SHOULD NOT maintain more than 2 connections with\n"
    "   any server or proxy. A proxy SHOULD use up to 2*N connections to\n"
    "   another server or proxy, where N is the number of simultaneously\n"
    "   active users. These guidelines are intended to improve HTTP response\n"
    "   times and avoid congestion."
)
RFC6455_P29 = (
    "   Payload length:  7 bits, 7+16 bits, or 7+64 bits\n"
    '      The length of the "Payload data", in bytes: if 0-125, that is the\n'
    "      payload length.  If 126, the following 2 bytes interpreted as a\n"
    "      16-bit unsigned integer are the payload length.  If 127, the\n"
    "      following 8 bytes interpreted as a 64-bit unsigned integer (the\n"
    "      most significant bit MUST be 0) are the payload length."
)
DPR_P4 = (
    "We then split each article into multiple, disjoint text\n"
    "blocks of 100 words as passages, serving as our\n"
    "basic retrieval units, following (Wang et al., 2019),\n"
    "which results in 21,015,324 passages in the end.5\n"
    "Each passage is also prepended with the title of the\n"
    "Wikipedia article where the passage is from, along\n"
    "with an [SEP] token."
)
CAUSBY = (
    "In 1945, these questions became a federal case. When North Car-\n"
    "olina farmers Thomas Lee and Tinie Causby started losing chickens\n"
    "because of low-ﬂying military aircraft (the terriﬁed chickens appar-\n"
    "ently ﬂew into the barn walls and died), the Causbys ﬁled a lawsuit say-\n"
    "ing that the government was trespassing on their land. The airplanes,\n"
    "of course, never touched the surface of the Causbys’ land. But if, as\n"
    "Blackstone, Kent, and Coke had said, their land reached to “an indeﬁ-\n"
    "nite extent, upwards,” then the government was trespassing on their\n"
    "property, and the Causbys wanted it to stop."
)


def test_the_client_given_the_proxys_2n_connections_is_contradicted_with_the_quote() -> None:
    result = score_claim(
        "A single-user client should keep up to 2*N connections to one server, where N is the "
        "number of simultaneously active users [1].",
        RFC2616_P47,
    )
    assert result.verdict is Verdict.CONTRADICTED
    assert "SHOULD NOT maintain more than 2 connections" in result.quote
    assert "the passage says: " in result.reason


def test_the_payload_length_126_sentence_is_supported() -> None:
    result = score_claim(
        "A value of 126 in the 7-bit payload length field signals that the payload length is "
        "16 bits long [2].",
        RFC6455_P29,
    )
    assert result.verdict is Verdict.SUPPORTED


def test_the_passage_count_the_paper_states_is_supported() -> None:
    assert score_claim("This resulted in 21,015,324 passages in the corpus [1].", DPR_P4).verdict \
        is Verdict.SUPPORTED
    # the same figure given to another thing is not confirmed (not red: the judge is asked)
    other = score_claim("This resulted in 21,015,324 questions in the corpus [1].", DPR_P4)
    assert other.verdict is Verdict.NOT_CONFIRMED and "21,015,324 passages" in other.reason
    assert other.rule is Rule.PARTIAL and not other.quote


def test_a_condition_and_a_report_stated_as_fact_are_not_supported() -> None:
    result = score_claim("The government was trespassing on their land [2].", CAUSBY)
    assert result.verdict is Verdict.NOT_CONFIRMED
    assert result.quote and "trespassing" in result.quote
    # what the passage does state as a fact stays green
    assert score_claim("The Causbys filed a lawsuit in 1945 [2].", CAUSBY).verdict is Verdict.SUPPORTED


def test_the_causby_sentence_is_one_sentence_and_keeps_its_citation() -> None:
    text = "The Causbys filed a lawsuit against the U. S. government in 1945 [2]. It went far."
    assert [s.text for s in split_sentences(text)] == [
        "The Causbys filed a lawsuit against the U. S. government in 1945 [2].", "It went far."
    ]
    (first, _) = verify_answer(text, find_markers(text), {"2": CAUSBY})
    assert first.ids == ("2",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It was the U. S. Army. Then it ended.", ["It was the U. S. Army.", "Then it ended."]),
        ("The U.S. Army won. The U.S. government lost.", ["The U.S. Army won.", "The U.S. government lost."]),
        ("Use a cache, e.g. a proxy, i.e. an intermediary. Done.",
         ["Use a cache, e.g. a proxy, i.e. an intermediary.", "Done."]),
        ("As Fig. 3 shows, rates fell. See No. 5 too.", ["As Fig. 3 shows, rates fell.", "See No. 5 too."]),
        ("Karpukhin et al. trained DPR. Dr. Chen wrote DrQA.",
         ["Karpukhin et al. trained DPR.", "Dr. Chen wrote DrQA."]),
        ("John F. Kennedy spoke. It rained.", ["John F. Kennedy spoke.", "It rained."]),
        ("Es gibt z. B. Zahlen, d. h. Werte. Siehe Nr. 5 bzw. Abb. 2.",
         ["Es gibt z. B. Zahlen, d. h. Werte.", "Siehe Nr. 5 bzw. Abb. 2."]),
    ],
)
def test_abbreviations_do_not_end_a_sentence(text: str, expected: list[str]) -> None:
    assert [s.text for s in split_sentences(text)] == expected


@pytest.mark.parametrize(
    ("claim", "passage", "verdict"),
    [
        # negation and modal verbs
        ("A client SHOULD NOT send a body with a GET request.",
         "A client SHOULD send a body with a GET request only when the server expects one.", Verdict.CONTRADICTED),
        ("Servers MAY close a connection in the middle of transmitting a response.",
         "Servers SHOULD NOT close a connection in the middle of transmitting a response.", Verdict.CONTRADICTED),
        ("The client MAY mask frames it sends to the server.",
         "The client MUST mask all frames that it sends to the server.", Verdict.CONTRADICTED),
        ("The client MUST mask all frames that it sends to the server.",
         "The client MUST mask all frames that it sends to the server.", Verdict.SUPPORTED),
        ("建设用地应当占用耕地。", "建设用地不得占用耕地。", Verdict.CONTRADICTED),
        ("施工单位可以在夜间施工。", "施工单位不得在夜间施工。", Verdict.CONTRADICTED),
        ("施工单位不得在夜间施工。", "施工单位不得在夜间施工。", Verdict.SUPPORTED),
        ("Der Server darf die Verbindung nicht schließen.", "Der Server darf die Verbindung schließen.",
         Verdict.CONTRADICTED),
        # a condition the claim leaves out
        ("The server closes the connection.",
         "If the client sends an invalid frame, the server closes the connection.", Verdict.NOT_CONFIRMED),
        ("If the client sends an invalid frame, the server closes the connection.",
         "If the client sends an invalid frame, the server closes the connection.", Verdict.SUPPORTED),
        ("土地出让金全额返还给企业。", "除非项目按期竣工，土地出让金全额返还给企业。", Verdict.NOT_CONFIRMED),
        # the party a figure belongs to
        ("A server SHOULD use up to 2*N connections to another proxy.",
         "A client SHOULD NOT use more than 2 connections. A proxy SHOULD use up to 2*N connections "
         "to another server or proxy.", Verdict.CONTRADICTED),
    ],
)
def test_meaning_checks(claim: str, passage: str, verdict: Verdict) -> None:
    result = score_claim(claim, passage)
    assert result.verdict is verdict, result.reason
    if verdict is Verdict.CONTRADICTED:
        assert result.quote and result.quote in " ".join(passage.split())


def test_negation_and_modality_words() -> None:
    assert meaning.negated("A client SHOULD NOT maintain more than 2 connections")
    assert not meaning.negated("no more than 2 connections")  # a bound, not a negation
    assert meaning.negated("不得占用耕地") and not meaning.negated("不超过三天")
    assert meaning.modalities("The client MUST send it; the server MAY reply") == {"must", "may"}
    assert meaning.modalities("审批后方可实施") == set()  # "only then": no obligation


# Contradicted must be earned: a conflict stands only where the passage speaks of the same
# thing. True sentences the rules used to mark red (bench/data/verdict_pairs.jsonl, tuning).
@pytest.mark.parametrize(("claim", "passage"), [
    # the same negation, written otherwise ("don’t"), in the sentence that states the claim
    ("BM25 negatives are top BM25 passages that do not contain the answer but match most question tokens.",
     "BM25: top passages returned by BM25 which don’t contain the answer but match most question tokens; "
     "Our best model uses gold passages from the same mini-batch and one BM25 negative passage."),
    # a negation of another word (未经审计: unaudited) says nothing against a revenue figure
    ("神鹰集团 2015 年末的营业收入为 18.18 亿元。",
     "根据神鹰集团提供的2015 年度财务报表(未经审汁)和20t4 年度审计报告， 神鹰集团 2015 年末资产总额 "
     "189,175.14 万元， 营业收入18.18 亿 元， 净利润9, 568.40 万元。"),
    # the claim's own word is in the sentence that states it ("in bytes" beside "7 bits")
    ("The length of the Payload data is given in bytes.",
     "Payload length: 7 bits, 7+16 bits, or 7+64 bits The length of the \"Payload data\", in bytes: "
     "if 0-125, that is the payload length."),
    # the obligation of a clause under "ohne dass" is not the claim's
    ("Mit sudo kann man limitierte administrative Rechte einräumen, ohne das root-Passwort mitzuteilen.",
     "Mit einer durchdachten und vorsichtigen Konfiguration kann sudo(8) auf einem System, das Sie sich mit "
     "mehreren Leuten teilen, limitierte administrative Rechte einräumen, ohne dass Sie anderen das "
     "root-Passwort mitteilen müssen."),
])
def test_a_true_sentence_is_not_red_for_a_conflict_about_another_thing(claim: str, passage: str) -> None:
    assert score_claim(claim, passage).verdict is not Verdict.CONTRADICTED, score_claim(claim, passage).reason


@pytest.mark.parametrize(("claim", "passage", "conflict"), [
    ("BM25 negatives are top BM25 passages that contain the answer.",
     "BM25: top passages returned by BM25 which don’t contain the answer but match most question tokens;",
     "negation"),
    ("LaTeX 把逗号当成小数点而不是标点。", "LaTeX 把逗号当成标点而不是当成小数点。", "negation"),
    ("Shipping costs are refunded together with the item price.",
     "Refunds are issued within 5 business days. Shipping costs are not refundable.", "negation"),
])
def test_a_conflict_about_the_same_thing_stays_red_and_says_what_conflicts(
    claim: str, passage: str, conflict: str,
) -> None:
    score = score_claim(claim, passage)
    assert score.verdict is Verdict.CONTRADICTED and score.conflict == conflict and score.quote, score.reason
