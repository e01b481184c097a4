"""A fitted "is anything here" gate over the offline answer's own chooser, measured, not wired:
where `ask_offline._choose` cites something, a few features of the question and of the
candidates as that chooser sees them (its best weight over the cut, the best capture's words and
their gap to the next, what no candidate holds, the best cosine's z-score, whether what is asked
for is held, the soft match's share of the credit) go through a logistic regression, and over
its line the answer cites nothing. The chooser itself is untouched (a fitted chooser in its
place broke six of its contracts: bench/data/ASK_SETS.md). Fit and judged leave-one-set-out by
`python -m bench.tools.fit_ask_gate`."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from bench.tools.ask_chooser import KeepsQuestion
from shared.services import ask_offline
from shared.services.ask_offline import (
    ANSWER_CUT,
    _have,
    _own_terms,
    _referents,
    _weigh,
    anchored_terms,
    coverage,
)
from shared.services.ask_rank import holds, wanted
from shared.services.ask_run import Run, Source
from shared.services.ask_soft import Soft, vocabulary
from shared.services.ask_words import Asked, bare_word, term_of

# The features, in the order the weights are stored.
FEATURES = (
    "best_over_cut",  # the best candidate's weight (today's: words + meaning), less ANSWER_CUT
    "lead_words",  # the best candidate's words' coverage of the question (with the soft match)
    "words_gap",  # the best coverage among candidates, less the second best
    "soft_share",  # the share of the best candidate's coverage that the soft match gives
    "unheard",  # the share of the question's term weight that no candidate holds
    "own_unheard",  # the share of the question's own words that no candidate holds
    "lead_own_missing",  # the share of the question's own words the best candidate lacks
    "meaning",  # the best candidate's cosine above the floor, over (1 - floor)
    "meaning_z",  # the best candidate's cosine's z-score among the candidates'
    "meaning_lead_gap",  # the best cosine among the candidates, less the best candidate's
    "wants_missing",  # it asks for an amount, day, time, number or person; no chosen one holds one
    "named",  # the question names someone the captures know
    "follow_up",  # a follow-up (an earlier question carried)
    "own_terms",  # ln(1 + how many own words the question has)
    "chosen",  # ln(how many captures today's chooser cites)
    "focus_missing",  # the question's first own word (not a name): the best candidate lacks it
    "chosen_own_missing",  # the least share of the question's own words a chosen capture lacks
    "soft_own_unheard",  # the share of its own words no candidate holds, by words or soft match
)
# Features by single words' meaning (`Embedder.word_similarities`), filled in by the fitting
# tool after the answer (`word_features`): for each of the question's own words, the nearest
# word of the best capture (1 where it holds the word itself); their least and their mean.
WORD_FEATURES = ("word_meaning_min", "word_meaning_mean")


def question_features(
    asked: Asked,
    question: str,
    found: list[Source],
    chosen: list[Source],
    meaning: dict[str, float],
    floor: float,
    soft: Soft | None = None,
) -> dict[str, float]:
    """The gate's features for a question today's chooser answers with `chosen` (not empty)
    among the captures the tools `found`; `floor` is the embedder's `min_similarity`."""
    anchor, weights, named = anchored_terms(asked, found)
    weight = _weigh(weights, meaning, floor, named, soft)
    candidates = [s for s in found if not anchor or anchor & _have(s)] or found
    scored = sorted(((weight(s), s) for s in candidates), key=lambda p: (-p[0], p[1].id))
    lead = next((s for _, s in scored if s in chosen), chosen[0])
    best = max(w for w, _ in scored)
    covers = sorted((coverage(weights, s, soft) for s in candidates), reverse=True)
    hard = coverage(weights, lead)
    soft_cover = coverage(weights, lead, soft)
    held = [_have(s) for s in candidates]
    total = sum(weights.values()) or 1.0
    unheard = sum(w for t, w in weights.items() if not any(t in h for h in held)) / total
    own = [t for t in _own_terms(asked) if t not in anchor]
    own_unheard = sum(not any(t in h for h in held) for t in own) / len(own) if own else 0.0
    lead_have = _have(lead)
    lead_missing = sum(t not in lead_have for t in own) / len(own) if own else 0.0
    cosines = [meaning.get(s.id, floor) for s in candidates]
    mean = sum(cosines) / len(cosines)
    spread = math.sqrt(sum((c - mean) ** 2 for c in cosines) / len(cosines))
    lead_cos = meaning.get(lead.id, floor)

    def holds_term(source: Source, term: str) -> bool:
        return term in _have(source) or (soft or {}).get(term, {}).get(source.id, 0.0) > 0

    focus = next((t for w in asked.words if (t := term_of(w)) in own), None)
    kinds = wanted(asked, question)
    has = any(holds(asked, s, k) for s in chosen for k in kinds)
    return {
        "best_over_cut": best - ANSWER_CUT,
        "lead_words": soft_cover,
        "words_gap": covers[0] - (covers[1] if len(covers) > 1 else 0.0),
        "soft_share": (soft_cover - hard) / soft_cover if soft_cover > 0 else 0.0,
        "unheard": unheard if weights else 0.0,
        "own_unheard": own_unheard,
        "lead_own_missing": lead_missing,
        "meaning": (lead_cos - floor) / (1.0 - floor) if meaning else 0.0,
        "meaning_z": (lead_cos - mean) / spread if meaning and spread > 1e-9 else 0.0,
        "meaning_lead_gap": max(cosines) - lead_cos if meaning else 0.0,
        "wants_missing": float(bool(kinds) and not has),
        "named": float(bool(anchor)),
        "follow_up": float(bool(asked.before)),
        "own_terms": math.log1p(len(own)),
        "chosen": math.log(len(chosen)),
        "focus_missing": float(focus is not None and not holds_term(lead, focus)),
        "chosen_own_missing": min(
            sum(not holds_term(s, t) for t in own) / len(own) if own else 0.0 for s in chosen
        ),
        "soft_own_unheard": (
            sum(not any(holds_term(s, t) for s in candidates) for t in own) / len(own)
            if own
            else 0.0
        ),
    }


