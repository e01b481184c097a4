"""`python -m bench.tools.fit_ask_chooser`: fit the offline answer's chooser of
bench/tools/ask_chooser.py on the ask question sets' tuning parts, and judge it only on a set it
was not fit on, beside the app's hand-set chooser (`services/ask_offline._choose`).

Each tuning set is stored as `bench ask` stores it (its own user, one stack), each question
asked through the app's own offline path with the fitted chooser in `_choose`'s place, and, for
the question itself (not its earlier turns), every capture the tools found is recorded with its
features (`ask_chooser.features`) and whether the set expects it cited. A logistic regression
(numpy, L2 on standardised features, Newton's method) is fit on those rows; then its two lines
(the best candidate's, for citing anything; the others') by the figures they give on the same
rows: all cited + one cited + nothing clean.

`--loso` (leave one set out): for each of the four sets, fit on the other three and score it
through `bench ask`'s path (`bench.ask.ask_all` and `score`); prints each held-out set's four
figures and their mean. `--today`: the same four figures with the app's own chooser (its cuts
set by hand on these sets: in-sample). `--write`: fit on all four and write
bench/data/ask_chooser_weights.json.

Never the held-out sets (`frozen` of ask_questions.jsonl, ask3_*, ask6_*, ask7_*): the lead
runs those, once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.ask import DATA, HELD_OUT, TUNING_SETS, capture_id, load

SETS = TUNING_SETS[:4]
# The L2 penalty on the standardised weights (a little: the rows are few).
PENALTY = 1.0
# What the lines' choice gives the share of citations expected (precision), beside all cited,
# one cited and nothing clean (0: at 0.25 and 0.5 the held-out sets lost cited answers and the
# lines hardly rose).
PRECISION = 0.0
CLEAN = 1.0
# The lines tried: the scorer's probabilities at these.
LINES = [round(x, 3) for x in np.linspace(0.02, 0.9, 45)]


# The fitted chooser's own time per question (features, scores, pick), as collected.
SPENT: dict[str, Any] = {}


def _user(part: str) -> str:
    return f"bench-fit-{part}"


def _questions(part: str, questions_file: str) -> list[dict[str, Any]]:
    assert part not in HELD_OUT and part.startswith("tuning")
    return [q for q in load(DATA / questions_file) if q["part"] == part]


async def tuning_questions(
    sets: list[tuple[str, str, str]],
    seeded: set[str],
    user_of: Callable[[str], str],
    parts: set[str] | None = None,
) -> AsyncIterator[tuple[str, str, dict[str, str], dict[str, Any]]]:
    """Each tuning question of `sets` (of `parts`, if given) with its set, its user and the
    corpus's capture ids by row; each set stored once under `user_of(set)` (`seeded`)."""
    from bench.ask import seed

    for part, questions_file, corpus_file in sets:
        if parts is not None and part not in parts:
            continue
        corpus = load(DATA / corpus_file)
        user = user_of(part)
        if part not in seeded:
            await seed(corpus, user)
            seeded.add(part)
        row_of = {capture_id(row["id"], user): row["id"] for row in corpus}
        for q in _questions(part, questions_file):
            yield part, user, row_of, q


# -- the rows: each question's candidates with their features ---------------------------------


