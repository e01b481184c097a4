"""A labelled set of captures (JSON lines): what each capture should get, and the details the
app should file for it. The frozen evaluation set is `bench/data/eval_captures.jsonl`."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from shared.domain.classification import Bucket

DATA = Path(__file__).resolve().parent / "data"
EVAL_SET = DATA / "eval_captures.jsonl"
# The date the set's relative dates ("tomorrow", "next Friday") were resolved against, for a
# capture that does not say when it was captured (`captured`).
REFERENCE_DATE = date(2026, 11, 23)

UNINTELLIGIBLE = "unintelligible"
AMBIGUOUS = "ambiguous"
BUCKETS = tuple(b.value for b in Bucket)
Label = Literal["People", "Projects", "Ideas", "Admin", "unintelligible", "ambiguous"]


class LabelledCapture(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = ""
    text: str
    label: Label
    # Ambiguous captures: the two buckets a person could reasonably choose.
    also: tuple[str, ...] = ()
    # Set for a capture not in English: the right bucket or a question are both fine there.
    lang: str | None = None
    # Labelled details: the people named (None: not labelled) and the due date, if any.
    people: tuple[str, ...] | None = None
    due: date | None = None
    # When the capture was made (the month sets): its relative dates are resolved against this
    # day, as the app resolves them against the capture's own date. None: REFERENCE_DATE.
    captured: datetime | None = None

    @property
    def today(self) -> date:
        """The day the capture's relative dates ("by thurs", "tomorrow") are counted from."""
        return self.captured.date() if self.captured else REFERENCE_DATE

    @property
    def is_bucket(self) -> bool:
        return self.label in BUCKETS

    @property
    def is_clear(self) -> bool:
        """One right bucket, in English: the captures the bars are about."""
        return self.is_bucket and self.lang is None


def load(path: Path) -> list[LabelledCapture]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        raw = json.loads(line)
        # The first labelled set (tests/data/labelled_captures.jsonl) says "misunderstood".
        if raw.get("label") == "misunderstood":
            raw["label"] = UNINTELLIGIBLE
        raw.setdefault("id", f"{path.stem}-{number}")
        rows.append(LabelledCapture.model_validate(raw))
    return rows
