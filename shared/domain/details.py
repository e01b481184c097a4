"""The fields that make a filed item useful in its bucket, read from the capture's text: the
people it names (people.py), its due date (due_dates.py) and what the bucket adds.

Deliberately simple rules: they must never block filing, and a model can refine them later.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from shared.domain.classification import Bucket
from shared.domain.due_dates import due_date_in
from shared.domain.people import people_in


def details_for(bucket: Bucket, text: str, title: str, today: date) -> dict[str, Any]:
    """The filed item's details: the people named and the due date in every bucket, and what
    the bucket itself adds (a People follow-up, a Projects next action, an Ideas one-liner)."""
    details: dict[str, Any] = {"people": people_in(text), "due_date": due_date_in(text, today)}
    if bucket is Bucket.PEOPLE:
        details["follow_up"] = title
    elif bucket is Bucket.PROJECTS:
        details["next_action"] = title
    elif bucket is Bucket.IDEAS:
        details["one_liner"] = title
    return details
