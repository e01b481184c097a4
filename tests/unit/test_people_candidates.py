"""The fitted people decision measured beside the rules (bench/tools/fit_people.py): its
candidates hold what the rules took and the name-like words they left, its features say what
they claim, and a decision keeps what scores above zero."""

from __future__ import annotations

import numpy as np

from bench.tools.fit_people import Row, counts
from bench.tools.people_candidates import FEATURES, candidates
from shared.domain.people import people_in


def features_of(text: str) -> dict[str, dict[str, float]]:
    found = candidates(text)
    assert all(len(c.features) == len(FEATURES) for c in found)
    return {c.name: dict(zip(FEATURES, c.features, strict=True)) for c in found}


def test_the_rules_names_come_first_and_are_marked_taken() -> None:
    text = "lunch w Priya on Friday, then ask Mr Okafor about the Lidl receipt"
    found = features_of(text)
    rules = people_in(text)
    assert list(found)[: len(rules)] == rules
    assert all(found[name]["taken"] == 1.0 for name in rules)
    assert all(f["taken"] == 0.0 for name, f in found.items() if name not in rules)


def test_a_word_the_rules_left_is_a_candidate_with_its_cues() -> None:
    found = features_of("coffee with Wren's sister, Wren says she is around")
    assert "Wren" in found
    wren = found["Wren"]
    assert wren["cue_before"] == 1.0 and wren["possessive"] == 1.0 and wren["capitalised"] == 1.0
    assert wren["said_twice"] == 1.0 and wren["opens_capture"] == 0.0


def test_a_sentence_opening_word_is_no_candidate_unless_a_list_holds_it() -> None:
    found = features_of("Coffee machine broke. Bought beans")
    assert "Coffee" not in found and "Bought" not in found


def test_a_decision_keeps_what_scores_above_zero_and_counts_as_the_bench_does() -> None:
    x = np.array([[1.0], [0.0]])
    row = Row(frozenset({"Ana"}), frozenset({"Ana", "Bo"}), ["Ana", "Bo"], x)
    assert list(counts([row], None)) == [0, 1, 1, 1, 2]  # the rules miss Bo
    # A weight that keeps only the taken one; a bias that keeps both.
    assert list(counts([row], (-0.5, np.array([1.0])))) == [0, 1, 1, 1, 2]
    assert list(counts([row], (0.5, np.array([1.0])))) == [1, 1, 2, 2, 2]
