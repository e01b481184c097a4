"""The fields that make a filed item useful in its bucket, read from the capture's text.

Deliberately simple rules: they must never block filing, and a model can refine them later.
A date library would read more forms, but the ones that search free text cost a second of
cold start and read verbs as dates ("may", "sat"); these rules read only what a capture says
plainly and give no date rather than a wrong one.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from shared.domain.classification import Bucket

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTHS = [m.lower() for m in calendar.month_name[1:]]

# --- People -----------------------------------------------------------------------------------

# Capitalised words that start a capture or name a time, not a person.
_NOT_NAMES = {
    "I", "I'm", "I'll", "Call", "Email", "Text", "Ask", "Tell", "Remind", "Remember", "Meet",
    "Message", "Ring", "Phone", "Send", "Buy", "Book", "Pay", "Check", "Talk", "The", "A",
    "Need", "Get", "Pick", "Invite", "Thank", "Follow", "Catch", "Schedule", "Set", "Write",
    "Today", "Tomorrow", "Next", "This", "Note", "Idea", "What", "Maybe", "Should", "Wish",
    "It", "We", "He", "She", "They", "My", "Our", "Don't", "Please", "Also", "And", "But",
    "Christmas", "Easter", "Halloween", "Diwali", "Eid", "Hanukkah", "Ramadan", "New", "Year",
    *(d.title() for d in _WEEKDAYS), *(m.title() for m in _MONTHS),
}  # fmt: skip
# Said before a name and dropped, as people file them: "Mr Adeyemi" -> "Adeyemi".
_TITLES = {
    "Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Professor", "Sir", "Dame", "Aunt",
    "Auntie", "Aunty", "Uncle", "Cousin",
}  # fmt: skip
# Family words name a person on their own, capitalised or not ("ask nan", "Mum's birthday").
_FAMILY = {
    "mum", "mom", "mam", "dad", "nan", "nana", "nanna", "gran", "granny", "grandma",
    "grandad", "granddad", "grandpa", "grandmother", "grandfather",
}  # fmt: skip
# A word of letters, with inner hyphens or apostrophes ("Marie-Claire", "O'Neill", "Zoë").
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
# A capitalised word after these is a place or a firm ("in Berlin", "at Google").
_PLACE_WORDS = {"in", "at"}


def people_in(text: str) -> list[str]:
    names: list[str] = []
    previous = ""
    for match in _WORD.finditer(text):
        word = re.sub(r"['\u2019]s$", "", match.group(0))
        if word.lower() in _FAMILY:
            name = word.title()
        elif _is_name(word) and previous.lower() not in _PLACE_WORDS:
            name = word
        else:
            name = ""
        if name and name not in names:
            names.append(name)
        previous = word
    return names


def _is_name(word: str) -> bool:
    return (
        len(word) > 1
        and word[0].isupper()
        and not word[1].isupper()  # "CV", "NHS": not names
        and word not in _NOT_NAMES
        and word not in _TITLES
    )


# --- Due dates --------------------------------------------------------------------------------

_MONTH = rf"(?P<month>{'|'.join(_MONTHS)}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
# "14 December", "the 2nd of December", "Dec 3", "December 15th", "2026-12-05"; "the 9th".
_DAY_MONTH = re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?:am|pm|:))")
_ISO = re.compile(r"\b(?P<year>20\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")
_ORDINAL = re.compile(r"\b(?:the\s+)?(?P<day>[0-3]?\d)(?:st|nd|rd|th)\b")
_END_OF_MONTH = re.compile(r"\bend of (?:the |this )?month\b")


def due_date_in(text: str, today: date) -> date | None:
    """The date a capture names, resolved to its next occurrence on or after `today`. Vague
    times ("next week", "in February", "before winter") give none: the user can set one."""
    lowered = text.lower()
    if match := _ISO.search(lowered):
        return _valid(int(match["year"]), int(match["month"]), int(match["day"]))
    if match := _DAY_MONTH.search(lowered) or _MONTH_DAY.search(lowered):
        return _next_day_of_year(today, _month_number(match["month"]), int(match["day"]))
    if match := _ORDINAL.search(lowered):
        return _next_day_of_month(today, int(match["day"]))
    if _END_OF_MONTH.search(lowered):
        return today.replace(day=calendar.monthrange(today.year, today.month)[1])
    if re.search(r"\b(?:today|tonight)\b", lowered):
        return today
    if re.search(r"\btomorrow\b", lowered):
        return today + timedelta(days=1)
    for i, day in enumerate(_WEEKDAYS):
        if re.search(rf"\b{day}\b", lowered):
            ahead = (i - today.weekday()) % 7 or 7
            return today + timedelta(days=ahead)
    return None


def _month_number(name: str) -> int:
    return next(i for i, month in enumerate(_MONTHS, start=1) if month.startswith(name[:3]))


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None  # "31 February": no date rather than a guess


def _next_day_of_year(today: date, month: int, day: int) -> date | None:
    this_year = _valid(today.year, month, day)
    if this_year is None or this_year >= today:
        return this_year
    return _valid(today.year + 1, month, day)


def _next_day_of_month(today: date, day: int) -> date | None:
    """A day of the month ("the 9th"): this month's if still to come, else the next one's."""
    year, month = today.year, today.month
    for _ in range(3):
        candidate = _valid(year, month, day)
        if candidate is not None and candidate >= today:
            return candidate
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def details_for(bucket: Bucket, text: str, title: str, today: date) -> dict:
    if bucket is Bucket.PEOPLE:
        return {"people": people_in(text), "follow_up": title}
    if bucket is Bucket.PROJECTS:
        return {"next_action": title}
    if bucket is Bucket.IDEAS:
        return {"one_liner": title}
    return {"due_date": due_date_in(text, today)}
