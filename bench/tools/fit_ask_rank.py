"""`python -m bench.tools.fit_ask_rank`: fit the offline answer's ranker
(`shared/services/ask_rank.py`) on the ask question sets' tuning parts, and judge it on a set it
was not fit on, beside the hand-set chooser alone.

Each tuning set is stored as `bench ask` stores it (its own user, one stack) and each question
asked through the app's own offline path with the ranker off; for the question itself (not its
earlier turns) every capture the tools found is recorded with its features
(`ask_rank.features`) and whether the set expects it cited. The ranker is a conditional logit
(each question's captures compete; an L2 penalty on standardised features; scipy's L-BFGS):
the share of a question's weight on the captures it expects is what is fit, since the ranker
only picks which captures, never how many.

`--loso` (leave one set out): for each set, fit on the others and score it through `bench ask`'s
path; prints each set's figures (all cited, one cited, facts, nothing clean, and the share of
citations expected) with the ranker off and on, and their means. `--write`: fit on every
tuning set and write shared/services/ask_rank_weights.json. Never the held-out parts
(`bench.ask.HELD_OUT`): the lead runs those, once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import numpy as np
from scipy.optimize import minimize

from bench import ask
from bench.ask import DATA, HELD_OUT, TUNING_SETS, capture_id, load
from shared.services import ask_offline, ask_rank
from shared.services.ask_rank import FEATURES, Evidence
from shared.services.ask_run import Source
from shared.services.ask_words import Asked

# The L2 penalty on the standardised weights (1 and 10 measured on the fourteen sets' LOSO:
# 0.689 and 0.693 all cited).
PENALTY = 10.0


def _user(part: str) -> str:
    return f"bench-rank-{part}"


class Ranker:
    """`ask_offline.rerank`'s stand-in: records each question's features and either leaves the
    chooser's captures as they are (`fitted` None) or picks with `fitted`."""

    def __init__(self, fitted: Mapping[str, float] | None) -> None:
        self.fitted = fitted
        self.seen: list[tuple[list[str], list[dict[str, float]]]] = []

    def __call__(
        self,
        asked: Asked,
        question: str,
        found: Sequence[Source],
        chosen: Sequence[Source],
        evidence: Evidence,
        fitted: Mapping[str, float] | None = None,
    ) -> list[Source]:
        self.seen.append(
            ([s.id for s in found], ask_rank.features(asked, question, found, chosen, evidence))
        )
        if self.fitted is None:
            return list(chosen)
        return ask_rank.rerank(asked, question, found, chosen, evidence, self.fitted)


@contextmanager
def installed(ranker: Ranker) -> Iterator[Ranker]:
    """The app's offline answer with `ranker` in the ranker's place, while in the block."""
    real = vars(ask_offline)["rerank"]
    setattr(ask_offline, "rerank", ranker)  # noqa: B010 - patched for the measure only
    try:
        yield ranker
    finally:
        setattr(ask_offline, "rerank", real)  # noqa: B010


async def collect() -> list[dict[str, Any]]:
    """Every tuning question's candidates, their features and whether the set expects them
    cited, the ranker off; each set seeded once under its own user."""
    from shared import bootstrap
    from shared.services.ask import AskLimits, answer_of, new_question
    from shared.services.ask import ask as ask_it

    adapters = bootstrap.root().adapters
    out = []
    with installed(Ranker(None)) as ranker:
        for part, questions_file, corpus_file in TUNING_SETS:
            assert part not in HELD_OUT
            corpus = load(DATA / corpus_file)
            user = _user(part)
            await ask.seed(corpus, user)
            row_of = {capture_id(row["id"], user): row["id"] for row in corpus}
            for q in load(DATA / questions_file):
                if q["part"] != part:
                    continue
                earlier = []
                for before in q.get("earlier") or []:
                    earlier.append(("user", before))
                    said = await answer_of(
                        ask_it(user, new_question(before), ask.ASKED_AT, AskLimits(), adapters)
                    )
                    earlier.append(("assistant", said.answer.answer))
                ranker.seen.clear()
                question = new_question(q["question"], earlier)
                await answer_of(ask_it(user, question, ask.ASKED_AT, AskLimits(), adapters))
                candidates = []
                if ranker.seen:
                    ids, rows = ranker.seen[-1]
                    candidates = [
                        {"x": r, "y": row_of.get(i) in q["cite"]}
                        for i, r in zip(ids, rows, strict=True)
                    ]
                out.append({"set": part, "id": q["id"], "candidates": candidates})
    return out


