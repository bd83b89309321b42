"""Verdicts against labels: does Folio's per-sentence verdict say what a reader of the
cited passage says?

``bench/data/verdict_pairs.jsonl`` holds (sentence, passage) pairs, one JSON object a line:
``{"id", "question_id", "lang", "sentence", "passage", "label", "origin", "note"}``.
``label`` is what a person decided reading the passage: ``supported`` (it states all of
the sentence), ``partial`` (some of it, nothing against it), ``unsupported`` (it does not
state it) or ``contradicted`` (it states otherwise). ``origin`` is ``small`` or ``default``
for a sentence of a real answer of that model (``folio ask`` over ../shared/corpus and
../shared/qa; the passage is the one it cites, or for an uncited sentence the source Folio
matched it to), ``edited`` for a real answer sentence changed by hand the way answers go
wrong (a number or unit, SHOULD vs SHOULD NOT, 不得 vs 应, MUST vs MAY, client vs proxy, a
condition stated as a fact, a paraphrase), ``issue`` for the sentences of issue 14, and
``crosslingual`` for Chinese and German sentences, true and false, written in session 10 on
English passages of ../shared/corpus (a reader asks in their language about an English
document; ``--origin crosslingual`` prints them alone; question ids ``xl2-*``, written in
session 14, add English sentences on Chinese passages and Chinese ones on English passages,
each on the passage of an earlier pair), and ``written`` for German sentences written in
session 14 on passages of ../shared/corpus/de_lecturenotes_GeoTopo.pdf and of the German
Debian Reference in ../shared/formats (question ids ``de-*``: for each passage, sentences
that state it in its words or in a paraphrase, that change a number, a negation or a
name, and that it does not state).

Split: a pair is ``tuning`` when the last byte of the sha256 of its ``question_id`` is
even, ``held-out`` when odd (all pairs of one question fall on one side); the issue's own
sentences and the edits of them (question ids ``issue-*``) are always ``tuning``: the
rules were written looking at them (``issue-s6-*``: pairs written in session 6 from
passages of ../shared/corpus to try the condition, party, group and tick-box checks). Rules and thresholds are chosen on the tuning half;
the held-out half is the one quoted.

    .venv/bin/python bench/verdicts.py rules            # the rule scorer on both halves
    .venv/bin/python bench/verdicts.py judge --model default --split held-out \\
        --cache /tmp/judge_default.json                 # the local model as the judge
    .venv/bin/python bench/verdicts.py rules --judged /tmp/judge_default.json
        # rules, then the judge on the sentences Folio asks it about (amber and green ones)
    .venv/bin/python bench/verdicts.py rules --judged /tmp/judge_default.json --set GREEN_P 0.95
        # the same with another threshold of core/verdicts/judge.py (choose on tuning only)

``judge`` asks every pair of the split (cached by pair id; ``--only-asked`` for the ones
Folio would ask about) and keeps the model's P(yes) among yes/partial/no (teacher-forced,
``reply_logprob``); ``rules --judged`` applies ``judge.decide`` with it, so the thresholds
can be tried without asking the model again. A cache without ``p_yes`` (an older run)
applies the sampled-answer policy.

Printed per half: n and n per language and origin, the confusion matrix (rows: label,
columns: the three verdicts a reader sees, supported / not_confirmed / contradicted), and
per language and for all the five acceptance figures of issue 31 (TARGETS; "(!)" marks
one that misses its target): green-true (of sentences marked supported, truly supported;
>= 95%), red-false (of those marked contradicted, false, i.e. labelled unsupported or
contradicted; >= 90%), true-red (of true ones, marked contradicted; <= 3%), true-green (of
true ones, marked supported; >= 60%), false-green (of false ones, marked supported; <= 2%). ``judge`` prints its
accuracy against the labels and the median seconds per pair (medians of the pairs it
asked; run it alone, the machine has 2 cores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.core.types import ClaimVerdict, Verdict  # noqa: E402
from desktop_app.core.verdicts import judge as judging  # noqa: E402
from desktop_app.core.verdicts.verify import score_claim  # noqa: E402

PAIRS = Path(__file__).resolve().parent / "data" / "verdict_pairs.jsonl"
LABELS = ("supported", "partial", "unsupported", "contradicted")
FALSE = ("unsupported", "contradicted")


def load(path: Path = PAIRS) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        assert row["label"] in LABELS, row
    return rows


def half(question_id: str) -> str:
    if question_id.startswith("issue-"):
        return "tuning"
    digest = hashlib.sha256(question_id.encode("utf-8")).digest()
    return "tuning" if digest[-1] % 2 == 0 else "held-out"


def rule_verdict(row: dict[str, Any]) -> ClaimVerdict:
    score = score_claim(row["sentence"], row["passage"])
    return ClaimVerdict((0, len(row["sentence"])), score.verdict, ("1",), score.score,
                        support=score.support, reason=score.reason, support_id="1",
                        quote=score.quote, conflict=score.conflict)


def is_asked(row: dict[str, Any], rule: ClaimVerdict) -> bool:
    """Whether ``Judge.review`` would ask about this pair (see judge.py's ``_target``)."""
    if not judging.worth_asking(rule):
        return False
    return rule.verdict is Verdict.CONTRADICTED or not judging.missing_numbers(
        judging.numbers_in(row["sentence"]), judging.numbers_in(row["passage"]))


def judged_verdict(row: dict[str, Any], rule: ClaimVerdict, answers: dict[str, str],
                   p_yes: dict[str, float] | None = None, p_no: dict[str, float] | None = None) -> str:
    """The verdict after the judge, as ``Judge.review`` would change it (only sentences
    the judge is asked about; the answer, and P(yes) when given, from the cache file)."""
    if not is_asked(row, rule):
        return str(rule.verdict)
    p = (p_yes or {}).get(row["id"])
    if p_yes is not None and p is None:
        return str(rule.verdict)  # not asked in this run
    return str(judging.decide(rule.verdict, answers.get(row["id"]), p, (p_no or {}).get(row["id"])))


VERDICTS = ("supported", "not_confirmed", "contradicted")
# The acceptance: (name, what, target, at least?)
TARGETS = (
    ("green-true", "of marked supported, truly supported", 0.95, True),
    ("red-false", "of marked contradicted, false", 0.90, True),
    ("true-red", "of true ones, marked contradicted", 0.03, False),
    ("true-green", "of true ones, marked supported", 0.60, True),
    ("false-green", "of false ones, marked supported", 0.02, False),
)


def report(title: str, rows: list[dict[str, Any]], got: list[str]) -> dict[str, tuple[int, int]]:
    n = len(rows)
    print(f"\n== {title}: n={n} (" + ", ".join(
        f"{lang} {c}" for lang, c in sorted(Counter(r["lang"] for r in rows).items())) + "; "
        + ", ".join(f"{o} {c}" for o, c in sorted(Counter(r["origin"] for r in rows).items())) + ")")
    head = "label / verdict"
    print(f"{head:>16} | " + " ".join(f"{c[:13]:>13}" for c in VERDICTS))
    for label in LABELS:
        cells = [sum(1 for r, g in zip(rows, got, strict=True) if r["label"] == label and g == c)
                 for c in VERDICTS]
        print(f"{label:>16} | " + " ".join(f"{x:>13}" for x in cells))
    figures = acceptance(rows, got)
    for lang in [*sorted({r["lang"] for r in rows}), "all"]:
        sub = [(r, g) for r, g in zip(rows, got, strict=True) if lang in ("all", r["lang"])]
        f = acceptance([r for r, _ in sub], [g for _, g in sub])
        print(f"  {lang:>3}: " + "; ".join(
            f"{name} {_pct(*f[name])}{_mark(f[name], target, at_least)}"
            for name, _, target, at_least in TARGETS))
    return figures


def acceptance(rows: list[dict[str, Any]], got: list[str]) -> dict[str, tuple[int, int]]:
    """The five figures as (part, whole): see TARGETS."""
    pairs = list(zip(rows, got, strict=True))
    green = [r for r, g in pairs if g == "supported"]
    red = [r for r, g in pairs if g == "contradicted"]
    true = [g for r, g in pairs if r["label"] == "supported"]
    false = [g for r, g in pairs if r["label"] in FALSE]
    return {
        "green-true": (sum(r["label"] == "supported" for r in green), len(green)),
        "red-false": (sum(r["label"] in FALSE for r in red), len(red)),
        "true-red": (sum(g == "contradicted" for g in true), len(true)),
        "true-green": (sum(g == "supported" for g in true), len(true)),
        "false-green": (sum(g == "supported" for g in false), len(false)),
    }


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}% ({part}/{whole})" if whole else "– (0/0)"