def _word_pairs(
    asked: Asked,
    found: list[Source],
    chosen: list[Source],
    meaning: dict[str, float],
    floor: float,
    soft: Soft | None,
) -> tuple[list[str], list[str]]:
    """The question's own words (as asked, not names) and the best chosen capture's words."""
    anchor, weights, named = anchored_terms(asked, found)
    weight = _weigh(weights, meaning, floor, named, soft)
    lead = max(chosen, key=lambda s: (weight(s), s.id))
    own = set(_own_terms(asked)) - anchor
    asked_words = list(
        dict.fromkeys(bare_word(w).casefold() for w in asked.words if term_of(w) in own)
    )
    return asked_words, list(vocabulary([lead], set()))


async def word_features(embedder: Any, asked_words: list[str], lead_words: list[str]) -> dict:
    """WORD_FEATURES for a question's own words against its best capture's words."""
    if not asked_words or not lead_words:
        return {"word_meaning_min": 0.0, "word_meaning_mean": 0.0}
    rows = await embedder.word_similarities(asked_words, lead_words)
    best = [
        1.0 if word in lead_words else max(row, default=0.0)
        for word, row in zip(asked_words, rows, strict=True)
    ]
    return {"word_meaning_min": min(best), "word_meaning_mean": sum(best) / len(best)}


@dataclass(frozen=True)
class GateWeights:
    """A fitted gate: the logit's bias and weights, and the line over which nothing is cited."""

    bias: float
    weights: dict[str, float]
    line: float

    def score(self, row: dict[str, float]) -> float:
        """The probability that nothing here answers."""
        z = self.bias + sum(self.weights.get(name, 0.0) * x for name, x in row.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def gate_of(fit: dict[str, Any]) -> GateWeights:
    return GateWeights(fit["bias"], dict(fit["weights"]), fit["line"])


@dataclass
class Gate(KeepsQuestion):
    """`_choose` as today, then the gate (`weights`; None: record only): where today's choice
    cites something that is not a list nor what the last answer quoted, its features are
    recorded in `seen` and, over the gate's line, nothing is cited."""

    weights: GateWeights | None
    choose: Callable[..., list[Source]]
    question: str = ""
    seen: list[dict[str, float] | None] = field(default_factory=list)
    # The last recorded question's own words and its best capture's words (`word_features`).
    words: list[tuple[list[str], list[str]]] = field(default_factory=list)

    def __call__(
        self,
        asked: Asked,
        run: Run,
        listed: set[str],
        today: date,
        meaning: dict[str, float] | None = None,
        soft: Soft | None = None,
    ) -> list[Source]:
        chosen = self.choose(asked, run, listed, today, meaning, soft)
        found = list(run.seen.values())
        if not chosen or (listed and not _own_terms(asked)) or _referents(asked, found):
            # A bare list, or a follow-up pointing back at what was quoted: not gated.
            self.seen.append(None)
            return chosen
        floor = run.adapters.embedder.min_similarity
        row = question_features(asked, self.question, found, chosen, meaning or {}, floor, soft)
        self.seen.append(row)
        self.words.append(_word_pairs(asked, found, chosen, meaning or {}, floor, soft))
        if self.weights is not None and self.weights.score(row) >= self.weights.line:
            return []
        return chosen


@contextmanager
def installed(gate_weights: GateWeights | None) -> Iterator[Gate]:
    """The app's offline answer with the gate over its chooser, while in the block."""
    choose, read_question = ask_offline._choose, vars(ask_offline)["read_question"]
    gate = Gate(gate_weights, choose)
    setattr(ask_offline, "_choose", gate)  # noqa: B010 - patched for the measure only
    setattr(ask_offline, "read_question", gate.read(read_question))  # noqa: B010
    try:
        yield gate
    finally:
        setattr(ask_offline, "_choose", choose)  # noqa: B010
        setattr(ask_offline, "read_question", read_question)  # noqa: B010
