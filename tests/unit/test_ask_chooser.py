"""The fitted chooser measured beside the offline answer's own (bench/tools/ask_chooser.py):
its features say what they claim, its scorer and lines choose as documented, and its fit finds
the direction that separates."""

from __future__ import annotations

import numpy as np
import pytest

from bench.tools.ask_chooser import FEATURES, Weights, features, pick
from bench.tools.fit_ask_chooser import fit_logistic
from shared.services.ask import new_question
from shared.services.ask_run import Source
from shared.services.ask_words import read_question
from tests.unit.ask_sources import source


def rows_for(question: str, found: list[Source], meaning=None, referents=frozenset()):
    asked = read_question(new_question(question))
    rows = features(asked, question, found, dict(meaning or {}), 0.3, set(referents))
    assert all(set(r) == set(FEATURES) for r in rows)
    return {s.id: r for s, r in zip(found, rows, strict=True)}


def test_a_capture_that_holds_what_is_asked_for_and_one_that_does_not() -> None:
    quote = source(1, "Plumber quoted £300 for the shower valve", 2)
    came = source(2, "the plumber came about the shower valve", 3)
    rows = rows_for("how much did the plumber quote for the shower valve?", [quote, came])
    assert rows["c1"]["wants_has"] == 1.0 and rows["c1"]["wants_missing"] == 0.0
    assert rows["c2"]["wants_has"] == 0.0 and rows["c2"]["wants_missing"] == 1.0


def test_words_their_near_forms_and_what_no_capture_holds() -> None:
    done = source(1, "Janet says completion is on 22 Jan", 2)
    other = source(2, "bought bread and milk", 3)
    rows = rows_for("when do we complete on the flat?", [done, other])
    # "complete" and "completion" share their first letters; "flat" is in neither.
    assert rows["c1"]["words_near"] > rows["c2"]["words_near"] == 0.0
    assert rows["c1"]["unheard"] == rows["c2"]["unheard"] > 0.0
    assert rows["c2"]["words_gap"] <= 0.0


def test_a_capture_about_someone_else_misses_the_named_person() -> None:
    omar = source(1, "Omar's birthday is 4 May", 2, ["Omar"])
    nadia = source(2, "Nadia started at the bakery", 3, ["Nadia"])
    rows = rows_for("when is Nadia's birthday?", [omar, nadia])
    assert rows["c1"]["named_missing"] == 1.0 and rows["c2"]["named_missing"] == 0.0


def test_the_older_of_one_matter_is_superseded_and_the_newer_supersedes() -> None:
    first = source(1, "Marco will do the kitchen tiles, he can start Thursday", 2)
    now = source(2, "Marco pulled out. Kuba is doing the kitchen tiles now", 5)
    bread = source(3, "bought bread and milk", 6)
    rows = rows_for("who's doing the kitchen tiles now?", [first, now, bread])
    assert rows["c1"]["superseded"] > 0.0 and rows["c1"]["superseded_now"] > 0.0
    assert rows["c2"]["superseded"] == 0.0 and rows["c2"]["supersedes"] > 0.0
    # Asked how it was at first, the newer one is the superseded.
    rows = rows_for("who was originally doing the kitchen tiles?", [first, now, bread])
    assert rows["c2"]["superseded"] > 0.0 and rows["c1"]["superseded"] == 0.0


def test_meaning_its_z_score_and_rank_and_none_without_a_model() -> None:
    found = [source(n, f"note {n}", 2) for n in range(1, 5)]
    meaning = {"c1": 0.7, "c2": 0.4, "c3": 0.35, "c4": 0.3}
    rows = rows_for("anything about notes?", found, meaning, referents={"c3"})
    assert rows["c1"]["meaning_top"] == 1.0 and rows["c2"]["meaning_top"] == 0.5
    assert rows["c1"]["meaning_z"] > 1.0 > rows["c4"]["meaning_z"]
    assert rows["c1"]["meaning"] == pytest.approx((0.7 - 0.3) / 0.7)
    assert rows["c3"]["quoted"] == 1.0 and rows["c1"]["quoted"] == 0.0
    rows = rows_for("anything about notes?", found)
    assert all(r["meaning"] == r["meaning_z"] == r["meaning_top"] == 0.0 for r in rows.values())


def test_nothing_is_cited_under_the_answer_line_and_the_rest_over_the_cite_line() -> None:
    found = [source(n, f"note {n}", 2) for n in range(1, 5)]
    lines = Weights(bias=0.0, weights={}, answer_line=0.5, cite_line=0.2)
    assert pick(found, [0.4, 0.3, 0.1, 0.0], lines, 3) == []
    assert pick(found, [0.1, 0.6, 0.25, 0.19], lines, 3) == [found[1], found[2]]
    assert pick(found, [0.9, 0.8, 0.7, 0.6], lines, 2) == found[:2]
    assert Weights(0.0, {"words": 2.0}, 0.5, 0.5).score({"words": 1.0}) == pytest.approx(
        1 / (1 + np.exp(-2.0))
    )


def test_the_fit_finds_the_feature_that_separates() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 3))
    y = (x[:, 1] + 0.3 * rng.normal(size=400) > 0.5).astype(float)
    bias, w = fit_logistic(x, y, 1.0)
    assert w[1] > 3.0 and abs(w[0]) < 0.5 and abs(w[2]) < 0.5 and bias < 0.0
