"""`python -m bench.tools.fit_ask_gate`: fit the "is anything here" gate of
bench/tools/ask_gate.py over the offline answer's own chooser on the ask question sets' tuning
parts (`bench.ask.TUNING_SETS`, all of them), and judge it only on a set it was not fit on.

Each tuning set is stored as `bench ask` stores it (its own user, one stack) and each question
asked through the app's own offline path with today's chooser; where that chooser cites
something (not a bare list, not a follow-up pointing back), the question's gate features are
recorded with its answer, and the features by single words' meaning (`ask_gate.WORD_FEATURES`,
one more call to the embedder after the answer). A logistic regression
(`fit_ask_chooser.fit_logistic`) is fit on those rows to say "nothing here answers" (`--label
nothing`: the question has nothing to find; `useless`: that, or today's answer cites none of
what it expects); then its line, by the four figures it gives on the same rows, as `bench ask`
scores them: nothing-to-find questions made clean, less COST times the questions whose answer
it blanks that had their expected captures all cited (and the one-cited and facts lost, at a
third of that each); ties to the higher line.

`--loso`: each set scored by the gate fit on the others, from the recorded answers (a gated
question is answered "nothing", cites nothing); `--judge` also runs each held-out set again
through the app's path with that gate installed (follow-ups' earlier turns gated too; fit
without the word features, which are not there). `--nested`: the
label, cost and penalty (GRID) chosen inside each fold, by leave-one-set-out on the others.
`--without NAME`: a feature left out of the fit. `--rows` / `--from-rows`: the rows saved, and
refit from them without a stack. `--write`: fit on all the parts and write
bench/data/ask_gate_weights.json.

Never the held-out parts (`frozen` of ask_questions.jsonl, ask3_*, nor ask13_* / ask14_*).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.ask import DATA, FIGURES, TUNING_SETS, score
from bench.tools.fit_ask_chooser import dicts_in, fit_logistic, tuning_questions

WEIGHTS_FILE = DATA / "ask_gate_weights.json"
# The L2 penalty on the standardised weights.
PENALTY = 10.0
# What blanking an answer that cited all it expected costs, in nothing-to-find questions made
# clean (one cited and facts lost count a third of that each).
COST = 1.0
# Features left out of the fit (`--without`).
EXCLUDED: set[str] = set()
LINES = [round(x, 3) for x in np.linspace(0.3, 0.98, 69)]


def _user(part: str) -> str:
    return f"bench-gate-{part}"


async def _answer(
    user: str, q: dict[str, Any], row_of: dict[str, str], gate: Any
) -> tuple[dict[str, Any], dict[str, float] | None]:
    """One question asked as `bench ask` asks it: its answer, and its gate row (None: not
    gated)."""
    from bench.ask import ASKED_AT
    from shared import bootstrap
    from shared.services.ask import AskLimits, answer_of, ask, new_question

    adapters = bootstrap.root().adapters
    earlier = []
    for before in q.get("earlier") or []:
        earlier.append(("user", before))
        said = await answer_of(ask(user, new_question(before), ASKED_AT, AskLimits(), adapters))
        earlier.append(("assistant", said.answer.answer))
    gate.seen.clear()
    gate.words.clear()
    done = await answer_of(
        ask(user, new_question(q["question"], earlier), ASKED_AT, AskLimits(), adapters)
    )
    cited = [row_of.get(c.capture_id, c.capture_id) for c in done.answer.citations]
    row = gate.seen[-1] if gate.seen else None
    if row is not None and gate.words:
        from bench.tools.ask_gate import word_features

        row = {**row, **await word_features(adapters.embedder, *gate.words[-1])}
    return {**q, "answer": done.answer.answer, "cited": cited}, row


async def collect(seeded: set[str], gate_weights: Any = None, parts: Any = None) -> list[Any]:
    """Every tuning question's answer through the app's path (with the gate `gate_weights`
    over today's chooser; None: today's) and its gate row; each set seeded once."""
    from bench.tools.ask_gate import installed

    out = []
    with installed(gate_weights) as gate:
        async for part, user, row_of, q in tuning_questions(TUNING_SETS, seeded, _user, parts):
            answered, row = await _answer(user, q, row_of, gate)
            out.append({"set": part, "answered": answered, "x": row})
    return out


# -- the fit --------------------------------------------------------------------------------


def _useless(answered: dict[str, Any]) -> bool:
    return answered["nothing"] or not set(answered["cite"]) & set(answered["cited"])


def gated(answered: dict[str, Any]) -> dict[str, Any]:
    from shared.services.ask_run import NOTHING

    return {**answered, "answer": NOTHING, "cited": []}


def _counts(answered: list[dict[str, Any]]) -> dict[str, float]:
    """The four figures as counts of questions."""
    scored = score(answered)
    finding = sum(not a["nothing"] for a in answered)
    nothing = len(answered) - finding
    return {f: (scored[f] or 0.0) * (nothing if f == "nothing_clean" else finding) for f in FIGURES}


def apply(rows: list[dict[str, Any]], fit: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded answers with the gate `fit` over them."""
    from bench.tools.ask_gate import gate_of

    gate = gate_of(fit)
    return [
        gated(r["answered"])
        if r["x"] is not None and gate.score(r["x"]) >= gate.line
        else r["answered"]
        for r in rows
    ]


