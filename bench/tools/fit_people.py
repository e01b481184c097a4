"""`python -m bench.tools.fit_people [--split] [--penalty P]`: a logistic regression over the
people rules' candidates and their features (bench/tools/people_candidates.py), measured by
leave-one-set-out on the tuning sets against the rules alone.

Per set: people exact / precision / recall as `python -m bench details --set …` counts them
(every bucketed capture whose people are labelled, names compared as filed), the rules alone
and the fitted decision (a candidate kept where its score is above 0.5) fitted on every other
set. `--split`: one set of weights for what the rules took and one for what they left. Never
run on the held-out sets (the frozen month, eval, months 43+, follow-ups)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from bench.labelled import DATA, load
from bench.tools.fit_ask_chooser import PENALTY, fit_logistic
from bench.tools.people_candidates import FEATURES, candidates
from shared.domain.people import people_in

TUNING = (
    "month_dev",
    *(f"month{n}" for n in range(2, 43)),
    "details",
    "details2",
    "details3",
    "dev",  # dev-dev5 label due dates only: no capture of theirs is counted
    "dev2",
    "dev3",
    "dev4",
    "dev5",
)
RECENT = frozenset(f"month{n}" for n in range(30, 33))


@dataclass(frozen=True)
class Row:
    """One labelled capture: the rules' names, the labels, the candidates and their features."""

    rules: frozenset[str]
    truth: frozenset[str]
    names: list[str]
    x: np.ndarray

    @property
    def y(self) -> np.ndarray:
        return np.array([n in self.truth for n in self.names], dtype=float)


def rows_of(name: str, split: bool) -> list[Row]:
    rows = []
    for capture in load(DATA / f"{name}_captures.jsonl"):
        if not capture.is_bucket or capture.people is None:
            continue
        found = candidates(capture.text)
        x = np.array([c.features for c in found], dtype=float).reshape(len(found), len(FEATURES))
        if split:
            taken = x[:, :1]
            x = np.hstack([x * taken, x * (1 - taken)])
        rows.append(
            Row(
                frozenset(people_in(capture.text)),
                frozenset(capture.people),
                [c.name for c in found],
                x,
            )
        )
    return rows


def counts(rows: list[Row], fitted: tuple[float, np.ndarray] | None) -> np.ndarray:
    """Exact, items, found, filed, labelled: the rules alone (None) or the fitted decision."""
    out = np.zeros(5, dtype=int)
    for row in rows:
        if fitted is None:
            chosen = set(row.rules)
        else:
            bias, weights = fitted
            scores = row.x @ weights + bias
            chosen = {n for n, s in zip(row.names, scores, strict=True) if s > 0}
        found = len(chosen & row.truth)
        out += (chosen == row.truth, 1, found, len(chosen), len(row.truth))
    return out


def shown(c: np.ndarray) -> str:
    exact, n, found, filed, labelled = (int(v) for v in c)
    return (
        f"{exact / n:.3f} / {found / max(filed, 1):.3f} / {found / max(labelled, 1):.3f} ({exact})"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tools.fit_people", description=__doc__)
    parser.add_argument("--penalty", type=float, default=PENALTY)
    parser.add_argument("--split", action="store_true")
    args = parser.parse_args(argv)
    sets = {name: rows for name in TUNING if (rows := rows_of(name, args.split))}
    items = sum(len(rows) for rows in sets.values())
    reachable = sum(r.truth <= set(r.names) for rows in sets.values() for r in rows)
    print(f"{items} captures; every label among the candidates on {reachable}")
    total = {"rules": np.zeros(5, dtype=int), "fitted": np.zeros(5, dtype=int)}
    recent = {"rules": np.zeros(5, dtype=int), "fitted": np.zeros(5, dtype=int)}
    up = down = 0
    print("| set | rules alone: exact / precision / recall | fitted, the set left out |")
    print("|---|---|---|")
    for name, rows in sets.items():
        others = [r for other, rs in sets.items() if other != name for r in rs]
        fitted = fit_logistic(
            np.vstack([r.x for r in others]), np.concatenate([r.y for r in others]), args.penalty
        )
        rules, decided = counts(rows, None), counts(rows, fitted)
        for pair in (total, recent) if name in RECENT else (total,):
            pair["rules"] += rules
            pair["fitted"] += decided
        up += decided[0] > rules[0]
        down += decided[0] < rules[0]
        print(f"| `{name}` | {shown(rules)} | {shown(decided)} |")
    for label, pair in (("months 30-32", recent), (f"all {len(sets)} sets", total)):
        print(f"| **{label}** | {shown(pair['rules'])} | {shown(pair['fitted'])} |")
    print(f"sets up {up}, down {down}, same {len(sets) - up - down}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
