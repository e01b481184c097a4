"""`python -m bench.tools.ask_soft_words`: the offline answer with a question's word that no
candidate holds matched, for part of its weight, by a candidate's word near it in meaning
(single-word MiniLM vectors), measured on the eight tuning parts beside the app's own.

The idea: what misses is mostly words a person treats as one that the captures do not share
("bike" for "cycling", "debt" for "owe", "flight" for "plane"). MiniLM on a single word gives a
usable word similarity for some pairs (bike/cycling 0.74, flight/plane 0.75; unrelated pairs
0.17-0.34). So, per question, the terms no candidate holds (`unheard`: not a name the question
gives, not the money term, which has its own words) and every candidate's own words
(`vocabulary`) are embedded in one batched call by the app's embedder (a word's vector cached
here: a person's vocabulary repeats), and a capture holding a word whose cosine to an unheard
term reaches SOFT_LINE is credited SOFT_CREDIT times the cosine (SOFT_SCALE "cos") or its
rise over the line (SOFT_SCALE "over": (cos - line) / (1 - line)) of that term's weight, in
`coverage` (and so in the weight, the band, and what is newer) and, SOFT_OWN, where
`relevant` asks for one of the question's own words. The anchor (the names the captures know)
is left as it is: a name is not matched by meaning ("Priya" is near "Priyanka").

The eight tuning sets are stored as `bench ask` stores them (each its own user, one stack,
seeded once), then for each `--variant` (this module's SOFT_* constants, or `ask_offline`'s, as
`NAME=value,NAME=value`; none: the app as it is) every question is asked through the app's own
offline path (the soft match put in `_meaning`'s, `coverage`'s and `relevant`'s place while it
runs) and scored by `bench ask`'s `score`: per set the four figures, their mean over the eight,
over the six older sets (where the line and credit are fit) and over tuning8 and tuning9 (the
carry-over check). `--misses` keeps each set's misses; `--pairs` prints the soft matches made.

Never the held-out sets (`bench.ask.HELD_OUT`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from bench.ask import DATA, HELD_OUT, load
from bench.tools.ask_clauses import parse_variant

SETS = [
    ("tuning", "ask_questions.jsonl", "ask_corpus.jsonl"),
    ("tuning2", "ask2_questions.jsonl", "ask2_corpus.jsonl"),
    ("tuning4", "ask4_questions.jsonl", "ask4_corpus.jsonl"),
    ("tuning5", "ask5_questions.jsonl", "ask5_corpus.jsonl"),
    ("tuning6", "ask6_questions.jsonl", "ask6_corpus.jsonl"),
    ("tuning7", "ask7_questions.jsonl", "ask7_corpus.jsonl"),
    ("tuning8", "ask8_questions.jsonl", "ask8_corpus.jsonl"),
    ("tuning9", "ask9_questions.jsonl", "ask9_corpus.jsonl"),
]
FIGURES = ("all_cited", "one_cited", "facts", "nothing_clean")
OLDER = ("tuning", "tuning2", "tuning4", "tuning5", "tuning6", "tuning7")
CARRY = ("tuning8", "tuning9")

# -- the soft match -----------------------------------------------------------------------------

# A candidate's word matches an unheard term from this cosine of their single-word vectors.
SOFT_LINE = 0.6
# The share of the term's weight a soft match is credited, scaled as SOFT_SCALE says: "cos"
# (times the cosine) or "over" (times the cosine's rise over the line, to 1).
SOFT_CREDIT = 0.0
SOFT_SCALE = "cos"
# Whether a soft match counts as one of the question's own words where `relevant` asks for one.
SOFT_OWN = True
# Whether a term some candidates hold is matched softly too, in the captures that do not.
SOFT_HELD = False
# Whether a question with an unheard term that nothing matches, even softly, is left as it is:
# it asks of something never captured ("did I renew my passport?": "renewal" is near "renew",
# nothing near "passport").
SOFT_GUARD = False
# A word shorter than this is neither matched nor embedded.
MIN_LETTERS = 3


def soft_credit(cosine: float) -> float:
    """The share of a term's weight a word this near it is credited (0 under the line)."""
    if cosine < SOFT_LINE:
        return 0.0
    if SOFT_SCALE == "over":
        return SOFT_CREDIT * (cosine - SOFT_LINE) / (1.0 - SOFT_LINE)
    return SOFT_CREDIT * cosine


def unheard(asked: Any, found: list[Any]) -> dict[str, str]:
    """The question's terms no candidate holds, each with the word it was asked as: not the
    money term (its own words answer it), not a name the question gives."""
    from shared.services.ask_offline import _have
    from shared.services.ask_words import MONEY, _bare, _term

    held: set[str] = set().union(*(_have(s) for s in found)) if found and not SOFT_HELD else set()
    names = {_term(n) for n in asked.names}
    out: dict[str, str] = {}
    for word in asked.words:
        term = _term(word)
        if term in asked.terms and term not in held and term != MONEY and term not in names:
            out.setdefault(term, _bare(word).casefold())
    return out


