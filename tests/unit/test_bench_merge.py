"""How the bench folds its runs into one summary: medians of numbers, whatever the runs held."""

from bench.__main__ import merge


def test_numbers_are_the_median_of_the_runs_and_the_rest_as_the_first_had_it() -> None:
    runs = [
        {"p95_ms": 10.0, "outcome": "CLASSIFIED", "ok": True},
        {"p95_ms": 30.0, "outcome": "LOW_CONFIDENCE", "ok": False},
        {"p95_ms": 20.0, "outcome": "CLASSIFIED", "ok": True},
    ]
    assert merge(runs) == {"p95_ms": 20.0, "outcome": "CLASSIFIED", "ok": True}


def test_a_key_some_runs_lack_is_merged_over_the_runs_that_have_it() -> None:
    runs = [
        {"queues": {"captures-classify": 2}},
        {"queues": {"captures-classify": 4, "captures-outcomes": 1}},
        {"queues": {"captures-classify": 3, "captures-outcomes": 3}},
    ]
    assert merge(runs) == {"queues": {"captures-classify": 3, "captures-outcomes": 2.0}}
