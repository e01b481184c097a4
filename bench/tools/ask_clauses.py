"""`python -m bench.tools.ask_clauses`: the offline answer with each capture weighed by its best
CLAUSE's meaning too, measured on the six tuning parts beside the app's own (a measure, not
wired: bench/data/ASK_SETS.md says why).

The idea: a capture's vector is about its subject, so one about the garden room is near every
garden-room question whether or not it says what is asked, while the capture that answers often
says it in one clause among others ("…so Gary's doing our electrics now"). So each of the
CLAUSE_CANDIDATES best candidates by the app's weight (`ask_offline._weigh`) is split into
clauses (`clauses_of`: sentences, lines, " - ", ";", ", so", " but "; a short capture whole),
the clauses embedded in one batched call by the app's embedder, and the best clause's cosine
to the question (and/or its margin over the capture's other clauses, and the question's words'
coverage of that clause) put in the weight (`clause_weight`); the quote may be the sentence
that holds the best clause (CLAUSE_QUOTE).

The six tuning sets are stored as `bench ask` stores them (each its own user, one stack, seeded
once), then, for each `--variant` (this module's CLAUSE_* constants or `ask_offline`'s and
`ask_compose`'s, as `NAME=value,NAME=value`; none: the app as it is), every question is asked
through the app's own offline path (the clause weighing put in `_meaning`'s and `_weigh`'s
place while it runs) and scored by `bench ask`'s `score`: per set the four figures, their mean
over the six, over the four older sets (where cuts are fit first) and over tuning6 and tuning7
(the carry-over check). `--misses` keeps each set's misses in the report, `--rows` saves every
question's candidates with their features (today's weight, the words' coverage, the whole
capture's cosine, the best clause's cosine, margin, words' coverage and text).

Never the held-out sets (`frozen` of ask_questions.jsonl, ask3_*, ask8_*, ask9_*).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from bench.ask import DATA, FIGURES, HELD_OUT, TUNING_SETS, load
from bench.ask import mean_figures as mean

SETS = TUNING_SETS[:6]
OLDER = ("tuning", "tuning2", "tuning4", "tuning5")
CARRY = ("tuning6", "tuning7")

# -- a capture's best clause --------------------------------------------------------------------

# How many of the best candidates by the app's weight have their clauses embedded.
CLAUSE_CANDIDATES = 12
# How the best clause's meaning enters the weight: "add" (beside the whole capture's), "max"
# (the larger of the two, at MEANING_WEIGHT) or "replace" (the clause's alone).
CLAUSE_MODE = "add"
# The best clause's cosine above CLAUSE_FLOOR (over 1 - the model's floor), at this weight.
CLAUSE_WEIGHT = 0.0
CLAUSE_FLOOR = 0.3
# The best clause's margin over the mean of the capture's other clauses, at this weight.
CLAUSE_MARGIN = 0.0
# The share of the words' coverage taken from the best clause instead of the whole capture.
CLAUSE_WORDS = 0.0
# The quote: the sentence that holds the best clause (else the app's, by the question's words).
CLAUSE_QUOTE = False
# A capture of at most SHORT_WORDS words is one clause; a piece under MIN_CLAUSE_WORDS words
# joins the next.
SHORT_WORDS = 8
MIN_CLAUSE_WORDS = 3
# Where a capture says more than one thing: a sentence's end, a line, a dash between spaces, a
# semicolon, ", so", " but ".
_CLAUSE_BREAK = re.compile(
    r"(?<=[.!?])\s+|\s*\n+\s*|\s+[-\u2013\u2014]+\s+|\s*;\s*|,\s*(?=so\b)|\s+(?=but\b)",
    re.IGNORECASE,
)


class Clause(NamedTuple):
    """A capture's clause nearest the question in meaning: its cosine, its margin over the
    mean of the capture's other clauses (0 for one clause), its text."""

    similarity: float
    margin: float
    text: str


def clauses_of(text: str) -> list[str]:
    """The clauses a capture says: a short one whole, else split at sentences, lines, a dash,
    a semicolon, ", so" and " but", a piece of a word or two joined to the next."""
    text = text.strip()
    if len(text.split()) <= SHORT_WORDS:
        return [text] if text else []
    out: list[str] = []
    carry = ""
    for piece in _CLAUSE_BREAK.split(text):
        piece = f"{carry} {piece.strip()}".strip()
        if not piece.strip(" ,.;:-\u2013\u2014"):
            continue
        if len(piece.split()) < MIN_CLAUSE_WORDS:
            carry = piece
            continue
        out.append(piece)
        carry = ""
    if carry:
        if out:
            out[-1] = f"{out[-1]} {carry}"
        else:
            out.append(carry)
    return out