def vocabulary(found: list[Any], skip: set[str]) -> dict[str, set[str]]:
    """Each candidate's own words (casefolded, no stop words, numbers or short words, none
    whose stem is in `skip`), with the ids of the captures that say them."""
    from shared.services.ask_words import STOP_WORDS, _bare, stem, words_of

    out: dict[str, set[str]] = {}
    for source in found:
        for word in words_of(f"{source.title} {source.text} {' '.join(source.people)}"):
            folded = _bare(word).casefold()
            if len(folded) < MIN_LETTERS or folded in STOP_WORDS or not folded.isalpha():
                continue
            if stem(folded) in skip:
                continue
            out.setdefault(folded, set()).add(source.id)
    return out


def soft_matches(
    terms: dict[str, str], words: dict[str, set[str]], vector: dict[str, list[float]]
) -> dict[str, dict[str, float]]:
    """Per unheard term, each capture's credit (0..1 of the term's weight): the best of its
    words' by `soft_credit` of their cosine to the term's word (both unit vectors)."""
    out: dict[str, dict[str, float]] = {}
    for term, asked_as in terms.items():
        q = vector.get(asked_as)
        if q is None:
            continue
        credits: dict[str, float] = {}
        for word, ids in words.items():
            v = vector.get(word)
            if v is None or word == asked_as:
                continue
            credit = soft_credit(sum(a * b for a, b in zip(q, v, strict=True)))
            if credit <= 0.0:
                continue
            for i in ids:
                credits[i] = max(credits.get(i, 0.0), credit)
        if credits:
            out[term] = credits
    return out


def soft_coverage(
    weights: dict[str, float], have: set[str], source_id: str, soft: dict[str, dict[str, float]]
) -> float:
    """`ask_offline.coverage` with a term the capture does not hold credited by its soft
    match."""
    total = sum(weights.values())
    if not total:
        return 0.0
    got = 0.0
    for term, w in weights.items():
        if term in have:
            got += w
        else:
            got += w * soft.get(term, {}).get(source_id, 0.0)
    return got / total


class WordVectors:
    """Single words' unit vectors by the app's embedder, remembered (a person's vocabulary
    repeats); the words embedded per question counted."""

    def __init__(self) -> None:
        self.known: dict[str, list[float]] = {}
        self.embedded: list[int] = []  # new to the cache, per question
        self.asked: list[int] = []  # in the question's call, cache or not
        self.spent: list[float] = []

    async def of(self, embedder: Any, words: list[str]) -> dict[str, list[float]]:
        new = [w for w in dict.fromkeys(words) if w not in self.known]
        started = time.perf_counter()
        if new:
            for word, v in zip(new, await embedder.embed(new), strict=True):
                norm = math.sqrt(sum(x * x for x in v)) or 1.0
                self.known[word] = [x / norm for x in v]
        self.spent.append(time.perf_counter() - started)
        self.embedded.append(len(new))
        self.asked.append(len(set(words)))
        return {w: self.known[w] for w in words if w in self.known}


# The soft matches of the question being answered (the bench answers one at a time), and the
# pairs made (for `--pairs`).
_SOFT: dict[str, dict[str, float]] = {}
_PAIRS: list[tuple[str, str, float]] = []
_VECTORS = WordVectors()


def _active() -> bool:
    return SOFT_CREDIT > 0.0


