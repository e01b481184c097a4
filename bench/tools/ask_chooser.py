"""A fitted chooser for the offline answer, measured beside the app's hand-set one
(`shared/services/ask_offline._choose`), not wired into the app: each capture the tools found
described by a few general features (its words' and its meaning's closeness to the question,
whether it names whom the question names and holds what the question asks for, whether a newer
capture about the same thing supersedes it, whether the last answer quoted it), scored by a
logistic regression whose weights and two lines are fit on question sets
(`bench/data/ask_chooser_weights.json`, written by `python -m bench.tools.fit_ask_chooser
--write`), never set by hand. `choose` has `_choose`'s signature, so that the bench puts it in
its place; bench/data/ASK_SETS.md says why it stays a measure."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from shared.services.ask_offline import (
    MAX_CITATIONS,
    _anchor,
    _have,
    _own_terms,
    _referents,
    coverage,
    kinship,
    specificity,
)
from shared.services.ask_rank import Evidence
from shared.services.ask_rank import features as rank_features
from shared.services.ask_run import Run, Source
from shared.services.ask_words import Asked

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "data" / "ask_chooser_weights.json"

# The features, in the order the weights are stored: those `shared/services/ask_rank.py`
# describes (FEATURES there), and three of this chooser's own.
FEATURES = (
    "words",
    "words_gap",  # its words' coverage, less the best candidate's (<= 0)
    "words_near",
    "unheard",  # the share of what the question is about that no candidate holds
    "meaning",
    "meaning_z",
    "meaning_top",
    "named_missing",  # the question names someone the captures know, and this one does not
    "wants_has",
    "wants_missing",
    "superseded",
    "superseded_now",
    "supersedes",
    "quoted",
)


@dataclass(frozen=True)
class Weights:
    """A fitted scorer: a weight per feature and a bias (the logit), and its lines: the best
    candidate must reach `answer_line` for anything to be cited, each other `cite_line`."""

    bias: float
    weights: dict[str, float]
    answer_line: float
    cite_line: float

    def score(self, features: dict[str, float]) -> float:
        """The probability that the capture is one the answer rests on."""
        z = self.bias + sum(self.weights.get(name, 0.0) * x for name, x in features.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def fitted(path: Path = WEIGHTS_FILE) -> Weights:
    """The weights fit last (`python -m bench.tools.fit_ask_chooser --write`)."""
    return weights_of(json.loads(path.read_text()))


def weights_of(fit: dict[str, Any]) -> Weights:
    return Weights(fit["bias"], dict(fit["weights"]), fit["answer_line"], fit["cite_line"])


# -- the features ----------------------------------------------------------------------------


def features(
    asked: Asked,
    question: str,
    found: list[Source],
    meaning: dict[str, float],
    floor: float,
    referents: set[str],
) -> list[dict[str, float]]:
    """Each found capture's features (FEATURES), in `found`'s order: the app's ranker's
    (`ask_rank.features`) that do not read the hand-set chooser, and three of its own."""
    if not found:
        return []
    weights = specificity(asked, found)
    named = _anchor(asked, found)
    # The person it names is what every capture weighed holds: the rest of its words say
    # which of theirs answers ("Leila's birthday" is not "Leila's new job").
    if any(t not in named for t in weights):
        weights = {t: w for t, w in weights.items() if t not in named}
    held = {s.id: _have(s) for s in found}
    words = {s.id: coverage(weights, s) for s in found}
    evidence = Evidence(
        words=words,
        held=held,
        kin=kinship(found),
        meaning=meaning,
        floor=floor,
        named=named,
        referents=referents,
        weight=lambda s: 0.0,  # the hand-set chooser's view is not among these features
    )
    best_words = max(words.values())
    total = sum(weights.values()) or 1.0
    unheard = sum(w for t, w in weights.items() if not any(t in h for h in held.values())) / total
    return [
        {
            **{name: row[name] for name in FEATURES if name in row},
            "words_gap": words[s.id] - best_words,
            "unheard": unheard if weights else 0.0,
            "named_missing": float(bool(named) and not named & held[s.id]),
        }
        for s, row in zip(found, rank_features(asked, question, found, [], evidence), strict=True)
    ]


def pick(
    found: Sequence[Source], scores: Sequence[float], weights: Weights, limit: int
) -> list[Source]:
    """The captures over the lines, best first, at most `limit`: none when the best is under
    the answer line."""
    ranked = sorted(zip(scores, range(len(found)), strict=True), key=lambda p: (-p[0], p[1]))
    if not ranked or ranked[0][0] < weights.answer_line:
        return []
    return [found[i] for p, i in ranked[:limit] if p >= weights.cite_line or i == ranked[0][1]]


def superseded_by(
    found: Sequence[Source],
    rows: Sequence[dict[str, float]],
    weights: Weights,
    chosen: Sequence[Source],
) -> list[Source]:
    """The older captures a newer one supersedes that would answer but for it (their score,
    the newer aside, over the answer line), the likeliest first: what the answer says
    changed."""
    newest = max(s.created_at for s in chosen)
    out = []
    for source, row in zip(found, rows, strict=True):
        if source in chosen or source.created_at >= newest or not row["superseded"]:
            continue
        alone = weights.score({**row, "superseded": 0.0})
        if alone >= weights.answer_line:
            out.append((alone, source))
    return [s for _, s in sorted(out, key=lambda p: -p[0])]


def days_ahead(chosen: Sequence[Source], today: date) -> list[Source]:
    """Those still ahead, the soonest first."""
    ahead = [s for s in chosen if s.due_date is not None and s.due_date >= today]
    return sorted(ahead, key=lambda s: (s.due_date or date.max, s.id))


def citation_limit(asked: Asked) -> int:
    """How many captures an answer may cite, as the app's chooser allows: MAX_CITATIONS for a
    count, a what or a list; 3 for a who, when or latest, and where it asks how things stand
    now or were at first."""
    if asked.order != "default":
        return 3
    return MAX_CITATIONS if asked.shape in ("count", "what", "due", "next") else 3


class KeepsQuestion:
    """A chooser that keeps the question's text as it is read (what it asks for is in its
    words): install `read(the app's read_question)` beside it."""

    question: str = ""

    def read(self, read_question: Any) -> Any:
        """`read_question` that keeps the question's text (what it asks for is in its words)."""

        def read(question: Any) -> Asked:
            self.question = question.text
            asked: Asked = read_question(question)
            return asked

        return read


