"""The classification benchmark's arithmetic: bars, precision and recall, confusion, calibration
bins, filed details and cost, on hand-made results with known answers."""

from __future__ import annotations

from datetime import date

import pytest

from bench.crossval import folds
from bench.figures import Judged, Prices, figures, wilson_interval
from bench.labelled import LabelledCapture
from shared.domain.classification import Bucket, Classification
from shared.domain.outcomes import decide


def judged(
    text: str,
    label: str,
    bucket: str | None,
    confidence: float,
    *,
    tokens: tuple[int, int] | None = None,
    **labels: object,
) -> Judged:
    c = Classification(
        bucket=Bucket(bucket) if bucket else None, confidence=confidence, title=text[:40]
    )
    capture = LabelledCapture(text=text, label=label, **labels)  # type: ignore[arg-type]  # checked by pydantic
    prompt, completion = tokens or (None, None)
    return Judged(capture, c, decide(c), 0.01, prompt, completion)


RUN = [
    judged("Call Sarah about the budget", "People", "People", 0.92, people=("Sarah",)),
    judged("Ask Tom and Priya about Saturday", "People", "People", 0.65, people=("Tom", "Ana")),
    judged("Pay the council tax by Friday", "Admin", "Admin", 0.95, due=date(2026, 11, 27)),
    judged("Renew the passport", "Admin", "Admin", 0.7),
    judged("Kitchen: get three quotes", "Projects", "Ideas", 0.75),
    judged("What if socks had pockets", "Ideas", "Ideas", 0.45),
    judged("Garden plan, next measure the patio", "Projects", "Projects", 0.25),
    judged("asdf qwer", "unintelligible", None, 0.0),
    judged("zzz blorp", "unintelligible", "Ideas", 0.4),
    judged("Lunch with Ana about the app", "ambiguous", "People", 0.5, also=("People", "Projects")),
    judged("Ben's podcast plan", "ambiguous", "Projects", 0.8, also=("People", "Projects")),
    judged("Mañana llamar a Lucía", "People", "Admin", 0.9, lang="es", due=date(2026, 11, 24)),
    judged("Steuererklärung abgeben", "Admin", "Admin", 0.5, lang="de"),
]


def test_bars_count_what_the_app_would_do() -> None:
    f = figures(RUN)
    assert f["captures"] == 13 and f["clear"] == 7 and f["other_languages"] == 2
    bars = f["bars"]
    # Clear: Sarah, Tom/Priya, tax, passport CLASSIFIED right; kitchen CLASSIFIED wrong;
    # socks LOW_CONFIDENCE right; garden MISUNDERSTOOD (0.25 < 0.3).
    assert bars["clear_classified_right"] == round(4 / 7, 3)
    assert bars["clear_right_bucket"] == round(5 / 7, 3)
    assert bars["clear_asked_right_bucket"] == round(1 / 7, 3)
    assert bars["clear_misunderstood"] == round(1 / 7, 3)
    assert bars["ambiguous_asked"] == 0.5
    assert bars["unintelligible_misunderstood"] == 0.5  # "zzz blorp" was filed in Ideas
    # CLASSIFIED with one right answer: 4 right clear, kitchen, Lucía.
    assert bars["classified_right"] == round(4 / 6, 3)
    assert bars["other_language_confident_wrong"] == 0.5
    assert f["other_language_acceptable"] == 0.5  # the German one was asked
    assert f["ambiguous_filed_in_a_named_bucket"] == 1.0


def test_precision_recall_and_confusion() -> None:
    f = figures(RUN)
    ideas = f["per_label"]["Ideas"]
    # Filed in Ideas: socks (right), kitchen and "zzz blorp" (wrong).
    assert ideas == {"precision": round(1 / 3, 3), "recall": 1.0, "n": 1}
    assert f["per_label"]["Projects"] == {"precision": None, "recall": 0.0, "n": 2}
    assert f["per_label"]["unintelligible"] == {"precision": 0.5, "recall": 0.5, "n": 2}
    confusion = f["confusion"]
    assert confusion["columns"] == ["People", "Projects", "Ideas", "Admin", "MISUNDERSTOOD"]
    assert confusion["rows"]["Projects"] == [0, 0, 1, 0, 1]
    assert confusion["rows"]["ambiguous"] == [1, 1, 0, 0, 0]
    assert confusion["rows"]["People (other language)"] == [0, 0, 0, 1, 0]
    assert list(confusion["rows"])[-1].endswith("(other language)")