def best_clause(question: list[float], clauses: list[str], vectors: list[list[float]]) -> Clause:
    """The clause nearest `question` (a unit vector) and its margin over the others."""
    sims = [_cosine(question, v) for v in vectors]
    at = max(range(len(sims)), key=lambda i: sims[i])
    rest = [x for i, x in enumerate(sims) if i != at]
    margin = sims[at] - sum(rest) / len(rest) if rest else 0.0
    return Clause(sims[at], margin, clauses[at])


def _cosine(a: list[float], b: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a) * sum(y * y for y in b)) or 1.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm


def clause_weight(
    whole: float,
    words: float,
    clause: Clause | None,
    clause_words: float,
    least: float,
    floor: float,
) -> float:
    """A capture's weight with its best clause: `whole` its meaning as the app weighs it (its
    cosine over `least`, scaled), `words` its words' coverage; the clause's cosine over the
    larger of `least` and CLAUSE_FLOOR, scaled alike, put in as CLAUSE_MODE says, its margin
    and its own words' coverage as CLAUSE_MARGIN and CLAUSE_WORDS say. Without a clause (a
    candidate not among the best), the app's weight."""
    from shared.services.ask_offline import MEANING_WEIGHT

    if clause is None:
        return words + MEANING_WEIGHT * whole
    near = max(0.0, clause.similarity - max(least, CLAUSE_FLOOR)) / (1.0 - floor)
    meant = {"max": max(whole, near), "replace": near}.get(CLAUSE_MODE, whole)
    words = (1 - CLAUSE_WORDS) * words + CLAUSE_WORDS * clause_words
    return (
        words
        + MEANING_WEIGHT * meant
        + CLAUSE_WEIGHT * near
        + CLAUSE_MARGIN * max(0.0, clause.margin)
    )


# The best clause of each candidate of the question being answered, by capture id (the bench
# answers one question at a time).
_CLAUSES: dict[str, Clause] = {}


def _active() -> bool:
    return bool(CLAUSE_WEIGHT or CLAUSE_MARGIN or CLAUSE_WORDS or CLAUSE_QUOTE) or (
        CLAUSE_MODE != "add"
    )


