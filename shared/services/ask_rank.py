"""The offline answer's second look: as many captures as the hand-set chooser would cite,
picked again by a ranker fit on the tuning question sets (a conditional logit over a few
features of each capture the tools found; `python -m bench.tools.fit_ask_rank` fits it)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import cast

from shared.domain.said_dates import resolved_dates
from shared.services.ask_kinds import Kind, asked_for
from shared.services.ask_kinds import holds as kind_held
from shared.services.ask_run import Source
from shared.services.ask_words import Asked

WEIGHTS_FILE = Path(__file__).with_name("ask_rank_weights.json")

# The features, in the order the weights are stored.
FEATURES = (
    "words",  # how much of what the question is about the capture holds (0..1)
    "words_near",  # the share of the question's own words it holds by their first letters
    "meaning",  # its cosine to the question above the model's floor, over (1 - floor)
    "meaning_z",  # its cosine's z-score among the candidates'
    "meaning_top",  # 1 / its rank by cosine among the candidates (1, 1/2, 1/3 ...)
    "wants_has",  # the question asks for an amount, a day, a time, a number or a person: held
    "wants_missing",  # ... and not held
    "superseded",  # a newer capture about the same thing that speaks of the question
    "superseded_now",  # that, where the question asks how things stand now
    "supersedes",  # an older capture about the same thing that speaks of the question
    "quoted",  # a follow-up pointing back, and the last answer quoted it
    "chooser_weight",  # the hand-set chooser's weight for it (words and meaning)
    "chooser_cites",  # the hand-set chooser cites it
    "chooser_first",  # ... first
)


@dataclass(frozen=True)
class Evidence:
    """What the hand-set chooser knows of the captures found, for the ranker to read."""

    words: Mapping[str, float]  # each capture's coverage of the question's terms
    held: Mapping[str, set[str]]  # each capture's word stems
    kin: Callable[[Source, Source], float]  # how much two captures are about the same thing
    meaning: Mapping[str, float]  # each capture's cosine to the question
    floor: float  # the embedder's floor of similarity
    named: set[str]  # the names of the question's own words the captures know
    referents: set[str]  # what the last answer quoted, for a follow-up pointing back
    weight: Callable[[Source], float]  # the hand-set chooser's weight


@cache
def weights() -> dict[str, float]:
    """The ranker's weights (`bench/tools/fit_ask_rank.py --write`)."""
    fitted = json.loads(WEIGHTS_FILE.read_text())
    return {name: float(fitted["weights"].get(name, 0.0)) for name in FEATURES}


def rerank(
    asked: Asked,
    question: str,
    found: Sequence[Source],
    chosen: Sequence[Source],
    evidence: Evidence,
    fitted: Mapping[str, float] | None = None,
) -> list[Source]:
    """As many of `found` as `chosen` holds, the best by the ranker first. Only which captures
    changes: how many, and their order in the answer, stay the chooser's to say."""
    if not chosen:
        return []
    w = weights() if fitted is None else fitted
    rows = features(asked, question, found, list(chosen), evidence)
    scores = [sum(w.get(name, 0.0) * x for name, x in row.items()) for row in rows]
    best = sorted(range(len(found)), key=lambda i: (-scores[i], i))[: len(chosen)]
    return [found[i] for i in best]


# -- what a question asks for, and whether a capture holds it ----------------------------------

# The day a question asks for ("when …?", "what date …?"); the other kinds are `ask_kinds`'.
_WANTS_DAY = re.compile(
    r"^\W*(?:(?:and|so|but|then)\s+)?when\b|\bby when\b|\bwhat (day|date)\b|\bwhich day\b",
    re.IGNORECASE,
)


def wanted(asked: Asked, text: str) -> list[str]:
    """What kind of thing the question asks for: an amount, a time, a count or a name
    (`ask_kinds.asked_for`), or a day (none: it asks what, or how things stand)."""
    kinds: list[str] = list(asked_for(text))
    if "time" not in kinds and (_WANTS_DAY.search(text) or asked.shape == "due"):
        kinds.append("day")
    return kinds


def holds(asked: Asked, source: Source, kind: str) -> bool:
    """Whether the capture holds a thing of that kind."""
    if kind == "day":
        return source.due_date is not None or bool(
            resolved_dates(source.text, source.created_at.date())
        )
    return kind_held(asked, source, cast(Kind, kind))


# The letters two words must share from the start to be near ("completion", "complete").
NEAR_LETTERS = 5


def near(terms: Sequence[str], held: set[str]) -> float:
    """The share of `terms` a capture's stems hold, or one starting with the same
    NEAR_LETTERS letters ("reflective" and "reflections", "collect" and "collecting")."""
    if not terms:
        return 0.0
    starts = {h[:NEAR_LETTERS] for h in held if len(h) >= NEAR_LETTERS}
    hits = [t in held or (len(t) >= NEAR_LETTERS and t[:NEAR_LETTERS] in starts) for t in terms]
    return sum(hits) / len(terms)


# -- the features ----------------------------------------------------------------------------


def features(
    asked: Asked,
    question: str,
    found: Sequence[Source],
    chosen: Sequence[Source],
    evidence: Evidence,
) -> list[dict[str, float]]:
    """Each found capture's features (FEATURES), in `found`'s order."""
    if not found:
        return []
    e = evidence
    words = [e.words.get(s.id, 0.0) for s in found]
    own = [t for t, w in asked.terms.items() if w == 1.0 and t not in e.named]
    cosines = [e.meaning.get(s.id, e.floor) for s in found]
    mean = sum(cosines) / len(cosines)
    spread = math.sqrt(sum((c - mean) ** 2 for c in cosines) / len(cosines))
    rank = {i: r for r, i in enumerate(sorted(range(len(found)), key=lambda i: -cosines[i]))}
    kinds = wanted(asked, question)
    oldest_first = asked.order == "oldest"
    now = asked.order == "newest" or asked.shape == "latest"
    cited = [s.id for s in chosen]
    # Only a capture that speaks of the question can supersede or be superseded by another.
    speaking = [(j, o) for j, o in enumerate(found) if words[j] > 0.0]
    out = []
    for i, s in enumerate(found):
        has = [holds(asked, s, k) for k in kinds]
        later = [
            e.kin(s, o) * words[j]
            for j, o in speaking
            if (o.created_at > s.created_at) != oldest_first and o.created_at != s.created_at
        ]
        earlier = [
            e.kin(s, o) * words[j]
            for j, o in speaking
            if (o.created_at < s.created_at) != oldest_first and o.created_at != s.created_at
        ]
        held = e.held.get(s.id, set())
        out.append(
            {
                "words": words[i],
                "words_near": near(own, held),
                "meaning": (cosines[i] - e.floor) / (1.0 - e.floor) if e.meaning else 0.0,
                "meaning_z": (cosines[i] - mean) / spread if e.meaning and spread > 1e-9 else 0.0,
                "meaning_top": 1.0 / (1 + rank[i]) if e.meaning else 0.0,
                "wants_has": float(any(has)),
                "wants_missing": float(bool(kinds) and not any(has)),
                "superseded": max(later, default=0.0),
                "superseded_now": max(later, default=0.0) if now else 0.0,
                "supersedes": max(earlier, default=0.0),
                "quoted": float(s.id in e.referents),
                "chooser_weight": e.weight(s),
                "chooser_cites": float(s.id in cited),
                "chooser_first": float(bool(cited) and s.id == cited[0]),
            }
        )
    return out
