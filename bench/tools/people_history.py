"""`python -m bench.tools.people_history [--set NAME …] [--variant V …]`: the people rules
replayed over a month in the order it was written (`captured`), with what the rules themselves
found in the user's earlier captures as a memory (never the labels: the app has only its own
output), against the rules alone: people exact / precision / recall per set and variant.

Variants: `all` (every person the rules found earlier), `cued` (what the app keeps:
`shared.domain.people_history.cued_people`, the names found with a strong cue), `cued+not`
(`cued`, and a capitalised word the rules left after "at", "from", "w", "to"… earlier is no
one later unless the cued memory holds it). Tuning sets only: never a held-out file."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from bench.labelled import DATA, LabelledCapture, load
from shared.domain.people import people_in
from shared.domain.people_history import cued_people
from shared.domain.people_words import CLAUSE_BREAK, POSSESSIVE

VARIANTS = ("all", "cued", "cued+not")
TUNING = [
    "month_dev",
    *(f"month{n}" for n in range(2, 43)),
    "details",
    "details2",
    "details3",
]
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_THING_BEFORE = {"at", "from", "w", "with", "to", "via", "in", "on"}

Pairs = list[tuple[set[str], set[str]]]
Figures = tuple[int, int, int, int, int]


def _sum(a: Figures, b: Figures) -> Figures:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4])


def _left_after_a_things_cue(text: str, found: list[str]) -> set[str]:
    """Capitalised words the rules left after a firm's or a place's cue ("at Sturgess")."""
    words = list(_WORD.finditer(text))
    taken = {p.lower() for n in found for p in n.split()}
    left = set()
    for i in range(1, len(words)):
        word = POSSESSIVE.sub("", words[i].group(0))
        gap = text[words[i - 1].end() : words[i].start()]
        if (
            word[:1].isupper()
            and word.lower() not in taken
            and words[i - 1].group(0).lower() in _THING_BEFORE
            and not CLAUSE_BREAK.search(gap)
        ):
            left.add(word.lower())
    return left


def replay(captures: Iterable[LabelledCapture], variant: str | None) -> Pairs:
    """(labelled, filed) people of each bucketed capture whose people are labelled, the set
    replayed in the order it was written."""
    ordered = sorted(
        (c for c in captures if c.is_bucket),
        key=lambda c: (c.captured is None, c.captured.isoformat() if c.captured else ""),
    )
    known: set[str] = set()
    cued: set[str] = set()
    not_people: set[str] = set()
    pairs: Pairs = []
    for capture in ordered:
        found = people_in(capture.text)
        if variant is None:
            filed = found
        else:
            filed = people_in(capture.text, frozenset(known if variant == "all" else cued))
        if variant == "cued+not":
            lowered = {c.lower() for c in cued}
            filed = [
                n for n in filed if " " in n or n.lower() not in not_people or n.lower() in lowered
            ]
        known.update(found)
        cued.update(cued_people(capture.text, found))
        not_people |= _left_after_a_things_cue(capture.text, found)
        if capture.people is not None:
            pairs.append((set(capture.people), set(filed)))
    return pairs


def figures(pairs: Pairs) -> Figures:
    """Captures exactly right, captures, names right, names filed, names labelled."""
    right = sum(len(t & f) for t, f in pairs)
    return (
        sum(t == f for t, f in pairs),
        len(pairs),
        right,
        sum(len(f) for _, f in pairs),
        sum(len(t) for t, _ in pairs),
    )


def cell(f: Figures) -> str:
    exact, n, right, filed, labelled = f
    return f"{exact / n:.3f} / {right / max(filed, 1):.3f} / {right / max(labelled, 1):.3f}"


def main(argv: list[str], out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.tools.people_history", description=__doc__
    )
    parser.add_argument("--set", action="append", help="a tuning set's name (default: all 45)")
    parser.add_argument("--variant", action="append", choices=VARIANTS)
    args = parser.parse_args(argv)
    variants: list[str | None] = [None, *(args.variant or VARIANTS)]
    out("| set | rules alone | " + " | ".join(str(v) for v in variants[1:]) + " |")
    out("|---|---|" + "---|" * (len(variants) - 1))
    totals: dict[str | None, Figures] = {v: (0, 0, 0, 0, 0) for v in variants}
    for name in args.set or TUNING:
        captures = load(Path(DATA / f"{name}_captures.jsonl"))
        row = {v: figures(replay(captures, v)) for v in variants}
        for v, f in row.items():
            totals[v] = _sum(totals[v], f)
        out(f"| `{name}` | " + " | ".join(_with_gain(row, v) for v in variants) + " |")
    out(
        f"| **all** ({totals[None][1]}) | "
        + " | ".join(_with_gain(totals, v) for v in variants)
        + " |"
    )
    return 0


def _with_gain(row: dict[str | None, Figures], v: str | None) -> str:
    if v is None:
        return cell(row[None])
    return f"{cell(row[v])} ({row[v][0] - row[None][0]:+d})"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