@contextmanager
def installed() -> Iterator[None]:
    """The clause weighing in the app's offline path while the bench asks: `_meaning` also
    finds the best candidates' best clauses, `_weigh` weighs them, `best_quote` may quote them."""
    from shared.services import ask_compose, ask_offline

    meaning, weigh, quote = ask_offline._meaning, ask_offline._weigh, ask_compose.best_quote

    async def with_clauses(run: Any, question: Any, asked: Any) -> dict[str, float]:
        found = await meaning(run, question, asked)
        _CLAUSES.clear()
        if found and _active() and CLAUSE_CANDIDATES:
            _CLAUSES.update(await _clause_meaning(run, question, asked, found, weigh))
        return found

    def weighed(
        weights: dict[str, float],
        meant: dict[str, float],
        floor: float,
        among: list[Any],
        soft: Any = None,
    ) -> Callable[[Any], float]:
        def weight(source: Any) -> float:
            similarity = meant.get(source.id, floor)
            others = sorted(meant.get(s.id, floor) for s in among if s.id != source.id)
            least = max(floor, others[len(others) // 2]) if others else floor
            whole = max(0.0, similarity - least) / (1.0 - floor)
            clause = _CLAUSES.get(source.id)
            own = _covered(weights, clause.text) if clause else 0.0
            words = ask_offline.coverage(weights, source, soft)
            return clause_weight(whole, words, clause, own, least, floor)

        return weight

    def quoted(asked: Any, source: Any) -> str:
        clause = _CLAUSES.get(source.id)
        if not (CLAUSE_QUOTE and clause):
            return quote(asked, source)
        return _quote_holding(source.text, clause.text) or quote(asked, source)

    setattr(ask_offline, "_meaning", with_clauses)  # noqa: B010 - patched for the measure only
    setattr(ask_offline, "_weigh", weighed)  # noqa: B010
    setattr(ask_compose, "best_quote", quoted)  # noqa: B010
    try:
        yield
    finally:
        setattr(ask_offline, "_meaning", meaning)  # noqa: B010
        setattr(ask_offline, "_weigh", weigh)  # noqa: B010
        setattr(ask_compose, "best_quote", quote)  # noqa: B010
        _CLAUSES.clear()


async def _clause_meaning(
    run: Any, question: Any, asked: Any, meaning: dict[str, float], weigh: Any
) -> dict[str, Clause]:
    """The best clause of each of the CLAUSE_CANDIDATES best captures by the app's weight:
    the question (a follow-up's with its earlier one, as the app weighs it) and their clauses
    embedded in one call."""
    from shared.domain.errors import EmbedderUnavailable
    from shared.services import ask_offline

    found = list(run.seen.values())
    anchor, _, weight = _app_weight(asked, run, meaning, weigh)
    ranked = sorted(
        (s for s in found if ask_offline._anchored(anchor, s)), key=lambda s: (-weight(s), s.id)
    )[:CLAUSE_CANDIDATES]
    split = [(s, clauses_of(s.text)) for s in ranked]
    asking = [question.text, *([asked.before] if asked.before else [])]
    try:
        vectors = await run.adapters.embedder.embed(asking + [c for _, cs in split for c in cs])
    except EmbedderUnavailable:
        return {}
    vector = list(vectors[0])
    if asked.before:
        carried = ask_offline.CARRIED_MEANING
        vector = [a + carried * b for a, b in zip(vector, vectors[1], strict=True)]
    at = len(asking)
    out: dict[str, Clause] = {}
    for source, cs in split:
        if cs:
            out[source.id] = best_clause(vector, cs, vectors[at : at + len(cs)])
        at += len(cs)
    return out


def _app_weight(
    asked: Any, run: Any, meaning: dict[str, float], weigh: Any
) -> tuple[set[str], dict[str, float], Callable[[Any], float]]:
    """The anchor, the terms' weights and the weight of a capture as `_choose` makes them."""
    from shared.services import ask_offline

    anchor, weights, named = ask_offline.anchored_terms(asked, list(run.seen.values()))
    return anchor, weights, weigh(weights, meaning, run.adapters.embedder.min_similarity, named)


def _covered(weights: dict[str, float], text: str) -> float:
    """How much of what the question is about `text` speaks of (0..1)."""
    from shared.services.ask_words import stems_of

    total = sum(weights.values())
    have = stems_of(text)
    return sum(w for t, w in weights.items() if t in have) / total if total else 0.0


def _quote_holding(text: str, clause: str) -> str | None:
    """The sentence of `text` that holds `clause` (and the next, within the app's length), or
    None where the text is short enough to be quoted whole."""
    from shared.services.ask_compose import _SENTENCE, MAX_QUOTE_CHARS

    text = " ".join(text.split())
    if len(text) <= MAX_QUOTE_CHARS:
        return None
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    start = " ".join(clause.split())[:40].casefold()
    at = next((i for i, s in enumerate(sentences) if start in s.casefold()), None)
    if at is None:
        return None
    quote = sentences[at]
    if at + 1 < len(sentences) and len(quote) + len(sentences[at + 1]) < MAX_QUOTE_CHARS:
        quote = f"{quote} {sentences[at + 1]}"
    return quote if len(quote) <= MAX_QUOTE_CHARS else quote[: MAX_QUOTE_CHARS - 1] + "\u2026"


# -- the measure --------------------------------------------------------------------------------


def _user(part: str) -> str:
    return f"bench-clauses-{part}"


def parse_variant(text: str) -> dict[str, Any]:
    """`NAME=value,…` as the constants to set (numbers as numbers, else text)."""
    out: dict[str, Any] = {}
    for pair in filter(None, text.split(",")):
        name, _, raw = pair.partition("=")
        value: Any
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                value = {"True": True, "False": False}.get(raw, raw)
        out[name.strip()] = value
    return out


def _set(variant: dict[str, Any]) -> dict[str, tuple[Any, str, Any]]:
    """Set `variant` on the modules that hold each name; what was there, to put back."""
    from shared.services import ask_compose, ask_offline

    here = sys.modules[__name__]
    was: dict[str, tuple[Any, str, Any]] = {}
    for name, value in variant.items():
        module = next((m for m in (here, ask_offline, ask_compose) if hasattr(m, name)), None)
        if module is None:
            raise SystemExit(f"no constant {name} here, in ask_offline or ask_compose")
        was[name] = (module, name, getattr(module, name))
        setattr(module, name, value)
    return was


def recorder(
    rows: list[dict[str, Any]], part: str, row_of: dict[str, str], weigh: Any
) -> Callable[..., Any]:
    """`_choose` that records every candidate's features (the app's weight by `weigh`, its
    words' coverage, its whole vector's cosine, its best clause's cosine, margin, words'
    coverage and text) and chooses as the app does."""
    from shared.services import ask_offline

    choose = ask_offline._choose

    def chooser(
        asked: Any, run: Any, listed: Any, today: Any, meaning: Any = None, soft: Any = None
    ) -> Any:
        meaning = meaning or {}
        found = list(run.seen.values())
        anchor, weights, weight = _app_weight(asked, run, meaning, weigh)
        chosen = choose(asked, run, listed, today, meaning, soft)

        def features(source: Any) -> dict[str, Any]:
            clause = _CLAUSES.get(source.id)
            return {
                "id": row_of.get(source.id, source.id),
                "anchored": ask_offline._anchored(anchor, source),
                "weight": round(weight(source), 4),
                "words": round(ask_offline.coverage(weights, source), 4),
                "cos": round(meaning.get(source.id, 0.0), 4),
                "clause_cos": round(clause.similarity, 4) if clause else None,
                "clause_margin": round(clause.margin, 4) if clause else None,
                "clause_words": round(_covered(weights, clause.text), 4) if clause else None,
                "clause": clause.text if clause else None,
            }

        rows.append(
            {
                "set": part,
                "shape": asked.shape,
                "chosen": [row_of.get(s.id, s.id) for s in chosen],
                "candidates": [features(s) for s in found],
            }
        )
        return chosen

    return chooser


async def _asked(
    part: str,
    questions: list[dict[str, Any]],
    corpus: list[dict[str, Any]],
    rows: list[dict[str, Any]] | None,
    weigh: Any,
) -> list[dict[str, Any]]:
    """One set's questions answered (each question's candidates recorded in `rows`, if given:
    the question's own choice, not its earlier turns')."""
    from bench import ask
    from shared.services import ask_offline

    if rows is None:
        return await ask.ask_all(questions, corpus, _user(part))
    row_of = {ask.capture_id(r["id"], _user(part)): r["id"] for r in corpus}
    choose = ask_offline._choose
    setattr(ask_offline, "_choose", recorder(rows, part, row_of, weigh))  # noqa: B010
    answered = []
    try:
        for q in questions:
            at = len(rows)
            one = (await ask.ask_all([q], corpus, _user(part)))[0]
            del rows[at:-1]  # the earlier turns' choices
            keep = ("id", "question", "cite", "nothing", "cited", "answer")
            rows[-1].update({k: one[k] for k in keep})
            answered.append(one)
    finally:
        setattr(ask_offline, "_choose", choose)  # noqa: B010
    return answered


async def measure(
    variants: list[dict[str, Any]], rows: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Each variant's figures on the six tuning sets (seeded once)."""
    from bench import ask
    from shared import bootstrap
    from shared.services import ask_offline

    weigh = ask_offline._weigh
    try:
        loaded = []
        for part, questions_file, corpus_file in SETS:
            assert part not in HELD_OUT
            questions = [q for q in load(DATA / questions_file) if q["part"] == part]
            corpus = load(DATA / corpus_file)
            await ask.seed(corpus, _user(part))
            loaded.append((part, questions, corpus))
        out = []
        for variant in variants:
            was = _set(variant)
            try:
                with installed():
                    scored = {
                        part: ask.score(await _asked(part, questions, corpus, rows, weigh))
                        for part, questions, corpus in loaded
                    }
            finally:
                for module, name, value in was.values():
                    setattr(module, name, value)
            out.append(
                {
                    "variant": variant,
                    "sets": scored,
                    "mean6": mean(scored, tuple(p for p, _, _ in SETS)),
                    "mean_older": mean(scored, OLDER),
                    "mean_carry": mean(scored, CARRY),
                }
            )
        return out
    finally:
        await bootstrap.reset()


# -- how well each feature tells an answer ----------------------------------------------------

# The features `separation` compares: the app's weight, the whole capture's cosine, the best
# clause's cosine, its margin, the words' coverage of the capture and of its best clause.
SIGNALS: dict[str, Callable[[dict[str, Any]], float]] = {
    "weight": lambda c: c["weight"],
    "cos": lambda c: c["cos"],
    "clause_cos": lambda c: c["clause_cos"],
    "clause_margin": lambda c: c["clause_margin"],
    "words": lambda c: c["words"],
    "clause_words": lambda c: c["clause_words"],
}


def _auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    won = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return round(won / (len(pos) * len(neg)), 3)


def separation(rows: list[dict[str, Any]], parts: tuple[str, ...]) -> dict[str, Any]:
    """Over the candidates whose clauses were embedded (the best by the app's weight), each
    signal's AUC: within a question that has an answer, an expected capture over one that is
    not (`within`); and the best candidate (by the app's weight) of a question whose best is
    expected over that of a question with nothing to find (`answer_vs_nothing`)."""
    out: dict[str, Any] = {}
    for name, signal in SIGNALS.items():
        pairs: list[tuple[float, float]] = []
        answers, nothings = [], []
        for row in rows:
            if row["set"] not in parts:
                continue
            cands = [c for c in row["candidates"] if c["anchored"] and c["clause_cos"] is not None]
            if not cands:
                continue
            if row["nothing"]:
                nothings.append(signal(max(cands, key=lambda c: c["weight"])))
                continue
            pos = [signal(c) for c in cands if c["id"] in row["cite"]]
            neg = [signal(c) for c in cands if c["id"] not in row["cite"]]
            pairs += [(p, q) for p in pos for q in neg]
            top = max(cands, key=lambda c: c["weight"])
            if top["id"] in row["cite"]:
                answers.append(signal(top))
        won = sum((p > q) + 0.5 * (p == q) for p, q in pairs)
        out[name] = {
            "within": round(won / len(pairs), 3) if pairs else None,
            "answer_vs_nothing": _auc(answers, nothings),
        }
    return out


def clause_cost(draws: int = 30) -> dict[str, Any]:
    """What embedding the best candidates' clauses at question time costs: the clauses of k
    captures drawn from the six tuning corpora (k = 3, 5, 12), embedded in one call by the
    offline MiniLM, `draws` times each: the clauses' count (median) and the call's ms."""
    import random
    import statistics
    import time

    from bench.measure import percentiles
    from shared.adapters.embedder.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.warm_up()
    texts = [row["text"] for _, _, corpus in SETS for row in load(DATA / corpus)]
    rng = random.Random(1)
    out: dict[str, Any] = {}
    for k in (3, 5, 12):
        spent, counts = [], []
        for _ in range(draws):
            clauses = [c for t in rng.sample(texts, k) for c in clauses_of(t)]
            started = time.perf_counter()
            embedder.embed_sync(clauses)
            spent.append(time.perf_counter() - started)
            counts.append(len(clauses))
        out[f"{k}_candidates"] = {
            "clauses_median": statistics.median(counts),
            "embed_ms": percentiles(spent),
        }
    return out


def table(result: dict[str, Any]) -> str:
    rows = [f"variant {result['variant'] or '(as shipped)'}"]
    for part, scored in result["sets"].items():
        rows.append(f"  {part:8} " + " / ".join(f"{scored[f]:.3f}" for f in FIGURES))
    for name in ("mean6", "mean_older", "mean_carry"):
        m = result[name]
        rows.append(
            f"  {name:10} " + " / ".join(f"{m[f]:.3f}" for f in FIGURES) + f"  = {m['overall']}"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from bench.stack import stack

    parser = argparse.ArgumentParser(prog="python -m bench.tools.ask_clauses", description=__doc__)
    parser.add_argument("--variant", action="append", default=[], help="NAME=value,NAME=value")
    parser.add_argument("--misses", action="store_true", help="keep the misses in the report")
    parser.add_argument("--json", action="store_true", help="the report as JSON, not a table")
    parser.add_argument("--rows", type=Path, help="save each question's candidates here (JSON)")
    parser.add_argument(
        "--clause-cost", action="store_true", help="only time embedding the clauses (no stack)"
    )
    args = parser.parse_args(argv)
    if args.clause_cost:
        print(json.dumps(clause_cost(), indent=1))
        return 0
    variants = [parse_variant(v) for v in args.variant] or [{}]
    rows: list[dict[str, Any]] | None = [] if args.rows else None
    with stack():
        results = asyncio.run(measure(variants, rows))
    if args.rows and rows is not None:
        args.rows.write_text(json.dumps(rows, ensure_ascii=False))
        # The first variant's rows (each variant records every question once): how well each
        # signal tells an answer.
        first = rows[: len(rows) // len(results)]
        results[0]["separation"] = {
            "older": separation(first, OLDER),
            "carry": separation(first, CARRY),
        }
    if not args.misses:
        for result in results:
            for scored in result["sets"].values():
                scored.pop("misses", None)
    if args.json:
        argv = sys.argv[1:] if argv is None else argv
        report = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": "python -m bench.tools.ask_clauses " + " ".join(argv),
            "results": results,
        }
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print("\n".join(table(r) for r in results))
        if "separation" in results[0]:
            print(json.dumps(results[0]["separation"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
