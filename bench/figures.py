"""The classification figures of one run over a labelled set: the bars, per-bucket precision and
recall, the confusion matrix, calibration, filed details, tokens, cost and latency."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bench.labelled import AMBIGUOUS, BUCKETS, UNINTELLIGIBLE, LabelledCapture
from bench.measure import percentiles
from shared.domain.classification import Classification
from shared.domain.details import details_for
from shared.domain.outcomes import FILED_OUTCOMES, Outcome

MISUNDERSTOOD = Outcome.MISUNDERSTOOD.value
ASKED = frozenset({Outcome.MISUNDERSTOOD, Outcome.LOW_CONFIDENCE})
# Confidence bins: the outcome thresholds (0.3, 0.6) are edges, so each bin lies in one outcome.
BIN_EDGES = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# (name, what it is, bar, "min" or "max"): the bars the classifier is held to.
BARS = (
    ("clear_classified_right", "clear captures filed CLASSIFIED in the right bucket", 0.93, "min"),
    ("clear_right_bucket", "clear captures filed in the right bucket, any confidence", None, ""),
    ("clear_asked_right_bucket", "clear captures asked although the bucket was right", None, ""),
    ("clear_misunderstood", "clear captures wrongly MISUNDERSTOOD", 0.02, "max"),
    ("ambiguous_asked", "ambiguous captures asked (MISUNDERSTOOD or LOW_CONFIDENCE)", 0.9, "min"),
    ("unintelligible_misunderstood", "unintelligible captures MISUNDERSTOOD", 0.95, "min"),
    ("classified_right", "CLASSIFIED captures in the right bucket", 0.95, "min"),
    ("other_language_confident_wrong", "other-language captures CLASSIFIED wrongly", 0.0, "max"),
)


@dataclass(frozen=True)
class Judged:
    """One labelled capture, what the classifier said, and what the app made of it."""

    capture: LabelledCapture
    classification: Classification
    outcome: Outcome
    latency_s: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def filed_as(self) -> str:
        """The bucket it was filed in, or MISUNDERSTOOD."""
        bucket = self.classification.bucket
        return bucket.value if bucket and self.outcome in FILED_OUTCOMES else MISUNDERSTOOD

    @property
    def right(self) -> bool:
        """The classifier's bucket is the label's (never, for unintelligible or ambiguous)."""
        bucket = self.classification.bucket
        return bucket is not None and bucket.value == self.capture.label


@dataclass(frozen=True)
class Prices:
    """US dollars per million tokens."""

    input_per_m: float
    output_per_m: float


def figures(judged: list[Judged], prices: Prices | None = None) -> dict:
    clear = [j for j in judged if j.capture.is_clear]
    ambiguous = [j for j in judged if j.capture.label == AMBIGUOUS]
    unintelligible = [j for j in judged if j.capture.label == UNINTELLIGIBLE]
    foreign = [j for j in judged if j.capture.lang is not None]
    one_answer = [j for j in judged if j.capture.label != AMBIGUOUS]
    classified = [j for j in one_answer if j.outcome is Outcome.CLASSIFIED]
    bars = {
        "clear_classified_right": _share(
            clear, lambda j: j.outcome is Outcome.CLASSIFIED and j.right
        ),
        "clear_right_bucket": _share(clear, lambda j: j.outcome in FILED_OUTCOMES and j.right),
        "clear_asked_right_bucket": _share(
            clear, lambda j: j.outcome is Outcome.LOW_CONFIDENCE and j.right
        ),
        "clear_misunderstood": _share(clear, lambda j: j.outcome is Outcome.MISUNDERSTOOD),
        "ambiguous_asked": _share(ambiguous, lambda j: j.outcome in ASKED),
        "unintelligible_misunderstood": _share(
            unintelligible, lambda j: j.outcome is Outcome.MISUNDERSTOOD
        ),
        "classified_right": _share(classified, lambda j: j.right),
        "other_language_confident_wrong": _share(
            foreign, lambda j: j.outcome is Outcome.CLASSIFIED and not j.right
        ),
    }
    return {
        "captures": len(judged),
        "labels": dict(Counter(j.capture.label for j in judged)),
        "clear": len(clear),
        "other_languages": len(foreign),
        "bars": bars,
        "ambiguous_filed_in_a_named_bucket": _share(
            [j for j in ambiguous if j.capture.also],  # vague ones name no bucket
            lambda j: j.outcome in FILED_OUTCOMES and j.filed_as in j.capture.also,
        ),
        # Issue 40's three, over every capture of the four buckets (other languages too).
        "bucketed_filed_right_asked_wrong": _three([j for j in judged if j.capture.is_bucket]),
        "other_language_acceptable": _share(
            foreign, lambda j: j.outcome in ASKED or (j.outcome is Outcome.CLASSIFIED and j.right)
        ),
        "per_label": per_label(clear + unintelligible),
        "confusion": confusion(judged),
        "outcomes": {
            label: dict(Counter(j.outcome.value for j in judged if j.capture.label == label))
            for label in (*BUCKETS, UNINTELLIGIBLE, AMBIGUOUS)
        },
        "calibration": calibration([j for j in one_answer if j.classification.bucket]),
        "details": details(judged),
        "usage": usage(judged, prices),
        "latency_ms": percentiles([j.latency_s for j in judged]) if judged else None,
    }


def per_label(judged: list[Judged]) -> dict:
    """Precision and recall per bucket (as filed, any confidence), and for unintelligible
    (as MISUNDERSTOOD), over the captures with one right answer."""
    out = {}
    for label in (*BUCKETS, UNINTELLIGIBLE):
        said = MISUNDERSTOOD if label == UNINTELLIGIBLE else label
        truth = [j for j in judged if j.capture.label == label]
        predicted = [j for j in judged if j.filed_as == said]
        hits = sum(j.capture.label == label for j in predicted)
        out[label] = {
            "precision": _ratio(hits, len(predicted)),
            "recall": _ratio(hits, len(truth)),
            "n": len(truth),
        }
    return out


def confusion(judged: list[Judged]) -> dict:
    """Rows: the label (other-language captures on rows of their own); columns: where the
    capture was filed, or MISUNDERSTOOD."""
    columns = [*BUCKETS, MISUNDERSTOOD]
    counts: dict[str, Counter] = {}
    for j in judged:
        row = j.capture.label + (" (other language)" if j.capture.lang else "")
        counts.setdefault(row, Counter())[j.filed_as] += 1
    order = [*BUCKETS, UNINTELLIGIBLE, AMBIGUOUS]
    rows = sorted(counts, key=lambda r: (r.endswith(")"), order.index(r.split(" ")[0])))
    return {"columns": columns, "rows": {r: [counts[r][c] for c in columns] for r in rows}}


def calibration(judged: list[Judged]) -> dict:
    """Confidence against how often the bucket is right, per bin, over the captures given a
    bucket that have one right answer (an ambiguous capture has none)."""
    bins: list[dict[str, Any]] = []
    for low, high in itertools.pairwise(BIN_EDGES):
        inside = [
            j
            for j in judged
            if low <= j.classification.confidence < high
            or (high == 1.0 and j.classification.confidence == 1.0)
        ]
        if not inside:
            bins.append({"bin": f"{low:.1f}-{high:.1f}", "n": 0})
            continue
        mean = sum(j.classification.confidence for j in inside) / len(inside)
        right = sum(j.right for j in inside)
        accuracy = right / len(inside)
        bins.append(
            {
                "bin": f"{low:.1f}-{high:.1f}",
                "n": len(inside),
                "mean_confidence": round(mean, 3),
                "accuracy": round(accuracy, 3),
                "gap": round(abs(mean - accuracy), 3),
                "accuracy_95": [round(x, 3) for x in wilson_interval(right, len(inside))],
            }
        )
    filled = [b for b in bins if b["n"]]
    n = sum(b["n"] for b in filled)
    ece = sum(b["n"] * b["gap"] for b in filled) / n if n else None
    return {
        "captures": n,
        "bins": bins,
        "expected_calibration_error": round(ece, 3) if ece is not None else None,
        "max_gap_bins_of_10_or_more": max((b["gap"] for b in bins if b["n"] >= 10), default=None),
        # "Within 0.05" as measured, and whether each bin's accuracy could be its confidence:
        # a bin of ten captures cannot tell 0.70 from 0.80, and the report should say so.
        "bins_within_0.05": sum(b["gap"] <= 0.05 for b in filled),
        "bins_consistent": sum(
            b["accuracy_95"][0] <= b["mean_confidence"] <= b["accuracy_95"][1] for b in filled
        ),
        "bins_filled": len(filled),
    }


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion: unlike mean +- 2 standard errors, it
    stays inside 0..1 and means something for a bin of 5 captures all right."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def details(judged: list[Judged]) -> dict:
    """What the app files (shared.domain.details, dated as the set is: from the capture's own day
    where the set says when it was captured) against the labels, in whatever bucket the capture
    was filed: people on every item whose people are labelled, due dates on every item whose
    date is labelled (a set that says `"due": null` labels "none") and on every Admin item (the
    older sets label dates on Admin only)."""
    people = [
        (set(j.capture.people), set(filed_details(j).get("people", [])))
        for j in judged
        if j.classification.bucket is not None and j.capture.people is not None
    ]
    found = sum(len(t & f) for t, f in people)
    dues = [
        (j.capture.due, filed_details(j).get("due_date"))
        for j in judged
        if j.classification.bucket is not None and due_labelled(j)
    ]
    with_due = [(t, f) for t, f in dues if t is not None]
    without_due = [(t, f) for t, f in dues if t is None]
    return {
        "people_items": len(people),
        "people_exact": _ratio(sum(t == f for t, f in people), len(people)),
        "people_precision": _ratio(found, sum(len(f) for _, f in people)),
        "people_recall": _ratio(found, sum(len(t) for t, _ in people)),
        "due_items": len(dues),
        "due_exact": _ratio(sum(t == f for t, f in dues), len(dues)),
        "items_with_due": len(with_due),
        "due_right": _ratio(sum(t == f for t, f in with_due), len(with_due)),
        "items_without_due": len(without_due),
        "due_invented": _ratio(sum(f is not None for _, f in without_due), len(without_due)),
    }


def due_labelled(j: Judged) -> bool:
    """Whether the set says what `j`'s due date is: one labelled, or none on an Admin item."""
    return "due" in j.capture.model_fields_set or j.filed_as == "Admin"