async def collect(seeded: set[str]) -> list[dict[str, Any]]:
    """Every tuning question's candidates (as the app's tools find them), their features and
    whether the set expects them cited; each set seeded once under its own user. The earlier
    turns of a follow-up are answered by the chooser with the weights fit last."""
    from bench.ask import ASKED_AT
    from bench.tools.ask_chooser import Chooser, citation_limit, fitted, installed
    from shared import bootstrap
    from shared.services.ask import AskLimits, answer_of, ask, new_question

    questions_out = []
    adapters = bootstrap.root().adapters
    with installed(Chooser(fitted())) as chooser:
        async for part, user, row_of, q in tuning_questions(SETS, seeded, _user):
            earlier = []
            for before in q.get("earlier") or []:
                earlier.append(("user", before))
                said = await answer_of(
                    ask(user, new_question(before), ASKED_AT, AskLimits(), adapters)
                )
                earlier.append(("assistant", said.answer.answer))
            chooser.seen.clear()
            question = new_question(q["question"], earlier)
            await answer_of(ask(user, question, ASKED_AT, AskLimits(), adapters))
            entry: dict[str, Any] = {
                "set": part,
                "id": q["id"],
                "nothing": q["nothing"],
                "cite": q["cite"],
                "limit": None,
                "candidates": [],
            }
            if chooser.seen:  # not a bare "what's due?": the list answers it
                asked, ids, rows = chooser.seen[-1]
                entry["limit"] = citation_limit(asked)
                entry["candidates"] = [
                    {"row": row_of.get(i, i), "x": r, "y": row_of.get(i) in q["cite"]}
                    for i, r in zip(ids, rows, strict=True)
                ]
            questions_out.append(entry)
        spent = sorted(chooser.spent_s)
        if spent:
            SPENT.update(
                choices=len(spent),
                median_ms=round(1000 * spent[len(spent) // 2], 2),
                max_ms=round(1000 * spent[-1], 2),
            )
    return questions_out


# -- the fit --------------------------------------------------------------------------------


def _matrix(questions: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    from bench.tools.ask_chooser import FEATURES

    xs = [[c["x"][f] for f in FEATURES] for q in questions for c in q["candidates"]]
    ys = [float(c["y"]) for q in questions for c in q["candidates"]]
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


def fit_logistic(
    x: np.ndarray, y: np.ndarray, penalty: float = PENALTY
) -> tuple[float, np.ndarray]:
    """A logistic regression's bias and weights on the raw features: fit by Newton's method on
    standardised features with an L2 penalty on the weights (not the bias)."""
    mean, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / sd])
    beta = np.zeros(z.shape[1])
    ridge = np.eye(z.shape[1]) * penalty
    ridge[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -30, 30)))
        gradient = z.T @ (p - y) + ridge @ beta
        hessian = (z.T * (p * (1 - p))) @ z + ridge
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    weights = beta[1:] / sd
    bias = float(beta[0] - (beta[1:] * mean / sd).sum())
    return bias, weights


def _figures(
    questions: list[dict[str, Any]], scores: list[list[float]], answer: float, cite: float
) -> dict[str, float]:
    """all cited, one cited, nothing clean over the scored questions, with these lines (as
    ask_choice.pick chooses)."""
    all_cited, one_cited, clean, precise = [], [], [], []
    for q, s in zip(questions, scores, strict=True):
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        chosen: set[str] = set()
        if order and s[order[0]] >= answer:
            chosen = {
                q["candidates"][i]["row"]
                for i in order[: q["limit"]]
                if s[i] >= cite or i == order[0]
            }
        if q["nothing"]:
            clean.append(not chosen)
        else:
            all_cited.append(set(q["cite"]) <= chosen)
            one_cited.append(bool(set(q["cite"]) & chosen))
            if chosen:
                precise.append(len(set(q["cite"]) & chosen) / len(chosen))

    def share(hits: list[bool] | list[float]) -> float:
        return sum(hits) / len(hits) if hits else 0.0

    return {
        "all_cited": share(all_cited),
        "one_cited": share(one_cited),
        "nothing_clean": share(clean),
        "precision": share(precise),
    }