def value(before: dict[str, float], after: dict[str, float], cost: float) -> float:
    lost = {f: before[f] - after[f] for f in FIGURES}
    return -lost["nothing_clean"] - cost * (
        lost["all_cited"] + (lost["one_cited"] + lost["facts"]) / 3
    )


def fit(
    rows: list[dict[str, Any]], label: str, cost: float = COST, penalty: float = PENALTY
) -> dict[str, Any]:
    """The gate's weights and line fit on these rows."""
    from bench.tools.ask_gate import FEATURES, WORD_FEATURES

    xs = [r for r in rows if r["x"] is not None]
    names = [f for f in (*FEATURES, *WORD_FEATURES) if all(f in r["x"] for r in xs)]
    names = [f for f in names if f not in EXCLUDED]
    x = np.array([[r["x"][f] for f in names] for r in xs], dtype=float)
    if label == "nothing":
        y = np.array([float(r["answered"]["nothing"]) for r in xs])
    else:
        y = np.array([float(_useless(r["answered"])) for r in xs])
    bias, w = fit_logistic(x, y, penalty)
    out: dict[str, Any] = {
        "bias": bias,
        "weights": dict(zip(names, w.tolist(), strict=True)),
        "label": label,
        "rows": len(xs),
        "fit_on": sorted({r["set"] for r in rows}),
    }
    sets = out["fit_on"]
    before = {s: _counts([r["answered"] for r in rows if r["set"] == s]) for s in sets}
    best = (-1e9, 1.0)
    for line in LINES:
        after = apply(rows, {**out, "line": line})
        total = sum(
            value(
                before[s],
                _counts([a for a, r in zip(after, rows, strict=True) if r["set"] == s]),
                cost,
            )
            for s in sets
        )
        if total > best[0] + 1e-9 or (abs(total - best[0]) <= 1e-9 and line > best[1]):
            best = (total, line)
    out["line"] = best[1]
    out["in_sample_value"] = round(best[0], 2)
    return out


# The settings `--nested` chooses among, within each outer fold: (label, cost, penalty).
GRID = [
    (label, cost, penalty)
    for label in ("nothing", "useless")
    for cost in (0.5, 1.0, 2.0)
    for penalty in (1.0, 10.0, 30.0)
]


def nested(rows: list[dict[str, Any]], part: str) -> dict[str, Any]:
    """The gate for `part` fit on the other sets with the setting (GRID) whose leave-one-set-out
    value over those sets alone is the best: the setting chosen without `part`'s answers."""
    others = sorted({r["set"] for r in rows} - {part})
    best: tuple[float, tuple[str, float, float]] = (-1e9, GRID[0])
    for setting in GRID:
        total = 0.0
        for inner in others:
            fitted = fit([r for r in rows if r["set"] not in (part, inner)], *setting)
            mine = [r for r in rows if r["set"] == inner]
            before = _counts([r["answered"] for r in mine])
            total += value(before, _counts(apply(mine, fitted)), setting[1])
        if total > best[0] + 1e-9:
            best = (total, setting)
    fitted = fit([r for r in rows if r["set"] != part], *best[1])
    fitted["setting"] = list(best[1])
    return fitted