def _mark(figure: tuple[int, int], target: float, at_least: bool) -> str:
    part, whole = figure
    if not whole:
        return ""
    share = part / whole
    return "" if (share >= target if at_least else share <= target) else " (!)"


def rules(args: argparse.Namespace) -> None:
    rows = [r for r in load(args.pairs) if not args.origin or r["origin"] == args.origin]
    answers: dict[str, str] = {}
    p_yes: dict[str, float] | None = None
    p_no: dict[str, float] = {}
    for path in args.judged:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        answers.update(saved["answers"])
        if "p_yes" in saved:
            p_yes = {**(p_yes or {}), **saved["p_yes"]}
        p_no.update(saved.get("p_no", {}))
    for name, value in args.set:
        setattr(judging, name, float(value))
    for name in ("tuning", "held-out"):
        part = [r for r in rows if half(r["question_id"]) == name]
        verdicts = [rule_verdict(r) for r in part]
        got = [str(v.verdict) for v in verdicts]
        report(f"{name}, rules", part, got)
        if answers:
            report(f"{name}, rules + judge", part,
                   [judged_verdict(r, v, answers, p_yes, p_no) for r, v in zip(part, verdicts, strict=True)])
        if args.show_wrong:
            for r, v in zip(part, verdicts, strict=True):
                wrong = (r["label"] == "supported") == (v.verdict is not Verdict.SUPPORTED) and (
                    v.verdict is not Verdict.NOT_CONFIRMED) or (
                    r["label"] == "supported" and v.verdict is Verdict.CONTRADICTED)
                if wrong:
                    print(f"  [{r['id']}] {r['label']} -> {v.verdict}: {r['sentence'][:110]}"
                          f"\n        {v.reason[:160]}")