def fit(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The weights and lines fit on these questions."""
    from bench.tools.ask_chooser import FEATURES, Weights

    scored = [q for q in questions if q["candidates"]]
    x, y = _matrix(scored)
    bias, w = fit_logistic(x, y, PENALTY)
    weights = Weights(bias, dict(zip(FEATURES, w.tolist(), strict=True)), 0.5, 0.5)
    scores = [[weights.score(c["x"]) for c in q["candidates"]] for q in scored]
    best: tuple[float, float, float] = (-1.0, 0.5, 0.5)
    for answer in LINES:
        for cite in LINES:
            if cite > answer:
                continue
            f = _figures(scored, scores, answer, cite)
            value = (
                f["all_cited"]
                + f["one_cited"]
                + CLEAN * f["nothing_clean"]
                + PRECISION * f["precision"]
            )
            # Ties go to the higher lines (citing less).
            if value > best[0] + 1e-9 or (
                abs(value - best[0]) <= 1e-9 and (answer, cite) > best[1:]
            ):
                best = (value, answer, cite)
    _, answer, cite = best
    return {
        "bias": bias,
        "weights": weights.weights,
        "answer_line": answer,
        "cite_line": cite,
        "fit_on": sorted({q["set"] for q in questions}),
        "rows": len(y),
        "in_sample": _figures(scored, scores, answer, cite),
    }


# -- judged through bench ask's path ----------------------------------------------------------


async def judged(part: str, fit: dict[str, Any] | None) -> dict[str, Any]:
    """`bench ask`'s four figures for one set (already seeded), with the chooser fit as `fit`
    in `_choose`'s place (None: the app's own)."""
    from bench import ask
    from bench.tools.ask_chooser import Chooser, installed, weights_of

    questions_file = next(q for p, q, _ in SETS if p == part)
    corpus_file = next(c for p, _, c in SETS if p == part)
    questions = _questions(part, questions_file)
    corpus = load(DATA / corpus_file)
    if fit is None:
        return ask.score(await ask.ask_all(questions, corpus, _user(part)))
    with installed(Chooser(weights_of(fit))):
        return ask.score(await ask.ask_all(questions, corpus, _user(part)))


def _four(scored: dict[str, Any]) -> list[float]:
    return [scored[k] for k in ("all_cited", "one_cited", "facts", "nothing_clean")]


def write(fit: dict[str, Any], command: str) -> None:
    from bench.tools.ask_chooser import WEIGHTS_FILE

    kept = {k: fit[k] for k in ("answer_line", "cite_line", "fit_on", "rows")}
    kept["bias"] = round(fit["bias"], 4)
    kept["weights"] = {name: round(w, 4) for name, w in fit["weights"].items()}
    WEIGHTS_FILE.write_text(json.dumps({"command": command, **kept}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    from bench.stack import stack
    from shared import bootstrap

    parser = argparse.ArgumentParser(
        prog="python -m bench.tools.fit_ask_chooser", description=__doc__
    )
    parser.add_argument("--loso", action="store_true", help="leave one set out: fit, judge")
    parser.add_argument("--today", action="store_true", help="the app's own chooser, per set")
    parser.add_argument("--write", action="store_true", help="fit on all four, write the weights")
    parser.add_argument("--rows", type=Path, help="also save the rows (JSON) here")
    parser.add_argument("--misses", action="store_true", help="keep the misses in the report")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    command = "python -m bench.tools.fit_ask_chooser " + " ".join(argv)
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
    }
    seeded: set[str] = set()

    async def go() -> None:
        try:
            questions = await collect(seeded)
            report["chooser_time"] = SPENT
            if args.rows:
                args.rows.write_text(json.dumps(questions))
            if args.today:
                report["today"] = {p: await judged(p, None) for p, _, _ in SETS}
            if args.loso:
                out: dict[str, Any] = {}
                for part, _, _ in SETS:
                    fitted = fit([q for q in questions if q["set"] != part])
                    scored = await judged(part, fitted)
                    out[part] = {"fitted": fitted, "held_out": scored}
                means = [
                    round(sum(_four(out[p]["held_out"])[k] for p, _, _ in SETS) / len(SETS), 3)
                    for k in range(4)
                ]
                out["mean"] = dict(
                    zip(("all_cited", "one_cited", "facts", "nothing_clean"), means, strict=True)
                )
                report["loso"] = out
            if args.write:
                fitted = fit(questions)
                report["written"] = fitted
                write(fitted, command)
        finally:
            await bootstrap.reset()

    with stack():
        asyncio.run(go())
    if not args.misses:
        for value in dicts_in(report):
            value.pop("misses", None)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


def dicts_in(value: Any) -> list[dict[str, Any]]:
    """`value` and every dict nested in it (a report's rows, to drop their misses)."""
    if not isinstance(value, dict):
        return []
    return [value, *(d for v in value.values() for d in dicts_in(v))]


if __name__ == "__main__":
    raise SystemExit(main())
