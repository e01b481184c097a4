"""Labelled sets: a capture may say when it was captured (the month sets), and then its relative
dates ("by thurs", "tomorrow") count from that day, as the app counts them from a capture's own
date; a capture that does not say keeps the set-wide reference date."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

from bench.figures import Judged, details
from bench.labelled import DATA, REFERENCE_DATE, LabelledCapture, load
from shared.domain.classification import Bucket, Classification
from shared.domain.outcomes import Outcome


def _filed(capture: LabelledCapture) -> Judged:
    c = Classification(bucket=Bucket(capture.label), confidence=0.9, title=capture.text[:40])
    return Judged(capture, c, Outcome.CLASSIFIED, 0.01)


def test_a_capture_time_is_loaded_and_dates_the_capture(tmp_path: Path) -> None:
    rows = [
        {
            "id": "m1",
            "text": "pay the gas bill tomorrow",
            "label": "Admin",
            "people": [],
            "due": "2026-10-06",
            "captured": "2026-10-05T09:30",
        },
        {"id": "m2", "text": "renew the passport", "label": "Admin", "people": []},
    ]
    path = tmp_path / "month.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    dated, undated = load(path)
    assert dated.captured == datetime(2026, 10, 5, 9, 30)
    assert dated.today == date(2026, 10, 5)
    assert undated.captured is None and undated.today == REFERENCE_DATE


def test_relative_due_dates_count_from_the_capture_s_own_day(tmp_path: Path) -> None:
    row = {
        "text": "pay the gas bill tomorrow",
        "label": "Admin",
        "people": [],
        "due": "2026-10-06",
        "captured": "2026-10-05T09:30",
    }
    path = tmp_path / "month.jsonl"
    path.write_text(json.dumps(row) + "\n")
    d = details([_filed(c) for c in load(path)])
    assert d["items_with_due"] == 1 and d["due_right"] == 1.0


def test_the_month_sets_load() -> None:
    for name in ("month_dev_captures.jsonl", "month_frozen_captures.jsonl"):
        captures = load(DATA / name)
        assert len(captures) >= 150
        assert all(c.is_bucket and c.captured is not None for c in captures)
        assert all(c.people is not None and "due" in c.model_fields_set for c in captures)
        assert all(c.due is None or c.due >= c.today for c in captures)