def fit(questions: list[dict[str, Any]], penalty: float = PENALTY) -> dict[str, float]:
    """The conditional logit's weights on the raw features, fit on standardised ones."""
    groups = [q["candidates"] for q in questions if any(c["y"] for c in q["candidates"])]
    x = np.array([[c["x"][f] for f in FEATURES] for g in groups for c in g], dtype=float)
    mean, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd < 1e-9] = 1.0
    z = (x - mean) / sd
    spans, start = [], 0
    for g in groups:
        spans.append((start, start + len(g), np.array([c["y"] for c in g], dtype=bool)))
        start += len(g)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = z @ w
        total, grad = 0.5 * penalty * float(w @ w), penalty * w
        for a, b, y in spans:
            p = np.exp(s[a:b] - s[a:b].max())
            p /= p.sum()
            expected = p[y].sum()
            total -= float(np.log(expected + 1e-300))
            target = np.where(y, p / expected, 0.0)
            grad = grad + z[a:b].T @ (p - target)
        return total, grad

    w = minimize(loss, np.zeros(len(FEATURES)), jac=True, method="L-BFGS-B").x
    return dict(zip(FEATURES, (w / sd).tolist(), strict=True))


async def judged(part: str, fitted: Mapping[str, float] | None) -> dict[str, Any]:
    """`bench ask`'s figures for one set (already seeded), the ranker off (None) or `fitted`,
    and the share of each answer's citations the set expects."""
    questions_file, corpus_file = next((q, c) for p, q, c in TUNING_SETS if p == part)
    questions = [q for q in load(DATA / questions_file) if q["part"] == part]
    corpus = load(DATA / corpus_file)
    with installed(Ranker(fitted)):
        answered = await ask.ask_all(questions, corpus, _user(part))
    scored = ask.score(answered)
    cited = [a for a in answered if a["cited"] and not a["nothing"]]
    scored["precision"] = sum(
        len(set(a["cite"]) & set(a["cited"])) / len(a["cited"]) for a in cited
    ) / max(1, len(cited))
    scored.pop("misses", None)
    return scored


FIGURES = (*ask.FIGURES, "precision")


def main(argv: list[str] | None = None) -> int:
    from bench.stack import stack
    from shared import bootstrap

    parser = argparse.ArgumentParser(prog="python -m bench.tools.fit_ask_rank", description=__doc__)
    parser.add_argument("--loso", action="store_true", help="leave one set out: fit, judge")
    parser.add_argument("--write", action="store_true", help="fit on every set, write weights")
    args = parser.parse_args(argv)
    command = "python -m bench.tools.fit_ask_rank " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    report: dict[str, Any] = {"date": datetime.now(UTC).isoformat(timespec="seconds")}

    async def go() -> None:
        try:
            questions = await collect()
            if args.loso:
                sets = {}
                for part, _, _ in TUNING_SETS:
                    off = await judged(part, None)
                    on = await judged(part, fit([q for q in questions if q["set"] != part]))
                    sets[part] = {"off": off, "on": on}
                    print(
                        part,
                        [round(off[f], 3) for f in FIGURES],
                        "->",
                        [round(on[f], 3) for f in FIGURES],
                        file=sys.stderr,
                    )
                report["loso"] = sets
                report["mean"] = {
                    side: {
                        f: round(sum(s[side][f] for s in sets.values()) / len(sets), 3)
                        for f in FIGURES
                    }
                    for side in ("off", "on")
                }
            if args.write:
                weights = fit(questions)
                report["weights"] = weights
                ask_rank.WEIGHTS_FILE.write_text(
                    json.dumps(
                        {
                            "command": command,
                            "date": report["date"],
                            "fit_on": [p for p, _, _ in TUNING_SETS],
                            "penalty": PENALTY,
                            "weights": {f: round(w, 5) for f, w in weights.items()},
                        },
                        indent=1,
                    )
                    + "\n"
                )
        finally:
            await bootstrap.reset()

    with stack():
        asyncio.run(go())
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