def table(today: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Each set's four figures, today and after, their change in questions, and the means."""
    out: dict[str, Any] = {}
    for part, _, _ in TUNING_SETS:
        if part not in after:
            continue
        a, b = today[part], after[part]
        finding = round(a["questions"] - a["nothing"])
        out[part] = {
            "today": [a[f] for f in FIGURES],
            "after": [b[f] for f in FIGURES],
            "questions": [
                round((b[f] - a[f]) * (a["nothing"] if f == "nothing_clean" else finding))
                for f in FIGURES
            ],
        }
    parts = list(out)
    for name in ("today", "after"):
        out.setdefault("mean", {})[name] = [
            round(sum(out[p][name][k] for p in parts) / len(parts), 3) for k in range(4)
        ]
    out["mean"]["questions"] = [sum(out[p]["questions"][k] for p in parts) for k in range(4)]
    return out


def _figures(answered: list[dict[str, Any]]) -> dict[str, Any]:
    scored = score(answered)
    scored["nothing"] = sum(a["nothing"] for a in answered)
    return scored


def main(argv: list[str] | None = None) -> int:
    from bench.stack import stack
    from shared import bootstrap

    parser = argparse.ArgumentParser(prog="python -m bench.tools.fit_ask_gate", description=__doc__)
    parser.add_argument("--loso", action="store_true", help="leave one set out, from the rows")
    parser.add_argument(
        "--nested", action="store_true", help="the setting chosen within each fold (GRID)"
    )
    parser.add_argument("--judge", action="store_true", help="and through the app's path")
    parser.add_argument("--write", action="store_true", help="fit on all the parts, write weights")
    parser.add_argument("--label", choices=("nothing", "useless"), default="nothing")
    parser.add_argument("--cost", type=float, default=COST)
    parser.add_argument("--penalty", type=float, default=PENALTY)
    parser.add_argument("--rows", type=Path, help="save the rows (JSON) here")
    parser.add_argument("--from-rows", type=Path, help="read the rows saved, no stack")
    parser.add_argument("--misses", action="store_true", help="list what the gate changes")
    parser.add_argument("--without", action="append", default=[], help="a feature left out")
    args = parser.parse_args(argv)
    EXCLUDED.update(args.without)
    argv = sys.argv[1:] if argv is None else argv
    command = "python -m bench.tools.fit_ask_gate " + " ".join(argv)
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
    }
    seeded: set[str] = set()
    parts = [p for p, _, _ in TUNING_SETS]

    def offline(rows: list[dict[str, Any]]) -> None:
        today = {p: _figures([r["answered"] for r in rows if r["set"] == p]) for p in parts}
        if args.loso:
            after, changed = {}, []
            for part in parts:
                if args.nested:
                    fitted = nested(rows, part)
                    report.setdefault("settings", {})[part] = fitted["setting"]
                else:
                    fitted = fit(
                        [r for r in rows if r["set"] != part], args.label, args.cost, args.penalty
                    )
                mine = [r for r in rows if r["set"] == part]
                answers = apply(mine, fitted)
                after[part] = _figures(answers)
                changed += [
                    {
                        "set": part,
                        "id": a["id"],
                        "nothing": a["nothing"],
                        "question": a["question"],
                        "was_cited": r["answered"]["cited"],
                        "was": r["answered"]["answer"][:160],
                    }
                    for a, r in zip(answers, mine, strict=True)
                    if a["cited"] != r["answered"]["cited"]
                ]
            report["loso"] = table(today, after)
            if args.misses:
                report["gated"] = changed
        if args.write:
            fitted = fit(rows, args.label, args.cost, args.penalty)
            report["written"] = fitted
            kept = {k: fitted[k] for k in ("label", "line", "fit_on", "rows")}
            kept["bias"] = round(fitted["bias"], 4)
            kept["weights"] = {n: round(w, 4) for n, w in fitted["weights"].items()}
            WEIGHTS_FILE.write_text(json.dumps({"command": command, **kept}, indent=1) + "\n")

    if args.from_rows:
        offline(json.loads(args.from_rows.read_text()))
    else:

        async def go() -> None:
            try:
                rows = await collect(seeded)
                if args.rows:
                    args.rows.write_text(json.dumps(rows))
                offline(rows)
                if args.judge:
                    from bench.tools.ask_gate import WORD_FEATURES, gate_of

                    # The app's path has no word features: the gate judged there is fit without.
                    EXCLUDED.update(WORD_FEATURES)

                    today = {
                        p: _figures([r["answered"] for r in rows if r["set"] == p]) for p in parts
                    }
                    after = {}
                    for part in parts:
                        fitted = fit(
                            [r for r in rows if r["set"] != part],
                            args.label,
                            args.cost,
                            args.penalty,
                        )
                        judged = await collect(seeded, gate_of(fitted), {part})
                        after[part] = _figures([r["answered"] for r in judged])
                    report["judged"] = table(today, after)
            finally:
                await bootstrap.reset()

        with stack():
            asyncio.run(go())
    for value_ in dicts_in(report):
        value_.pop("misses", None)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