def filed_details(j: Judged) -> dict:
    """What the app files: what a model read stands (the OpenAI path's people and due date),
    and the rules fill in what it left empty (all of it offline)."""
    bucket = j.classification.bucket
    assert bucket is not None
    details = details_for(bucket, j.capture.text, j.classification.title, j.capture.today)
    if j.classification.people:
        details["people"] = j.classification.people
    if j.classification.due_date is not None:
        details["due_date"] = j.classification.due_date
    return details


def usage(judged: list[Judged], prices: Prices | None) -> dict:
    """Tokens as the server reported them, and what 1,000 captures would cost at `prices`."""
    reported = [j for j in judged if j.prompt_tokens is not None]
    if not reported:
        return {"reported": 0}
    prompt = sum(j.prompt_tokens or 0 for j in reported) / len(reported)
    completion = sum(j.completion_tokens or 0 for j in reported) / len(reported)
    out: dict = {
        "reported": len(reported),
        "prompt_tokens_mean": round(prompt, 1),
        "completion_tokens_mean": round(completion, 1),
        "prompt_tokens_max": max(j.prompt_tokens or 0 for j in reported),
    }
    if prices is not None:
        per_capture = (prompt * prices.input_per_m + completion * prices.output_per_m) / 1e6
        out["usd_per_1000_captures"] = round(per_capture * 1000, 4)
        out["prices_per_1m"] = {"input": prices.input_per_m, "output": prices.output_per_m}
    return out


def holds(name: str, value: float | None) -> str:
    bar = {b[0]: b for b in BARS}[name]
    if bar[2] is None or value is None:
        return ""
    ok = value >= bar[2] if bar[3] == "min" else value <= bar[2]
    return "yes" if ok else "NO"


def _three(judged: list[Judged]) -> list[float | None]:
    """Filed CLASSIFIED in the right bucket, asked, filed CLASSIFIED in a wrong one."""
    return [
        _share(judged, lambda j: j.outcome is Outcome.CLASSIFIED and j.right),
        _share(judged, lambda j: j.outcome in ASKED),
        _share(judged, lambda j: j.outcome is Outcome.CLASSIFIED and not j.right),
    ]


def _share(judged: list[Judged], test) -> float | None:
    return _ratio(sum(1 for j in judged if test(j)), len(judged))


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None
