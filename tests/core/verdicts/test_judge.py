"""The optional judge with a fake model: which sentences it asks about, how its yes/no
changes their verdicts, the DuckDB cache, and its place after the answer in ``answer()``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.answer import answering
from desktop_app.core.errors import Cancelled
from desktop_app.core.library.store import Store
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFinished, ClaimVerdict, Passage, Retrieval, Verdict
from desktop_app.core.verdicts import Verifier, judge
from desktop_app.core.verdicts.judge import Judge, JudgedPassage, parse_reply, sentence_sha
from desktop_app.core.verdicts.verify import verify_answer
from tests.fakes import FakeGenerator

REPAIRS = (
    "Section 4 Repairs. The tenant must report damage to the landlord within 30 days of "
    "discovering it. The landlord pays for repairs caused by normal wear."
)
RENT = "Section 5 Rent. Rent is due on the first day of each month. A late fee of 50 dollars applies."
PASSAGES = {"1": JudgedPassage("aaaa:2:0", REPAIRS), "2": JudgedPassage("aaaa:3:0", RENT)}
# supported / a word the passage lacks (partial: the judge is asked) / number mismatch /
# uncited / a greeting
ANSWER = (
    "The tenant must report damage within 30 days [1]. "
    "Occupants must report damage to the landlord [1]. "
    "Damage must be reported within 60 days [1]. "
    "Rent is due on the first day of each month. "
    "I hope this helps!"
)


class JudgingGenerator(FakeGenerator):
    """Answers judge questions with ``reply(sentence, passage)``; anything else streams the
    enqueued answers like FakeGenerator."""

    def __init__(self, answers: Sequence[str] = (), reply: Callable[[str, str], str] = lambda s, p: "yes"):
        super().__init__(answers)
        self.reply = reply
        self.judge_calls: list[dict[str, Any]] = []

    def stream(self, messages: Sequence[dict[str, str]], *, max_tokens: int, temperature: float,
               grammar: str | None = None, should_cancel: Callable[[], bool] = lambda: False,
               steering: object = None) -> Iterator[str]:
        user = messages[-1]["content"]
        if judge.QUESTION not in user:
            return super().stream(messages, max_tokens=max_tokens, temperature=temperature,
                                  grammar=grammar, should_cancel=should_cancel)
        passage = user.split("Passage:\n", 1)[1].split("\n\nSentence: ", 1)[0]
        sentence = user.split("\n\nSentence: ", 1)[1].split("\n\n", 1)[0]
        self.judge_calls.append({"sentence": sentence, "passage": passage, "max_tokens": max_tokens,
                                 "temperature": temperature, "grammar": grammar})
        if should_cancel():
            raise Cancelled()
        return iter([self.reply(sentence, passage)])


def rule_verdicts() -> list[ClaimVerdict]:
    return verify_answer(ANSWER, _markers(ANSWER), {k: p.text for k, p in PASSAGES.items()})


def _markers(text: str) -> dict[str, list[tuple[int, int]]]:
    from desktop_app.core.text.markers import find_markers

    out: dict[str, list[tuple[int, int]]] = {}
    for cid, span in find_markers(text):
        out.setdefault(cid, []).append(span)
    return out


def sentence_of(verdict: ClaimVerdict) -> str:
    return ANSWER[verdict.sentence_span[0] : verdict.sentence_span[1]]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = Store(tmp_path / "lib.duckdb")
    yield db
    db.close()


def test_red_and_unsure_cited_sentences_are_asked_reds_first() -> None:
    verdicts = rule_verdicts()
    by_start = {sentence_of(v).split()[0]: v for v in verdicts}
    assert by_start["The"].verdict is Verdict.SUPPORTED
    assert judge.worth_asking(by_start["Occupants"]) and by_start["Occupants"].verdict is Verdict.NOT_CONFIRMED
    assert by_start["Damage"].verdict is Verdict.CONTRADICTED  # 60 vs 30 days
    assert by_start["Damage"].quote.startswith("The tenant must report damage")
    assert by_start["Damage"].conflict == "number"
    gen = JudgingGenerator(reply=lambda s, p: "no")
    updates = Judge(gen).review(ANSWER, verdicts, PASSAGES)
    # the red one first (it must be earned), then the unsure one; green ones only with P(yes)
    assert [c["sentence"] for c in gen.judge_calls] == [
        "Damage must be reported within 60 days.", "Occupants must report damage to the landlord."
    ]
    call = gen.judge_calls[1]
    assert call["passage"] == REPAIRS and call["max_tokens"] == 3 and call["temperature"] == 0
    assert call["grammar"] and "yes" in call["grammar"] and "no" in call["grammar"]
    occupants = next(u for u in updates if u.sentence_span == by_start["Occupants"].sentence_span)
    assert occupants.verdict is Verdict.NOT_CONFIRMED
    assert "judge" in occupants.reason and "rule scorer" in occupants.reason
    merged = judge.merge(verdicts, updates)
    assert [v.verdict for v in merged] == [
        Verdict.SUPPORTED, Verdict.NOT_CONFIRMED, Verdict.CONTRADICTED, Verdict.UNCITED, Verdict.NOT_FACTUAL
    ]
    # a sampled "yes" takes a red back: the rules' conflict is not confirmed
    cleared = Judge(JudgingGenerator(reply=lambda s, p: "yes")).review(ANSWER, verdicts, PASSAGES)
    damage = next(u for u in cleared if u.sentence_span == by_start["Damage"].sentence_span)
    assert damage.verdict is Verdict.NOT_CONFIRMED and damage.conflict == "" and damage.quote


def test_a_no_turns_partial_into_unsupported_and_unclear_replies_change_nothing() -> None:
    partial = ClaimVerdict((0, 48), Verdict.NOT_CONFIRMED, ("1",), 0.5, support_id="1", reason="50%")
    text = "Tenants must report damage and pay a deposit [1]."
    (update,) = Judge(JudgingGenerator(reply=lambda s, p: "no")).review(text, [partial], PASSAGES)
    assert update.verdict is Verdict.NOT_CONFIRMED and "does not support" in update.reason
    assert Judge(JudgingGenerator(reply=lambda s, p: "The passage")).review(text, [partial], PASSAGES) == []
    assert [parse_reply(r) for r in ("Yes", " no.", "**Yes**", "maybe", "是", "否", "partial")] == [
        "yes", "no", "yes", None, "yes", "no", "partial"
    ]
    # a "yes" leaves the sentence amber (POLICY: the judge's yes is too often wrong to turn
    # it green) and says so; an unsupported sentence is not asked about
    (agreed,) = Judge(JudgingGenerator(reply=lambda s, p: "yes")).review(text, [partial], PASSAGES)
    assert agreed.verdict is Verdict.NOT_CONFIRMED and "says the passage supports it" in agreed.reason
    unsure = ClaimVerdict((0, 48), Verdict.NOT_CONFIRMED, ("1",), 0.3, support_id="1", reason="30%")
    gen = JudgingGenerator(reply=lambda s, p: "yes")
    assert Judge(gen).review(text, [unsure], PASSAGES) == [] and gen.judge_calls == []


def test_the_judge_stops_asking_when_its_time_budget_is_spent() -> None:
    text = " ".join(f"Occupants must report damage number{i} to the landlord [1]." for i in range(4))
    verdicts = verify_answer(text, _markers(text), {k: p.text for k, p in PASSAGES.items()})
    ticks = iter(range(0, 1000, 10))  # every look at the clock is 10 s later
    gen = JudgingGenerator()
    updates = Judge(gen, budget_s=25, clock=lambda: float(next(ticks))).review(text, verdicts, PASSAGES)
    assert len(gen.judge_calls) == len(updates) == 2  # at 10 s and 20 s; at 30 s the budget is spent


def test_a_red_sentence_stays_red_only_when_the_judge_says_no() -> None:
    contradicted = ClaimVerdict((0, 48), Verdict.CONTRADICTED, ("1",), 0.1, support_id="1",
                                quote="The tenant must report damage within 30 days", conflict="number")
    text = "The tenant must report damage within 60 days [1]."
    (kept,) = Judge(JudgingGenerator(reply=lambda s, p: "no")).review(text, [contradicted], PASSAGES)
    assert kept.verdict is Verdict.CONTRADICTED and kept.conflict == "number"
    (sure,) = Judge(WeighingGenerator(lambda s: 0.1)).review(text, [contradicted], PASSAGES)
    assert sure.verdict is Verdict.CONTRADICTED  # P(no) 0.45
    (doubted,) = Judge(WeighingGenerator(lambda s: 0.9)).review(text, [contradicted], PASSAGES)
    assert doubted.verdict is Verdict.NOT_CONFIRMED and doubted.quote  # P(no) 0.05: not earned
    assert "P(no) 0.05" in doubted.reason


def test_answers_are_cached_by_sentence_and_chunk(store: Store) -> None:
    verdicts = rule_verdicts()
    first = JudgingGenerator()
    assert Judge(first, store).review(ANSWER, verdicts, PASSAGES)
    assert len(first.judge_calls) == 2  # the red sentence and the unsure one
    again = JudgingGenerator(reply=lambda s, p: "no")  # would say otherwise if asked
    repeat = Judge(again, store)
    updates = repeat.review(ANSWER, verdicts, PASSAGES)
    assert again.judge_calls == [] and repeat.cache_hits == 2
    occupants = next(u for u in updates if sentence_of(u).startswith("Occupants"))
    assert occupants.verdict is Verdict.NOT_CONFIRMED and "supports it" in occupants.reason
    sentence = "Occupants must report damage to the landlord [1]."
    assert store.judge_get(sentence_sha(sentence), "aaaa:2:0") == "yes"
    # The same sentence against another chunk is a new question.
    moved = {"1": JudgedPassage("bbbb:2:0", REPAIRS)}
    other = JudgingGenerator()
    Judge(other, store).review(ANSWER, verdicts, moved)
    assert len(other.judge_calls) == 2


def test_the_number_of_model_calls_per_answer_is_capped() -> None:
    text = " ".join(f"Occupants must report damage number{i} to the landlord [1]." for i in range(12))
    spans = _markers(text)
    verdicts = verify_answer(text, spans, {k: p.text for k, p in PASSAGES.items()})
    assert sum(judge.worth_asking(v) for v in verdicts) == 12
    gen = JudgingGenerator()
    Judge(gen).review(text, verdicts, PASSAGES)
    assert len(gen.judge_calls) == judge.MAX_JUDGED < 12
    fewer = JudgingGenerator()
    Judge(fewer, max_judged=2).review(text, verdicts, PASSAGES)
    assert len(fewer.judge_calls) == 2


def test_answer_runs_the_judge_after_it_finishes_and_saves_the_judged_verdicts(store: Store) -> None:
    passages = [
        Passage("aaaa:2:0", "aaaa", "/docs/lease.pdf", "Lease", 2, "2", "Section 4 Repairs", 0,
                len(REPAIRS), 1.0, REPAIRS),
        Passage("aaaa:3:0", "aaaa", "/docs/lease.pdf", "Lease", 3, "3", "Section 5 Rent", 0,
                len(RENT), 0.5, RENT),
    ]

    class Retriever:
        def search(self, question: str, k: int, scope: Sequence[str] = (), language: str = "auto") -> Retrieval:
            return Retrieval(passages, coverage=1.0, best_cosine=0.9, cjk=False)

    def ask(settings: Settings, gen: JudgingGenerator) -> list[Any]:
        events: list[Any] = []
        answering.answer("How long to report damage?", retriever=Retriever(), store=store,
                         generator_factory=lambda _language: gen, settings=settings, emit=events.append,
                         should_cancel=lambda: False, verifier=Verifier())
        return events

    plain = JudgingGenerator([ANSWER])
    events = ask(Settings(judge=False), plain)
    assert plain.judge_calls == []  # switched off in Settings
    assert Settings().judge  # on by default
    gen = JudgingGenerator([ANSWER], reply=lambda s, p: "no")
    events = ask(Settings(), gen)
    finished = next(i for i, e in enumerate(events) if isinstance(e, AnswerFinished))
    claims = [e for e in events if isinstance(e, ClaimVerdict)]
    judged = [e for e in events[finished + 1 :] if isinstance(e, ClaimVerdict)]
    assert len(gen.judge_calls) == 2 and len(judged) == 2  # the red sentence and the unsure one
    unsure = next(j for j in judged if sentence_of(j).startswith("Occupants"))
    original = next(c for c in claims if c.sentence_span == unsure.sentence_span)
    assert judge.worth_asking(original) and unsure.verdict is Verdict.NOT_CONFIRMED
    red = next(j for j in judged if sentence_of(j).startswith("Damage"))
    assert red.verdict is Verdict.CONTRADICTED  # the judge's "no" confirms the rules' conflict
    record = store.answer(events[finished].answer_id)
    assert record is not None
    saved = {c.sentence_span: c for c in record.claims}
    assert saved[unsure.sentence_span].verdict == "not_confirmed"
    assert "judge" in saved[unsure.sentence_span].reason
    assert len(record.claims) == 5  # replaced, not appended


class WeighingGenerator(JudgingGenerator):
    """A model that scores replies (as LlamaGenerator.reply_logprob does): P(yes) for every
    judge question is ``p_yes(sentence)``, the rest split between partial and no."""

    scores_replies = True

    def __init__(self, p_yes: Callable[[str], float]):
        super().__init__()
        self.p_yes = p_yes
        self.scored: list[tuple[str, str]] = []

    def reply_logprob(self, messages: Sequence[dict[str, str]], reply: str,
                      should_cancel: Callable[[], bool] = lambda: False) -> float:
        import math

        user = messages[-1]["content"]
        sentence = user.split("\n\nSentence: ", 1)[1].split("\n\n", 1)[0]
        self.scored.append((sentence, reply))
        if reply[0].isupper():
            return -30.0  # the grammar's lower-case words carry the mass
        p = self.p_yes(sentence)
        return math.log(max({"yes": p, "partial": (1 - p) / 2, "no": (1 - p) / 2}[reply], 1e-12))


def test_with_p_yes_the_judge_turns_amber_green_only_when_sure_and_vetoes_green() -> None:
    verdicts = rule_verdicts()
    by_start = {sentence_of(v).split()[0]: v for v in verdicts}
    green, amber = by_start["The"], by_start["Occupants"]
    assert green.verdict is Verdict.SUPPORTED and amber.verdict is Verdict.NOT_CONFIRMED

    def review(p: float) -> dict[str, Verdict]:
        gen = WeighingGenerator(lambda s: p)
        updates = Judge(gen).review(ANSWER, verdicts, PASSAGES)
        assert {s for s, _ in gen.scored} == {"The tenant must report damage within 30 days.",
                                            "Occupants must report damage to the landlord.",
                                            "Damage must be reported within 60 days."}
        assert gen.judge_calls == []  # scored, not sampled
        return {ANSWER[u.sentence_span[0]:u.sentence_span[1]].split()[0]: u.verdict for u in updates}

    def red(p: float) -> Verdict:  # the fake's P(no) is (1 - P(yes)) / 2
        return Verdict.CONTRADICTED if (1 - p) / 2 >= judge.RED_NO_P else Verdict.NOT_CONFIRMED

    nc = Verdict.NOT_CONFIRMED
    assert review(0.99) == {"The": Verdict.SUPPORTED, "Occupants": Verdict.SUPPORTED, "Damage": red(0.99)}
    p = min(judge.GREEN_P, judge.KEEP_GREEN_P) - 0.05
    assert review(p) == {"The": nc, "Occupants": nc, "Damage": red(p)}
    p = (judge.GREEN_P + judge.KEEP_GREEN_P) / 2
    ok = Verdict.SUPPORTED
    assert review(p) == {"The": ok if p >= judge.KEEP_GREEN_P else nc,
                         "Occupants": ok if p >= judge.GREEN_P else nc, "Damage": red(p)}
    assert review(0.0) == {"The": nc, "Occupants": nc, "Damage": Verdict.CONTRADICTED}
    (vetoed,) = [u for u in Judge(WeighingGenerator(lambda s: 0.6)).review(ANSWER, [green], PASSAGES)]
    assert "P(yes) 0.60" in vetoed.reason and "rule scorer: supported" in vetoed.reason


def test_a_sampled_answer_never_vetoes_a_green_sentence() -> None:
    gen = JudgingGenerator(reply=lambda s, p: "no")
    green = [v for v in rule_verdicts() if v.verdict is Verdict.SUPPORTED]
    assert Judge(gen).review(ANSWER, green, PASSAGES) == [] and gen.judge_calls == []


def test_p_yes_is_cached_with_the_answer(store: Store) -> None:
    verdicts = rule_verdicts()
    Judge(WeighingGenerator(lambda s: 0.99), store).review(ANSWER, verdicts, PASSAGES)
    sentence = "Occupants must report damage to the landlord [1]."
    assert store.judge_get(sentence_sha(sentence), "aaaa:2:0") == "yes 0.9900 0.0050"
    again = WeighingGenerator(lambda s: 0.0)  # would say otherwise if asked
    repeat = Judge(again, store)
    updates = repeat.review(ANSWER, verdicts, PASSAGES)
    assert again.scored == [] and repeat.cache_hits == 3
    assert [u.verdict for u in updates] == [Verdict.SUPPORTED, Verdict.SUPPORTED, Verdict.NOT_CONFIRMED]


def test_the_cache_keeps_p_yes_and_p_no_and_still_reads_older_entries() -> None:
    from desktop_app.core.verdicts.judge import Opinion

    assert Opinion("no", 0.1, 0.7).encoded() == "no 0.1000 0.7000"
    assert Opinion.decoded("no 0.1000 0.7000") == Opinion("no", 0.1, 0.7)
    assert Opinion.decoded("yes 0.9731") == Opinion("yes", 0.9731, None)  # P(yes) only
    assert Opinion.decoded("partial") == Opinion("partial")
    # without P(no) a red sentence weighs 1 - P(yes)
    assert judge.decide(Verdict.CONTRADICTED, "yes", 0.9) is Verdict.NOT_CONFIRMED
    assert judge.decide(Verdict.CONTRADICTED, "no", 0.1) is Verdict.CONTRADICTED
    assert judge.decide(Verdict.UNCITED, "yes", 0.99) is Verdict.UNCITED
