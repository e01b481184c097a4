"""The fields that make a filed item useful in its bucket, read from the capture's text.

Deliberately simple rules: they must never block filing, and a model can refine them later.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from shared.domain.classification import Bucket

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NOT_NAMES = {
    "I", "I'm", "I'll", "Call", "Email", "Text", "Ask", "Tell", "Remind", "Remember", "Meet",
    "Message", "Ring", "Phone", "Send", "Buy", "Book", "Pay", "Check", "Talk", "The", "A",
    "Need", "Get", "Pick", "Invite", "Thank", "Follow", "Catch", "Schedule", "Set", "Write",
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Today",
    "Tomorrow", "Next", "This", "Mum", "Dad", "Note", "Idea", "What", "Maybe", "Should",
}  # fmt: skip
_NAME = re.compile(r"\b[A-Z][a-z]+(?:'s)?\b")


def people_in(text: str) -> list[str]:
    names: list[str] = []
    for match in _NAME.finditer(text):
        name = match.group(0).removesuffix("'s")
        if name not in _NOT_NAMES and name not in names:
            names.append(name)
    for family in ("Mum", "Dad", "mum", "dad"):
        if re.search(rf"\b{family}\b", text) and family.title() not in names:
            names.append(family.title())
    return names


def due_date_in(text: str, today: date) -> date | None:
    lowered = text.lower()
    if "today" in lowered or "tonight" in lowered:
        return today
    if "tomorrow" in lowered:
        return today + timedelta(days=1)
    if "next week" in lowered:
        return today + timedelta(days=7 - today.weekday())
    for i, day in enumerate(_WEEKDAYS):
        if re.search(rf"\b{day}\b", lowered):
            ahead = (i - today.weekday()) % 7 or 7
            return today + timedelta(days=ahead)
    return None


def details_for(bucket: Bucket, text: str, title: str, today: date) -> dict:
    if bucket is Bucket.PEOPLE:
        return {"people": people_in(text), "follow_up": title}
    if bucket is Bucket.PROJECTS:
        return {"next_action": title}
    if bucket is Bucket.IDEAS:
        return {"one_liner": title}
    return {"due_date": due_date_in(text, today)}