@contextmanager
def installed() -> Iterator[None]:
    """The soft match in the app's offline path while the bench asks: `_meaning` also finds the
    soft matches of the question's unheard terms, `coverage` and `relevant` credit them."""
    from shared.domain.errors import EmbedderUnavailable
    from shared.services import ask_offline

    meaning, coverage, relevant = ask_offline._meaning, ask_offline.coverage, ask_offline.relevant

    async def with_soft(run: Any, question: Any, asked: Any) -> dict[str, float]:
        found_meaning = await meaning(run, question, asked)
        _SOFT.clear()
        if not _active():
            return found_meaning
        found = list(run.seen.values())
        terms = unheard(asked, found)
        if not terms:
            return found_meaning
        words = vocabulary(found, set() if SOFT_HELD else set(asked.terms))
        try:
            vectors = await _VECTORS.of(run.adapters.embedder, [*terms.values(), *words])
        except EmbedderUnavailable:
            return found_meaning
        soft = soft_matches(terms, words, vectors)
        if not (SOFT_GUARD and set(terms) - set(soft)):
            _SOFT.update(soft)
        for asked_as in terms.values():
            q = vectors[asked_as]
            near = [
                (w, sum(a * b for a, b in zip(q, vectors[w], strict=True)))
                for w in words
                if w in vectors and w != asked_as
            ]
            best = max(near, key=lambda p: p[1], default=("", 0.0))
            _PAIRS.append((asked_as, best[0], round(best[1], 3)))
        return found_meaning

    def soft_cov(weights: dict[str, float], source: Any) -> float:
        if not _SOFT:
            return coverage(weights, source)
        return soft_coverage(weights, ask_offline._have(source), source.id, _SOFT)

    def soft_relevant(asked: Any, weights: dict[str, float], source: Any, cut: float) -> bool:
        own = [t for t, w in asked.terms.items() if w == 1.0]
        have = ask_offline._have(source)
        held = any(t in have or (SOFT_OWN and _SOFT.get(t, {}).get(source.id)) for t in own)
        return soft_cov(weights, source) > cut and (not own or held)

    setattr(ask_offline, "_meaning", with_soft)  # noqa: B010 - patched for the measure only
    setattr(ask_offline, "coverage", soft_cov)  # noqa: B010
    setattr(ask_offline, "relevant", soft_relevant)  # noqa: B010
    try:
        yield
    finally:
        setattr(ask_offline, "_meaning", meaning)  # noqa: B010
        setattr(ask_offline, "coverage", coverage)  # noqa: B010
        setattr(ask_offline, "relevant", relevant)  # noqa: B010
        _SOFT.clear()


# -- the measure --------------------------------------------------------------------------------


def _user(part: str) -> str:
    return f"bench-soft-{part}"


def _set(variant: dict[str, Any]) -> dict[str, tuple[Any, str, Any]]:
    """Set `variant` on the modules that hold each name; what was there, to put back."""
    from shared.services import ask_offline

    here = sys.modules[__name__]
    was: dict[str, tuple[Any, str, Any]] = {}
    for name, value in variant.items():
        module = next((m for m in (here, ask_offline) if hasattr(m, name)), None)
        if module is None:
            raise SystemExit(f"no constant {name} here or in ask_offline")
        was[name] = (module, name, getattr(module, name))
        setattr(module, name, value)
    return was


def mean(scored: dict[str, dict[str, Any]], parts: tuple[str, ...]) -> dict[str, float]:
    """Each figure's mean over `parts`, and the four figures' mean."""
    out = {f: round(sum(scored[p][f] for p in parts) / len(parts), 3) for f in FIGURES}
    out["overall"] = round(sum(out[f] for f in FIGURES) / len(FIGURES), 3)
    return out


def counts(scored: dict[str, Any], answered: list[dict[str, Any]]) -> dict[str, int]:
    """A set's figures as questions: all cited, one cited and facts of those with an answer,
    nothing clean of those without."""
    nothing = sum(bool(a["nothing"]) for a in answered)
    out = {f: round((scored[f] or 0.0) * (len(answered) - nothing)) for f in FIGURES[:3]}
    out["nothing_clean"] = round((scored["nothing_clean"] or 0.0) * nothing)
    return out


async def measure(variants: list[dict[str, Any]], parts: list[str]) -> list[dict[str, Any]]:
    """Each variant's figures on the tuning sets named (seeded once)."""
    from bench import ask
    from shared import bootstrap

    try:
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
            was = _set(variant)
            _PAIRS.clear()
            embedded_from = len(_VECTORS.embedded)
            _VECTORS.known.clear()  # each variant from a cold cache
            try:
                with installed():
                    answered = {
                        part: await ask.ask_all(questions, corpus, _user(part))
                        for part, questions, corpus in loaded
                    }
            finally:
                for module, name, value in was.values():
                    setattr(module, name, value)
            scored = {p: ask.score(a) for p, a in answered.items()}
            done = tuple(scored)
            result: dict[str, Any] = {
                "variant": variant,
                "sets": scored,
                "counts": {p: counts(scored[p], a) for p, a in answered.items()},
                "mean": mean(scored, done),
                "pairs": list(_PAIRS),
                "words_embedded": _VECTORS.embedded[embedded_from:],
                "words_asked": _VECTORS.asked[embedded_from:],
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
    for name in ("words_asked", "words_embedded"):
        n = sorted(result[name])
        if n:
            rows.append(f"  {name}: median {n[len(n) // 2]}, max {n[-1]}, {len(n)} questions")
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
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    if unknown := set(parts) - {p for p, _, _ in SETS}:
        raise SystemExit(f"not a tuning part here: {sorted(unknown)}")
    variants = [parse_variant(v) for v in args.variant] or [{}]
    with stack():
        results = asyncio.run(measure(variants, parts))
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