class Chooser(KeepsQuestion):
    """`_choose` by the fitted scorer (`weights`): for a bare "what's due?" the list still
    ahead, as the app's; else the captures over the lines, at most a few, with the older one
    the best supersedes (that would answer but for it: what the answer says changed); the
    newest first (the oldest, asked how it was at first; the soonest due for a "what's the
    next …?"; what the last answer quoted first). `seen` records each call's features for the
    fit."""

    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self.seen: list[tuple[Asked, list[str], list[dict[str, float]]]] = []
        self.spent_s: list[float] = []  # each scored choice's time (features, scores, pick)

    def __call__(
        self,
        asked: Asked,
        run: Run,
        listed: set[str],
        today: date,
        meaning: dict[str, float] | None = None,
        soft: dict[str, dict[str, float]] | None = None,  # the app's soft word match: unused
    ) -> list[Source]:
        started = time.perf_counter()
        found = list(run.seen.values())
        if listed and not _own_terms(asked):
            ahead = [run.seen[i] for i in listed]
            if asked.shape == "due":
                return days_ahead(ahead, today)[:MAX_CITATIONS]
            return sorted(ahead, key=lambda s: s.created_at, reverse=True)[:MAX_CITATIONS]
        referents = _referents(asked, found)
        floor = run.adapters.embedder.min_similarity
        rows = features(asked, self.question, found, meaning or {}, floor, referents)
        self.seen.append((asked, [s.id for s in found], rows))
        scores = [self.weights.score(r) for r in rows]
        top = pick(found, scores, self.weights, citation_limit(asked))
        if top and asked.order != "oldest" and asked.shape != "count":
            before = superseded_by(found, rows, self.weights, top)
            top += [s for s in before if s not in top][:1]
        if asked.order == "oldest":
            top.sort(key=lambda s: s.created_at)
        elif asked.shape == "next" and (ahead := days_ahead(top, today)) and not referents:
            top = ahead[:2]
        else:
            top.sort(key=lambda s: s.created_at, reverse=True)
        if referents:
            top.sort(key=lambda s: s.id not in referents)
        self.spent_s.append(time.perf_counter() - started)
        return top


@contextmanager
def installed(chooser: Chooser) -> Iterator[Chooser]:
    """The app's offline answer with `chooser` in place of its own, while in the block."""
    from shared.services import ask_offline

    choose, read_question = ask_offline._choose, vars(ask_offline)["read_question"]
    setattr(ask_offline, "_choose", chooser)  # noqa: B010 - patched for the measure only
    setattr(ask_offline, "read_question", chooser.read(read_question))  # noqa: B010
    try:
        yield chooser
    finally:
        setattr(ask_offline, "_choose", choose)  # noqa: B010
        setattr(ask_offline, "read_question", read_question)  # noqa: B010
