"""The "is anything here" gate measured over the offline answer's chooser
(bench/tools/ask_gate.py, bench/tools/fit_ask_gate.py): its features say what they claim, it
blanks today's choice only over its line and never a list or what a follow-up points back at,
and its fit and line find the side that separates."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import pytest

from bench.tools.ask_gate import FEATURES, Gate, GateWeights, question_features
from bench.tools.fit_ask_gate import GRID, apply, fit, nested, value
from shared.services.ask import new_question
from shared.services.ask_run import NOTHING, Source
from shared.services.ask_words import read_question
from tests.unit.ask_sources import source

FLOOR = 0.3


def row(question: str, found: list[Source], chosen: list[Source], meaning=None, soft=None):
    asked = read_question(new_question(question))
    out = question_features(asked, question, found, chosen, dict(meaning or {}), FLOOR, soft)
    assert set(out) == set(FEATURES)
    return out


def test_a_capture_that_holds_the_question_and_one_near_it_only_by_meaning() -> None:
    tiler = source(1, "Kuba is doing the kitchen tiles now", 3)
    budget = source(2, "kitchen budget is 6k, maybe less", 2)
    found = [tiler, budget]
    held = row("who is doing the kitchen tiles?", found, [tiler], {"c1": 0.7, "c2": 0.4})
    assert held["lead_own_missing"] == 0.0 and held["own_unheard"] == 0.0
    assert held["focus_missing"] == 0.0 and held["lead_words"] == pytest.approx(1.0)
    assert held["meaning"] == pytest.approx((0.7 - FLOOR) / (1 - FLOOR))
    # Asked of what no capture speaks of: the best one holds none of its own words.
    asked_of = row("what colour is the grout?", found, [tiler], {"c1": 0.5, "c2": 0.4})
    assert asked_of["own_unheard"] == 1.0 and asked_of["lead_own_missing"] == 1.0
    assert asked_of["focus_missing"] == 1.0 and asked_of["lead_words"] == 0.0


def test_what_is_asked_for_and_the_soft_matchs_share() -> None:
    came = source(1, "the surveyor came round, here 2 hrs", 2)
    quote = source(2, "surveyor quoted £450 for the full survey", 3)
    missing = row("what did the surveyor charge?", [came], [came])
    assert missing["wants_missing"] == 1.0
    assert row("what did the surveyor charge?", [came, quote], [quote])["wants_missing"] == 0.0
    bike = source(3, "biking to the office in winter?", 1)
    soft = {"cycl": {"c3": 0.6}}
    near = row("did I try cycling to the office?", [bike], [bike], soft=soft)
    assert 0.0 < near["soft_share"] < 1.0
    assert row("did I try cycling to the office?", [bike], [bike])["soft_share"] == 0.0


def _run(found: list[Source]) -> SimpleNamespace:
    return SimpleNamespace(
        seen={s.id: s for s in found},
        adapters=SimpleNamespace(embedder=SimpleNamespace(min_similarity=FLOOR)),
    )


def test_the_gate_blanks_todays_choice_only_over_its_line() -> None:
    tiler = source(1, "Kuba is doing the kitchen tiles now", 3)
    found = [tiler]
    asked = read_question(new_question("who is doing the kitchen tiles?"))

    def today(*_args: object) -> list[Source]:
        return [tiler]

    # A weight on what the question's own words the best capture lacks: 0 here.
    lacking = GateWeights(-1.0, {"lead_own_missing": 10.0}, 0.5)
    gate = Gate(lacking, today)
    assert gate(asked, _run(found), set(), date(2026, 11, 30)) == [tiler]
    always = Gate(GateWeights(5.0, {}, 0.5), today)
    assert always(asked, _run(found), set(), date(2026, 11, 30)) == []
    # Nothing chosen, or a bare list, is not gated (nor recorded).
    assert Gate(always.weights, lambda *_: [])(asked, _run(found), set(), date(2026, 11, 30)) == []
    bare = read_question(new_question("what's due?"))
    listed = Gate(always.weights, today)
    assert listed(bare, _run(found), {"c1"}, date(2026, 11, 30)) == [tiler]
    assert listed.seen == [None]


def _rows(n_sets: int = 3) -> list[dict]:
    """Per set: answered questions with a recorded row whose one feature says "nothing"."""
    rows = []
    for s in range(n_sets):
        for i in range(8):
            nothing = i < 3
            answered = {
                "id": f"{s}-{i}",
                "question": "q",
                "nothing": nothing,
                "cite": [] if nothing else ["a"],
                "facts": [],
                "cited": ["a"] if not nothing or i == 0 else ["b"],
                "answer": "x",
            }
            x = {f: 0.0 for f in FEATURES}
            x["own_unheard"] = 1.0 if nothing else 0.0
            x["best_over_cut"] = 0.1 * i
            rows.append({"set": f"tuning{s}", "answered": answered, "x": x})
    return rows


def test_the_fit_finds_the_side_that_separates_and_its_line_blanks_only_that() -> None:
    rows = _rows()
    fitted = fit(rows, "nothing", cost=1.0, penalty=1.0)
    assert fitted["weights"]["own_unheard"] > 0
    after = apply(rows, fitted)
    for r, a in zip(rows, after, strict=True):
        if r["answered"]["nothing"]:
            assert a["cited"] == [] and a["answer"] == NOTHING
        else:
            assert a["cited"] == ["a"]
    # Blanking an answer that cited what it expected costs `cost`; a clean one gains 1.
    before = {"all_cited": 5, "one_cited": 5, "facts": 5, "nothing_clean": 0}
    assert value(before, {**before, "nothing_clean": 3}, 2.0) == 3
    assert value(before, {**before, "all_cited": 4, "nothing_clean": 1}, 2.0) == pytest.approx(-1)


def test_the_nested_setting_is_chosen_without_the_part_judged() -> None:
    rows = _rows()
    fitted = nested(rows, "tuning0")
    assert tuple(fitted["setting"]) in GRID
    assert fitted["fit_on"] == ["tuning1", "tuning2"]


async def test_the_words_meaning_features_take_each_own_words_nearest() -> None:
    from bench.tools.ask_gate import Gate, word_features
    from tests.fakes import WordsEmbedder

    embedder = WordsEmbedder()
    embedder.word_vectors = {"tablets": [1.0, 0.1], "meds": [0.9, 0.2], "doctor": [0.0, 1.0]}
    meds = source(1, "Dr Rao changed Dad's meds, half a dose at night", 3, ["Dad"])
    asked = read_question(new_question("what did the doctor change in Dad's tablets?"))
    gate = Gate(None, lambda *_: [meds])
    assert gate(asked, _run([meds]), set(), date(2026, 11, 30)) == [meds]
    own, lead = gate.words[-1]
    assert set(own) == {"doctor", "change", "tablets"} and "meds" in lead
    got = await word_features(embedder, own, lead)
    # "tablets" is nearest "meds", "doctor" too (further); "change" is not a word it holds
    # ("changed" is another word to a word's vector) and is near none: the least.
    tablets = (0.9 + 0.02) / ((1.01 * 0.85) ** 0.5)
    doctor = 0.2 / (0.85**0.5)
    assert got["word_meaning_min"] == 0.0
    assert got["word_meaning_mean"] == pytest.approx((tablets + doctor + 0.0) / 3)
    # A word it holds as written is 1.0 alike.
    assert (await word_features(embedder, ["meds"], lead))["word_meaning_min"] == 1.0
    assert await word_features(embedder, [], lead) == {
        "word_meaning_min": 0.0,
        "word_meaning_mean": 0.0,
    }
