"""`python -m bench.tools.ask_soft_words`: the offline answer's soft word match
(`shared/services/ask_soft.py`: a question's word that no candidate holds matched, for part of
its weight, by a candidate's word near it in meaning, single-word MiniLM vectors) measured on
the eight tuning parts, each variant beside the others.

The eight tuning sets are stored as `bench ask` stores them (each its own user, one stack,
seeded once), then for each `--variant` (`ask_soft`'s or `ask_offline`'s constants, and
SOFT_LINE for the embedder's `word_line`, as `NAME=value,NAME=value`; none: the app as it is;
`SOFT_CREDIT=0`: the app without the soft match) every question is asked through the app's
own offline path and scored by `bench ask`'s `score`: per set the four figures (and as
questions), their mean over the eight, over the six older sets (where the line and credit were
fit) and over tuning8 and tuning9 (the carry-over check); the words compared per question
(`words_asked`) and those embedded, not found in the adapter's cache (`words_embedded`: each
variant from a cold cache). `--misses` keeps each set's misses; `--pairs` prints, per question
with an unheard word, that word and the candidates' word nearest it.

Its first version (commit aba4734) held the match itself and tried what the app does not keep:
credit scaled by the cosine's rise over the line, terms some candidates hold matched too, no
guard, the soft match not counted as an own word (bench/data/ASK_SETS.md has the figures).

Never the held-out sets (`bench.ask.HELD_OUT`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from bench.ask import DATA, FIGURES, HELD_OUT, TUNING_SETS, load
from bench.ask import mean_figures as mean
from bench.tools.ask_clauses import parse_variant

SETS = TUNING_SETS
OLDER = ("tuning", "tuning2", "tuning4", "tuning5", "tuning6", "tuning7")
CARRY = ("tuning8", "tuning9")


class Words:
    """What the embedder's word comparisons took while the bench asked: per call, the words
    compared (terms and candidates' words) and those embedded (not in the cache); per unheard
    term, the nearest word."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.embedded: list[int] = []
        self.pairs: list[tuple[str, str, float]] = []
        self.spent_ms: list[float] = []


@contextmanager
def recording(embedder: Any, words: Words, cold: bool = False) -> Iterator[None]:
    """`embedder.word_similarities` counted and timed into `words` while the bench asks (then
    put back); `cold`: the word cache emptied before each call."""
    compare = embedder.word_similarities

    async def counted(terms: list[str], candidates: list[str]) -> list[list[float]]:
        if cold:
            embedder.words.clear()
        before = embedder.words.embedded
        started = time.perf_counter()
        rows: list[list[float]] = await compare(terms, candidates)
        words.spent_ms.append(round(1000 * (time.perf_counter() - started), 2))
        words.asked.append(len(set(terms) | set(candidates)))
        words.embedded.append(embedder.words.embedded - before)
        for term, row in zip(terms, rows, strict=True):
            at = max(range(len(row)), key=row.__getitem__, default=None)
            if at is not None:
                words.pairs.append((term, candidates[at], round(row[at], 3)))
        return rows

    embedder.word_similarities = counted
    try:
        yield
    finally:
        del embedder.word_similarities  # the class's own again


# -- the measure --------------------------------------------------------------------------------


def _user(part: str) -> str:
    return f"bench-soft-{part}"


def _set(variant: dict[str, Any], embedder: Any) -> dict[str, tuple[Any, str, Any]]:
    """Set `variant` on what holds each name (SOFT_LINE: the embedder's `word_line`); what was
    there, to put back."""
    from shared.services import ask_offline, ask_soft

    was: dict[str, tuple[Any, str, Any]] = {}
    for name, value in variant.items():
        held: Any = embedder if name == "SOFT_LINE" else None
        attr = "word_line" if name == "SOFT_LINE" else name
        held = held or next((m for m in (ask_soft, ask_offline) if hasattr(m, name)), None)
        if held is None:
            raise SystemExit(f"no constant {name} in ask_soft or ask_offline")
        was[name] = (held, attr, getattr(held, attr))
        setattr(held, attr, value)
    return was


def counts(scored: dict[str, Any], answered: list[dict[str, Any]]) -> dict[str, int]:
    """A set's figures as questions: all cited, one cited and facts of those with an answer,
    nothing clean of those without."""
    nothing = sum(bool(a["nothing"]) for a in answered)
    out = {f: round((scored[f] or 0.0) * (len(answered) - nothing)) for f in FIGURES[:3]}
    out["nothing_clean"] = round((scored["nothing_clean"] or 0.0) * nothing)
    return out


async def measure(
    variants: list[dict[str, Any]], parts: list[str], cold: bool = False
) -> list[dict[str, Any]]:
    """Each variant's figures on the tuning sets named (seeded once)."""
    from bench import ask
    from shared import bootstrap

    try:
        embedder: Any = bootstrap.root().adapters.embedder
        loaded = []
        for part, questions_file, corpus_file in SETS:
            if part not in parts:
                continue
            assert part not in HELD_OUT
            questions = [q for q in load(DATA / questions_file) if q["part"] == part]
            corpus = load(DATA / corpus_file)
            await ask.seed(corpus, _user(part))
            loaded.append((part, questions, corpus))
        out = []
        for variant in variants:
            was = _set(variant, embedder)
            words = Words()
            embedder.words.clear()  # each variant from a cold cache
            try:
                with recording(embedder, words, cold):
                    answered = {
                        part: await ask.ask_all(questions, corpus, _user(part))
                        for part, questions, corpus in loaded
                    }
            finally:
                for held, name, value in was.values():
                    setattr(held, name, value)
            scored = {p: ask.score(a) for p, a in answered.items()}
            done = tuple(scored)
            result: dict[str, Any] = {
                "variant": variant,
                "sets": scored,
                "counts": {p: counts(scored[p], a) for p, a in answered.items()},
                "mean": mean(scored, done),
                "pairs": words.pairs,
                "words_asked": words.asked,
                "words_embedded": words.embedded,
                "compare_ms": words.spent_ms,
            }
            if all(p in done for p in OLDER):
                result["mean_older"] = mean(scored, OLDER)
            if all(p in done for p in CARRY):
                result["mean_carry"] = mean(scored, CARRY)
            out.append(result)
        return out
    finally:
        await bootstrap.reset()


def table(result: dict[str, Any]) -> str:
    rows = [f"variant {result['variant'] or '(as shipped)'}"]
    for part, scored in result["sets"].items():
        n = result["counts"][part]
        rows.append(
            f"  {part:8} "
            + " / ".join(f"{scored[f]:.3f}" for f in FIGURES)
            + "   ("
            + " ".join(str(n[f]) for f in FIGURES)
            + ")"
        )
    for name in ("mean", "mean_older", "mean_carry"):
        if name in result:
            m = result[name]
            rows.append(
                f"  {name:10} " + " / ".join(f"{m[f]:.3f}" for f in FIGURES) + f"  = {m['overall']}"
            )
    for name in ("words_asked", "words_embedded", "compare_ms"):
        n = sorted(result[name])
        if n:
            p95 = n[int(0.95 * (len(n) - 1))]
            rows.append(
                f"  {name}: median {n[len(n) // 2]}, p95 {p95}, max {n[-1]}, {len(n)} calls"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from bench.stack import stack

    parser = argparse.ArgumentParser(
        prog="python -m bench.tools.ask_soft_words", description=__doc__
    )
    parser.add_argument("--variant", action="append", default=[], help="NAME=value,NAME=value")
    parser.add_argument(
        "--parts", default=",".join(p for p, _, _ in SETS), help="tuning parts, comma-separated"
    )
    parser.add_argument("--misses", action="store_true", help="keep the misses in the report")
    parser.add_argument("--pairs", action="store_true", help="print the soft matches made")
    parser.add_argument("--json", action="store_true", help="the report as JSON, not a table")
    parser.add_argument(
        "--cold", action="store_true", help="empty the word cache before each question"
    )
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    if unknown := set(parts) - {p for p, _, _ in SETS}:
        raise SystemExit(f"not a tuning part here: {sorted(unknown)}")
    variants = [parse_variant(v) for v in args.variant] or [{}]
    with stack():
        results = asyncio.run(measure(variants, parts, args.cold))
    for result in results:
        if not args.misses:
            for scored in result["sets"].values():
                scored.pop("misses", None)
        if not args.pairs:
            result.pop("pairs")
    if args.json:
        argv = sys.argv[1:] if argv is None else argv
        report = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": "python -m bench.tools.ask_soft_words " + " ".join(argv),
            "results": results,
        }
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        for result in results:
            print(table(result))
            for pair in result.get("pairs", []):
                print("   ", pair)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