def judge_run(args: argparse.Namespace) -> None:
    from desktop_app.core.models import catalog as models
    from desktop_app.core.models.generate import LlamaGenerator

    rows = [r for r in load(args.pairs) if (args.split == "all" or half(r["question_id"]) == args.split)
            and (not args.origin or r["origin"] == args.origin)]
    # the pairs Folio asks the judge about first: green and not confirmed ones (a veto or
    # a promotion), the two halves in turn (held-out first), then the red ones
    if args.only_asked:
        rows = [r for r in rows if is_asked(r, rule_verdict(r))]
    if args.verdict:  # only the pairs the rules give these verdicts
        rows = [r for r in rows if str(rule_verdict(r).verdict) in args.verdict.split(",")]
    turn: dict[str, int] = Counter()
    order: dict[str, tuple[int, int, int]] = {}
    for r in sorted(rows, key=lambda r: r["id"]):
        v = rule_verdict(r)
        tier = 0 if is_asked(r, v) and v.verdict is not Verdict.CONTRADICTED else 1 if is_asked(r, v) else 2
        side = half(r["question_id"])
        turn[f"{tier}{side}"] += 1
        order[r["id"]] = (tier, turn[f"{tier}{side}"], side == "tuning")
    rows.sort(key=lambda r: order[r["id"]])
    cache_path = Path(args.cache)
    saved = json.loads(cache_path.read_text(encoding="utf-8")) if cache_path.is_file() else {}
    answers: dict[str, str] = saved.get("answers", {})
    if args.limit:  # this many pairs not asked yet (a run resumes from the cache)
        todo = [r for r in rows if r["id"] not in answers][: args.limit]
        rows = [r for r in rows if r["id"] in answers] + todo
    seconds: dict[str, float] = saved.get("seconds", {})
    p_yes: dict[str, float] = saved.get("p_yes", {})
    p_no: dict[str, float] = saved.get("p_no", {})
    generator = LlamaGenerator(models.resolve_answer_model(args.model), threads=args.threads)
    judge = judging.Judge(generator, max_judged=1, budget_s=1e9)
    for n, row in enumerate(rows):
        if row["id"] in answers:
            continue
        started = time.perf_counter()
        focus = score_claim(row["sentence"], row["passage"]).support
        opinion = judge.opinion(row["sentence"], judging.JudgedPassage(row["id"], row["passage"]), focus)
        seconds[row["id"]] = time.perf_counter() - started
        answers[row["id"]] = opinion.answer if opinion is not None else ""
        if opinion is not None and opinion.p_yes is not None:
            p_yes[row["id"]] = opinion.p_yes
            p_no[row["id"]] = opinion.p_no if opinion.p_no is not None else 1 - opinion.p_yes
        print(f"{n + 1}/{len(rows)} {row['id']} {row['label']:>12} -> {opinion} "
              f"{seconds[row['id']]:.1f}s", flush=True)
        cache_path.write_text(json.dumps({"model": args.model, "model_id": generator.model_id,
                                          "answers": answers, "p_yes": p_yes, "p_no": p_no,
                                          "seconds": seconds}, indent=1))
    asked = [r for r in rows if r["id"] in answers]
    expect = {"supported": "yes", "partial": "partial", "unsupported": "no", "contradicted": "no"}
    right = sum(answers[r["id"]] == expect[r["label"]] for r in asked)
    binary = sum((answers[r["id"]] == "yes") == (r["label"] == "supported") for r in asked)
    print(f"\njudge {args.model} ({generator.model_id}) on {args.split}: n={len(asked)}")
    print(f"  accuracy (yes/partial/no vs label): {_pct(right, len(asked))}")
    print(f"  accuracy (yes vs not supported): {_pct(binary, len(asked))}")
    yes = [r for r in asked if answers[r["id"]] == "yes"]
    print(f"  of its yes, truly supported: {_pct(sum(r['label'] == 'supported' for r in yes), len(yes))}")
    times = [seconds[r["id"]] for r in asked if r["id"] in seconds]
    if times:
        print(f"  seconds per pair: median {statistics.median(times):.2f}, "
              f"p90 {sorted(times)[int(0.9 * (len(times) - 1))]:.2f} (threads={args.threads})")
    for lang in sorted({r["lang"] for r in asked}):
        sub = [r for r in asked if r["lang"] == lang]
        print(f"  {lang}: {_pct(sum(answers[r['id']] == expect[r['label']] for r in sub), len(sub))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("rules", help="the rule scorer (and, with --judged, the judge) vs labels")
    p.add_argument("--pairs", type=Path, default=PAIRS)
    p.add_argument("--judged", action="append", default=[], help="a judge --cache file")
    p.add_argument("--show-wrong", action="store_true")
    p.add_argument("--origin", default="", help="only the pairs of this origin (e.g. crosslingual)")
    p.add_argument("--set", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="try another judge threshold, e.g. --set GREEN_P 0.9")
    p = sub.add_parser("judge", help="ask the local model about each pair")
    p.add_argument("--pairs", type=Path, default=PAIRS)
    p.add_argument("--model", default="default")
    p.add_argument("--split", default="held-out", choices=("tuning", "held-out", "all"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--origin", default="", help="only the pairs of this origin (e.g. crosslingual)")
    p.add_argument("--verdict", default="", help="only the pairs the rules give these verdicts"
                   " (comma-separated: supported,not_confirmed,contradicted)")
    p.add_argument("--only-asked", action="store_true",
                   help="only the pairs the rules are unsure of or call supported")
    p.add_argument("--cache", required=True, help="JSON file of answers; resumes from it")
    args = parser.parse_args()
    {"rules": rules, "judge": judge_run}[args.command](args)


if __name__ == "__main__":
    main()
