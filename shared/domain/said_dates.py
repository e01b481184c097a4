"""The days a capture names, as it said them and as a day counted from when it was said ("by
Thursday" said on Fri 27 Nov is Thu 3 Dec): what an answer quotes beside the words."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from shared.domain.calendar_words import MONTHS, WEEKDAYS
from shared.domain.due_dates import day_of_month_on, ordinal_names_a_day, weekday_number

_DAY_ABBR = frozenset({"mon", "tue", "wed", "thu", "fri", "sat", "sun"})
_MONTHS = [month[:3] for month in MONTHS]
CALENDAR_WORDS = frozenset(
    [*WEEKDAYS, *(d + "s" for d in WEEKDAYS), "tues", "thur", "thurs", "sept", *_DAY_ABBR]
).union(_MONTHS, MONTHS)
_WEEKDAY = (
    r"mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|"
    r"sat(?:urday)?|sun(?:day)?"
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_DATE = re.compile(
    r"\b(?:(?:by|on|this|next|until|till|before)\s+)?"
    r"(?:(?P<rel>today|tonight|tomorrow|yesterday)|"
    # An explicit day, a weekday before it or not ("wed dec 2", "Sat 21 Nov"): the day holds.
    rf"(?:(?P<wd>{_WEEKDAY})\.?,?\s+(?:the\s+)?)?"
    r"(?:(?P<dom2>\d{1,2})(?:st|nd|rd|th)?\s+(?P<mon2>" + _MONTH + r")|"
    r"(?P<mon3>" + _MONTH + r")\.?\s+(?P<dom3>\d{1,2})(?:st|nd|rd|th)?|"
    r"(?:the\s+)?(?P<dom>\d{1,2})(?:st|nd|rd|th)(?:\s+of\s+(?P<mon1>" + _MONTH + r"))?)|"
    rf"(?P<dow>{_WEEKDAY}))\b",
    re.IGNORECASE,
)


def day(value: date | datetime) -> str:
    """A day as people write it: Thu 3 Dec."""
    return f"{value:%a} {value.day} {value:%b}"


def resolved_dates(text: str, said_on: date) -> list[tuple[str, date]]:
    """Each day the text names, as written, with the day it means counted from `said_on`."""
    out = []
    for m in _DATE.finditer(text):
        phrase = " ".join(m.group().split())
        when: date | None = None
        if m["rel"]:
            offset = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}
            when = said_on + timedelta(days=offset[m["rel"].casefold()])
        elif m["dow"]:
            target = weekday_number(m["dow"])
            # "on Friday" said on a Friday is the next one.
            ahead = (target - said_on.weekday()) % 7 or 7
            when = said_on + timedelta(days=ahead)
        elif m["dom"] and not m["mon1"] and not _names_a_day(text, m.start("dom")):
            continue  # "remind the 2nd floor lot", "came 3rd": no day
        else:
            dom = int(m["dom"] or m["dom2"] or m["dom3"])
            month_name = m["mon1"] or m["mon2"] or m["mon3"]
            month = _MONTHS.index(month_name[:3].casefold()) + 1 if month_name else None
            when = _next_day_of_month(said_on, dom, month)
            if m["wd"] and month is None and when is not None:
                when = day_of_month_on(said_on, dom, weekday_number(m["wd"])) or when
        if when is not None:
            out.append((phrase, when))
    return out


def _names_a_day(text: str, dom_start: int) -> bool:
    """A bare ordinal judged as due dates judge it, from its "the" where it has one."""
    the = re.search(r"\bthe\s+$", text[:dom_start], re.IGNORECASE)
    return ordinal_names_a_day(text, the.start() if the else dom_start)


def _next_day_of_month(said_on: date, dom: int, month: int | None) -> date | None:
    """The first `dom` on or after `said_on`; with its `month` named, that day in the year
    that puts it nearest `said_on` ("nov 20" said on 23 Nov is three days before, not next
    year; "march" said in November is next year's)."""
    if month is not None:
        candidates = []
        for year in (said_on.year - 1, said_on.year, said_on.year + 1):
            try:
                candidates.append(date(year, month, dom))
            except ValueError:
                continue
        return min(candidates, key=lambda d: abs(d - said_on), default=None)
    for ahead in range(0, 13):
        y, mo = divmod(said_on.month - 1 + ahead, 12)
        try:
            candidate = date(said_on.year + y, mo + 1, dom)
        except ValueError:
            continue
        if candidate >= said_on:
            return candidate
    return None


def dates_in(text: str, said_on: date) -> list[str]:
    """ "by Thursday — Thu 3 Dec" for each day the text names."""
    return [f"{phrase} — {day(when)}" for phrase, when in resolved_dates(text, said_on)]