def test_calibration_bins() -> None:
    cal = figures(RUN)["calibration"]
    # Given a bucket, one right answer: all but "asdf qwer" and the two ambiguous ones.
    assert cal["captures"] == 10
    by_bin = {b["bin"]: b for b in cal["bins"]}
    assert by_bin["0.0-0.3"] == {
        "bin": "0.0-0.3", "n": 1, "mean_confidence": 0.25, "accuracy": 1.0, "gap": 0.75,
        "accuracy_95": [0.207, 1.0],
    }  # fmt: skip
    assert by_bin["0.3-0.5"]["n"] == 2 and by_bin["0.3-0.5"]["accuracy"] == 0.5
    assert by_bin["0.7-0.8"] == {
        "bin": "0.7-0.8", "n": 2, "mean_confidence": 0.725, "accuracy": 0.5, "gap": 0.225,
        "accuracy_95": [0.095, 0.905],
    }  # fmt: skip
    assert by_bin["0.8-0.9"] == {"bin": "0.8-0.9", "n": 0}
    # 0.9 and 0.95 and 0.92: the Lucía miss makes it 2 of 3.
    assert by_bin["0.9-1.0"]["n"] == 3 and by_bin["0.9-1.0"]["accuracy"] == pytest.approx(0.667)
    gaps = sum(b["n"] * b["gap"] for b in cal["bins"] if b["n"])
    assert cal["expected_calibration_error"] == round(gaps / 10, 3)
    # Six bins hold a capture, none within 0.05; yet with one to three captures each, every
    # interval is wide enough to hold its bin's confidence.
    assert by_bin["0.9-1.0"]["accuracy_95"] == [0.208, 0.939]
    assert (cal["bins_filled"], cal["bins_within_0.05"], cal["bins_consistent"]) == (6, 0, 6)


@pytest.mark.parametrize(
    ("right", "n", "interval"),
    [(10, 10, (0.722, 1.0)), (0, 10, (0.0, 0.278)), (50, 100, (0.404, 0.596)), (0, 0, (0, 1))],
)
def test_wilson_interval(right: int, n: int, interval: tuple[float, float]) -> None:
    low, high = wilson_interval(right, n)
    assert (round(low, 3), round(high, 3)) == interval


def test_details_as_filed() -> None:
    d = figures(RUN)["details"]
    # People items: Sarah (exact), Tom/Priya against Tom/Ana; the Lucía one went to Admin.
    assert d["people_items"] == 2
    assert d["people_exact"] == 0.5
    assert d["people_precision"] == round(2 / 3, 3)  # Sarah, Tom right; Priya not labelled
    assert d["people_recall"] == round(2 / 3, 3)  # Ana missed
    # Dates: the tax (Friday the 27th, as labelled), the Spanish one ("mañana": tomorrow),
    # the passport (no date) and the German one filed in Admin (no date labelled, none found).
    assert d["items_with_due"] == 2 and d["due_right"] == 1.0
    assert d["items_without_due"] == 2 and d["due_invented"] == 0.0
    assert d["due_items"] == 4 and d["due_exact"] == 1.0


def test_details_in_every_bucket() -> None:
    # A person and a date labelled on a Projects item count, whatever bucket it is filed in;
    # a date labelled "none" on an Ideas item counts as none.
    run = [
        judged(
            "ask Ottilie for the number by Friday",
            "Projects",
            "Projects",
            0.9,
            people=("Ottilie",),
            due=date(2026, 11, 27),
        ),
        judged("socks with pockets", "Ideas", "Ideas", 0.9, people=(), due=None),
    ]
    d = figures(run)["details"]
    assert d["people_items"] == 2 and d["due_items"] == 2 and d["items_without_due"] == 1


def test_tokens_and_cost_per_thousand() -> None:
    run = [
        judged("a", "Ideas", "Ideas", 0.9, tokens=(400, 30)),
        judged("b", "Ideas", "Ideas", 0.9, tokens=(500, 50)),
    ]
    u = figures(run, Prices(0.15, 0.60))["usage"]
    assert u["prompt_tokens_mean"] == 450 and u["completion_tokens_mean"] == 40
    assert u["usd_per_1000_captures"] == pytest.approx((450 * 0.15 + 40 * 0.60) / 1000)
    assert figures(RUN)["usage"] == {"reported": 0}


def test_folds_are_stratified_and_disjoint() -> None:
    examples = {"People": [f"p{i}" for i in range(11)], "Ideas": [f"i{i}" for i in range(5)]}
    parts = folds(examples, 5)
    assert [len(p["People"]) for p in parts] == [3, 2, 2, 2, 2]
    assert [len(p["Ideas"]) for p in parts] == [1, 1, 1, 1, 1]
    assert sorted(t for p in parts for t in p["People"]) == sorted(examples["People"])
    assert folds(examples, 5) == parts  # the same folds every run
