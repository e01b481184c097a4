"""The day a capture is due (`due_date_in`), read from its text.

A date library would read more forms, but the ones that search free text cost a second of
cold start and read verbs as dates ("may", "sat"); these rules read only what a capture says
plainly and give no date rather than a wrong one.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from shared.domain.calendar_words import (
    MONTHS,
    MONTHS_ELSEWHERE,
    TIME_WORDS,
    WEEKDAYS,
    WEEKDAYS_ELSEWHERE,
)
from shared.domain.people_lexicon import a_past_form, english_words, known_name
from shared.domain.people_words import COMMON

_ENGLISH_MONTH = rf"{'|'.join(MONTHS)}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
_MONTH_NUMBER = {
    name: number
    for number, names in enumerate(MONTHS_ELSEWHERE, start=1)
    for name in (MONTHS[number - 1], *names)
}
_ANY_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
# "14 December", "the 2nd of December", "Dec 3", "December 15th", "2026-12-05"; "the 9th";
# and as other languages write a date: "14 de diciembre", "3 décembre", "12. Dezember".
_DAY_MONTH = re.compile(
    rf"\b{_DAY}\.?(?:\s+(?:of|de))?\s+(?P<month>{_ANY_MONTH}|{_ENGLISH_MONTH})\b\.?"
)
_MONTH_DAY = re.compile(rf"\b(?P<month>{_ENGLISH_MONTH})\b\.?\s+{_DAY}\b(?!\s*(?:am|pm|:))")
_ISO = re.compile(r"\b(?P<year>20\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")
_ORDINAL = re.compile(r"\b(?:the\s+)?(?P<day>[0-3]?\d)(?:st|nd|rd|th)\b")
# A day of the month as German and Spanish write it alone ("sie kommen am 23.", "bis zum
# 27.", "viene el 20, quiere"): after the word said before a day, with a German ordinal's
# dot or a Spanish clause's end.
_ORDINAL_ELSEWHERE = re.compile(
    r"\b(?:am|zum|vom|ab)\s+(?P<day>[0-3]?\d)\.(?!\d)"
    r"|\bel\s+(?P<dia>[0-3]?\d)(?=\s*(?:[,;!?]|\.(?!\d)|$|y\b|para\b|que\b))"
)
_END_OF_MONTH = re.compile(r"\bend of (?:the |this )?month\b")
_END_OF_A_MONTH = re.compile(
    rf"\b(?:end of|ende|fin de|finales de) (?P<month>{_ANY_MONTH}|{_ENGLISH_MONTH})\b"
)
_TODAY = re.compile(
    r"\b(?:today|tonight|hoy|hoje|oggi|heute|vandaag|dzisiaj|dziś|idag|i dag|esta noche"
    r"|stasera|vanavond|ce soir|esta noite|this afternoon|this aft|this evening)\b"
    r"|\baujourd['\u2019]hui\b"
)
_DAY_AFTER_TOMORROW = re.compile(
    r"\b(?:day after tomorrow|pasado mañana|depois de amanhã|dopodomani|übermorgen"
    r"|overmorgen|pojutrze|övermorgon)\b|après-demain"
)
# "mañana" and "morgen" are also the morning ("por la mañana", "heute Morgen", "'s morgens").
_TOMORROW = re.compile(
    r"\b(?:tomorrow|tmrw|tmw|tomoz|2moro|demain|amanhã|domani|jutro|imorgon|i morgon)\b"
    r"|(?<!\bla )(?<!esta )\bmañana\b"  # "llamarla mañana", not "la mañana"
    r"|(?<!heute )(?<!guten )(?<!am )(?<!jeden )(?<!goeden )(?<!deze )\bmorgen\b"
)
_WEEKDAY_NAMED = [
    re.compile(rf"\b(?:{'|'.join(re.escape(w) for w in (english, *others))})\b")
    for english, others in zip(WEEKDAYS, WEEKDAYS_ELSEWHERE, strict=True)
]
# Portuguese says the other days by their number ("na quarta", "até quinta"): bare, they are
# also "fourth" and "fifth", so they count only after one of these.
_PT_ORDINAL_DAYS = {"segunda": 0, "terça": 1, "quarta": 2, "quinta": 3}
_PT_BEFORE_A_DAY = r"(?:na|no|até|ate|à|para|esta|nesta|próxima|proxima)"
_PT_DAY = re.compile(rf"\b{_PT_BEFORE_A_DAY}\s+(?P<day>{'|'.join(_PT_ORDINAL_DAYS)})\b(?!-feira)")


def due_date_in(text: str, today: date) -> date | None:
    """The day a capture names ahead of it, resolved to its next occurrence on or after
    `today`. Only what points forward counts: past days ("last friday", "the letter came
    today", "saw it on 2 oct" said later in October), recurring days ("every fri", "on thurs
    evenings") and vague times ("next week", "in February") give none. Of two days, a
    deadline ("by tmrw", "before the 20th") wins."""
    lowered = text.lower()
    found: list[tuple[bool, date]] = []  # (a deadline, the day), in the order of the kinds

    def add(match: re.Match[str], day: date | None) -> None:
        if day is not None:
            found.append((_is_deadline(lowered, match.start()), day))

    for match in _ISO.finditer(lowered):
        day = _valid(int(match["year"]), int(match["month"]), int(match["day"]))
        add(match, day if day is not None and day >= today else None)
    dated: list[range] = []  # where a full date stands, so its day is not read again
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for match in pattern.finditer(lowered):
            dated.append(range(match.start(), match.end()))
            add(match, _ahead_in_year(today, _month_number(match["month"]), int(match["day"])))
    for match in _END_OF_A_MONTH.finditer(lowered):
        month = _month_number(match["month"])
        year = today.year if month >= today.month else today.year + 1
        add(match, date(year, month, calendar.monthrange(year, month)[1]))
    # A day of the month ("the 9th", "sat 24th"); not an age ("her 70th"), a place ("came
    # 3rd in the comp") or a part ("the 2nd stage invoice").
    for match in _ORDINAL.finditer(lowered):
        if any(match.start("day") in span for span in dated):
            continue
        if 1 <= int(match["day"]) <= 31 and _ordinal_is_a_day(lowered, match):
            said = _A_WEEKDAY_BEFORE.search(lowered[: match.start("day")])
            weekday = weekday_number(said[0]) if said else None
            add(match, day_of_month_on(today, int(match["day"]), weekday))
    for match in _ORDINAL_ELSEWHERE.finditer(lowered):
        day_of_month = int(match["day"] or match["dia"])
        if 1 <= day_of_month <= 31 and not any(match.start() in span for span in dated):
            add(match, _next_day_of_month(today, day_of_month))
    for match in _END_OF_MONTH.finditer(lowered):
        add(match, today.replace(day=calendar.monthrange(today.year, today.month)[1]))
    for match in _DAY_AFTER_TOMORROW.finditer(lowered):
        add(match, today + timedelta(days=2))
    for match in _TODAY.finditer(lowered):
        if not _reports_the_past(lowered, match):  # "the letter came today": no date
            add(match, today)
    for match in _TOMORROW.finditer(lowered):
        add(match, today + timedelta(days=1))
    weekdays = [
        (match, i) for i, named in enumerate(_WEEKDAY_NAMED) for match in named.finditer(lowered)
    ]
    weekdays += [
        (match, _SHORT_WEEKDAYS[match["day"]])
        for match in _SHORT_WEEKDAY.finditer(lowered)
        if _short_weekday_is_a_day(lowered, match)
    ]
    for match, weekday in sorted(weekdays, key=lambda pair: pair[0].start()):
        if number := _DAY_OF_MONTH_AFTER.match(lowered, match.end()):
            # "fri 16th", "sat 3 feb": the day of the month says which Friday; a bare one
            # ("el martes 10") only where it is that weekday.
            day = _next_day_of_month(today, int(re.sub(r"\D", "", number[0])))
            if (
                day is not None
                and day.weekday() == weekday
                and not number[0].endswith(("st", "nd", "rd", "th"))
            ):
                add(match, day)
            continue
        if _is_past_or_recurring(lowered, match):
            continue
        if match.start() == 0 and _NAMES_A_THING.match(lowered, match.end()):
            continue  # "saturday assistant: ...": a role or a thing named for its day
        if match.start() == 0 and weekday == today.weekday():
            add(match, today)  # "Sunday jobs: ..." written on a Sunday
        else:
            add(match, _next_weekday(today, weekday))
    for match in _PT_DAY.finditer(lowered):
        add(match, _next_weekday(today, _PT_ORDINAL_DAYS[match["day"]]))
    deadlines = [day for deadline, day in found if deadline]
    if deadlines:
        return deadlines[0]
    if not found and _HERE_AT.search(lowered):
        return today  # "lewis here at 8 for the boiler", "jed here 8am": someone comes today
    return found[0][1] if found else None


_SHORT_WEEKDAYS = {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3, "thurs": 3,
    "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_SHORT_WEEKDAY = re.compile(rf"\b(?P<day>{'|'.join(_SHORT_WEEKDAYS)})\b\.?")
# "sat", "sun" and "wed" are also words: a day only where a day is said.
_SHORT_AND_A_WORD = {"sat", "sun", "wed"}
_A_WEEKDAY = rf"\b(?:{'|'.join(WEEKDAYS)}|mon|tues?|weds?|thu|thurs?|fri|sat|sun)\b"
_WEEKDAY_AFTER = re.compile(rf"\s+{_A_WEEKDAY}")
_IN_A_MONTH = re.compile(rf"\s+(?:in|next|this)\s+(?:{_ENGLISH_MONTH})\b")
_FROM_NOW_ON = re.compile(r"\bfrom now on\b|\bevery (?:wk|week)\b|\beach week\b|\bweekly\b")
# Before an ordinal that is an age ("tunde's 18th", "his 70th"; not "it's the 19th").
_AN_AGE_BEFORE = re.compile(
    r"(?:(?<!\bit)(?<!\bthat)(?<!\bwhat)(?<!\bthere)(?<!\bhere)['\u2019]s"
    r"|\bhis|\bher|\btheir|\bmy|\byour)\s+$"
)
# Before an ordinal that is a place in a race or a rank, not a day ("came 3rd").
_BEFORE_A_RANK = {"came", "come", "finished", "placed", "ranked", "got", "was"}
_BEFORE_A_DAY = {
    "by", "on", "till", "til", "until", "before", "from", "this", "next", "for", "due",
    "thru", "through", "w/c", "it", "and", "or",
}  # fmt: skip
_TIME_OF_DAY = re.compile(
    r"\s*(?:\d|morning|afternoon|evening|night|am\b|pm\b|lunch|first thing|eve\b)"
)
# Before a day: it has passed, it recurs, or it is one of several ("which sat works").
_NOT_AHEAD = {
    "last", "every", "since", "which", "each", "most", "other", "past", "previous", "good",
    "not", "except",  # "tues nights now, not thurs", "any weekday except Wednesday"
    "some", "any",  # "some sunday": no day in particular
    "a", "an", "one",  # "one saturday in the hols", "a saturday slot"
    "seit", "depuis",  # "seit donnerstag kaputt": since, in German and French
}  # fmt: skip
# A clause that says what someone does on a day, every week ("the salon only does weds",
# "she does nights at the Heath on weds").
_HABIT = re.compile(
    r"\b(?:usually|always|normally|only (?:does|do|opens?|works?)"
    r"|(?:does|do|works?) (?:nights|days|mornings|evenings|lates|earlies|weekends))\b"
)
_RECURRING_AFTER = re.compile(
    r"(?:\s*(?:or|and|&|/)\s*(?:[a-z]+day|mon|tues?|weds?|thu|thurs?|fri|sat|sun))?"
    r"\s*(?:mornings|afternoons|evenings|nights|nite?s)\b"
)
# What the day is said of, when it recurs: a plural ("sunday roasts", "the thurs club runs").
_NOUNS_AFTER = re.compile(r"\s+(?P<between>[a-z]+\s+)?(?P<noun>[a-z]{3,}s)\b")
# Words that start another clause or phrase after a day ("sat before prices go up"); not a
# time of day ("thursday evening sessions" recur).
_CONNECTIVES = {
    "before", "after", "by", "as", "because", "cos", "unless", "once", "while", "in", "at",
    "for", "to", "if", "but", "when", "so", "then", "and", "or", "till", "until", "from",
}  # fmt: skip
_DEADLINE = re.compile(
    r"(?:\bby|\bbefore|\btill|\btil|\buntil|\bdue|\bantes del?|\bbis|\bvor|\bavant)"
    r"(?:\s+(?:the|this|next|el|la|am|on|zum|le))?"
    rf"(?:\s+(?:{'|'.join(WEEKDAYS)}|mon|tues?|weds?|thu|thurs?|fri|sat|sun)\.?)?\s*$"
)
# A day of the month right after a weekday ("fri 16th", "sat 3 feb", "weds the 4th").
_DAY_OF_MONTH_AFTER = re.compile(
    r"\.?\s+(?:the\s+)?(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\b(?![:.]?\d)"
    r"(?!\s?[-\u2013]\s?\d|\s?(?:am|pm)\b)"  # "sat 2-5pm", "fri 9am": a time, not the 2nd
)
_A_WEEKDAY_BEFORE = re.compile(
    rf"\b(?:{'|'.join(WEEKDAYS)}|mon|tues?|weds?|thu|thurs?|fri|sat|sun)\.?\s+(?:the\s+)?$"
)
_PAST_TENSE = re.compile(
    r"\b(?:came|went|was|were|rang|said|had|got|did|saw|told|left|took|gave|sent|thought|"
    r"brought|bought|caught|felt|heard|lost|won(?!['\u2019]t)|met|\w{2,}(?<!e)ed|"
    # the other irregular pasts that are no present, noun or day ("dug", not "sat" or "put")
    r"dug|ate|drank|ran|swam|wrote|broke|flew|drove|rode|sang|spoke|threw|woke|wore|chose|"
    r"forgot|froze|knew|meant|paid|sold|slept|spent|stood|taught|began|blew|built|drew|"
    r"fought|grew|held|made|shook|kept|understood|found|became|fell|"
    r"(?:did|was|were|had|could)n['\u2019]?t)\b"
)
# A decimal point or a time's dot ("1.2km", "2.30") ends no clause.
_CLAUSE_EDGE = re.compile(
    r"(?<!\d)\.|\.(?!\d)|[,;:!?\n\u2013\u2014\u2600-\u27bf\U0001f000-\U0001faff]| - "
)
# A heading's weekday before one word that is no list ("jobs") and no time of day
# ("morning"): the name of what the capture is about ("saturday assistant: 7 applications").
_NAMES_A_THING = re.compile(
    r"\s+(?!(?:morning|afternoon|evening|night|lunch|eve)\b)[a-z]{3,}(?<!s)\s*:"
)
# What may follow a day of the month: a time, a connective or the clause's end.
_AFTER_A_DAY = {
    "of", "at", "for", "and", "or", "to", "then", "so", "please", "morning", "afternoon",
    "evening", "night", "am", "pm", "lunch", "latest", "deadline", "noon", "is",
    "from", "till", "until", "w", "with", "if", "but", "when", "-", "now", "after",
}  # fmt: skip


# A verb and a word before "on" a day of the month, in one clause ("was due on the").
_A_PAST_ON = re.compile(r"\b([a-z]+)\s+(?:([a-z]+)\s+)?on\s+$")


def ordinal_names_a_day(text: str, start: int) -> bool:
    """Whether the ordinal at `start` ("the 9th", "2nd") is a day of the month as due dates
    read one: not an age ("his 70th"), a place ("came 3rd") nor a thing's part ("the 2nd floor
    lot"). An answer's quoted days (`said_dates`) ask this too, so the two never disagree."""
    lowered = text.lower()
    match = _ORDINAL.match(lowered, start)
    return match is not None and _ordinal_is_a_day(lowered, match)


def weekday_number(said: str) -> int:
    """0 for "mon", "monday" or "Mon. the ", as `date.weekday` counts."""
    name = said.strip().lower()[:3]
    return next(i for i, day in enumerate(WEEKDAYS) if day.startswith(name))


def _is_deadline(lowered: str, start: int) -> bool:
    return bool(_DEADLINE.search(lowered[max(0, start - 16) : start]))


def _words_before(lowered: str, start: int) -> list[str]:
    return re.findall(r"[\w/]+", lowered[max(0, start - 30) : start])


def _ordinal_is_a_day(lowered: str, match: re.Match[str]) -> bool:
    if _A_WEEKDAY_BEFORE.search(lowered[: match.start("day")]):
        return True  # "starts sat 12th on the morning shift"
    before = _words_before(lowered, match.start())
    # "tunde's 18th", "his 70th", "came 3rd": an age or a place, not a day.
    if _AN_AGE_BEFORE.search(lowered[: match.start()]):
        return False
    if before and before[-1] in _BEFORE_A_RANK:
        return False
    if (said := _A_PAST_ON.search(lowered, 0, match.start())) and any(
        (past := _PAST_TENSE.fullmatch(w)) and _a_past(past) for w in said.groups() if w
    ):
        return False  # "was due on the 1st", "went thru on the 1st": a day gone
    if before and before[-1] in {"a", "an"} and not lowered[match.start() :].startswith("the"):
        return False  # "need a 6th", "get a 2nd opinion": one more, not a day
    rest = lowered[match.end() :]
    if re.match(r"\s*of\s+\d", rest):
        return False  # "23rd of 61": a place among so many
    if _WEEKDAY_AFTER.match(rest):
        return False  # "the 2nd weds of the month": a day that recurs
    if _is_deadline(lowered, match.start()):
        return True  # "in by the 4th too", "by the 9th im cancelling": a deadline's day
    following = re.match(r"\s*([^\W\d_]+)", rest)
    if following is None:
        return True  # the end, punctuation or a time ("the 22nd, she's", "13th 2pm")
    gap = rest[: following.start(1)]
    return (
        bool(re.search(r"[^\s]", gap))
        or following[1] in _AFTER_A_DAY
        or (following[1] in TIME_WORDS)
    )


def _short_weekday_is_a_day(lowered: str, match: re.Match[str]) -> bool:
    if match["day"] not in _SHORT_AND_A_WORD:
        return True
    if match.start() == 0 and re.match(r"\s*[a-z]+\s*:", lowered[match.end() :]):
        return True  # "sat jobs: ...": the day's list
    before = _words_before(lowered, match.start())
    rest = lowered[match.end() :]
    # "tablets and sun cream", "maps or sat nav": after "and"/"or" the word is read as it
    # stands, a day only where no word follows it
    if before and before[-1] in _BEFORE_A_DAY - {"and", "or"}:
        return True
    # "visit sun w her biscuits", "doing the carbs sat at his garage": a phrase's word after
    # it, where no one sits ("we sat with him") and no article makes it the sun ("in the sun")
    if (
        (following := re.match(r"\s+([a-z]+)\b", rest))
        and following[1] in _A_PHRASE_AFTER_A_DAY
        and not (before and (before[-1] in _NO_DAY_AFTER or known_name(before[-1])))
    ):
        return True
    if match[0].endswith(".") and not (before and before[-1] in _NO_DAY_AFTER):
        return True  # "race sat. kit: cag, map", "the floor tiles sat. worktops next"
    return bool(_TIME_OF_DAY.match(rest)) or not re.match(r"\s*[^\W\d_]", rest)


_A_PHRASE_AFTER_A_DAY = {"w", "with", "and", "at", "to"}
_NO_DAY_AFTER = {
    "i", "we", "he", "she", "they", "you", "who", "the", "a", "an", "my", "your", "his", "her",
    "our", "their", "in", "of", "no",
}  # fmt: skip


def _is_past_or_recurring(lowered: str, match: re.Match[str]) -> bool:
    before = _words_before(lowered, match.start())
    if before and before[-1] in _NOT_AHEAD:
        return True
    if (
        before[-3:-2] == ["on"]
        and before[-2:-1] in (["a"], ["an"], ["one"])
        and before[-1].isalpha()
    ):
        return True  # "on a quiet tues": a kind of day
    if _HABIT.search(_clause_before(lowered, match.start())):
        return True
    # "swim tues and thurs", "sessions tues + thurs", "open thurs-sat": a week's days, not
    # one day.
    if re.match(rf"\s*(?:and|&|\+|/|-|\u2013)\s*{_A_WEEKDAY}", lowered[match.end() :]) or (
        re.search(rf"{_A_WEEKDAY}\s*(?:and|&|\+|/|-|\u2013)\s*$", lowered[: match.start()])
    ):
        return True
    # "open farm sunday in june", "a sunday next june": a kind of day in a month, not one day.
    if _IN_A_MONTH.match(lowered, match.end()):
        return True
    # "the 2nd weds of the month", "first monday": one of the month's, every month.
    if before and re.fullmatch(r"\d+(?:st|nd|rd|th)|first|second|third|fourth", before[-1]):
        return True
    # "moves to the monday slot from now on", "bike sat, run sun, same every wk".
    end = re.compile(r"[.!?\n]").search(lowered, match.end())
    if _FROM_NOW_ON.search(lowered, match.end(), end.start() if end else len(lowered)):
        return True
    # "died on saturday", "came in monday": a day a past verb happened on.
    verb = before[-2] if len(before) > 1 and before[-1] in {"on", "in"} else before[-1:] or [""]
    if _PAST_TENSE.fullmatch(verb if isinstance(verb, str) else verb[0]):
        return True
    # "passed away on saturday", "lost her gran on sunday": "on" a day after a past verb of
    # its clause.
    if before and before[-1] == "on" and _happened_before(lowered, match.start()):
        return True
    if _RECURRING_AFTER.match(lowered[match.end() :]):
        return True
    # "run the friday group", "the Tuesday lunch club": a thing named for the day it meets
    # on, not one day ("at the fri meeting" is one).
    if (
        before[-1:] == ["the"]
        and before[-2:-1] != ["at"]
        and (named := re.match(r"\s+([a-z]+)", lowered[match.end() :]))
        and named[1] not in _AFTER_A_DAY
        and not _TIME_OF_DAY.match(named[0])
    ):
        return True
    plural = _NOUNS_AFTER.match(lowered, match.end())
    return (
        match.start() > 0  # "Sunday jobs: ..." is that day's list
        and plural is not None
        and not match[0].endswith(".")  # "by weds. reckons he could": the next sentence
        # "by sun before prices jump": a plural after a connective is the next clause's
        and (plural["between"] or "").strip() not in _CONNECTIVES
        and plural["noun"] not in COMMON
        and (plural["noun"][:-1] in english_words() or plural["noun"][:-2] in english_words())
    )


def _clause_before(lowered: str, start: int) -> str:
    edges = [m.end() for m in _CLAUSE_EDGE.finditer(lowered[:start])]
    return lowered[edges[-1] if edges else 0 : start]


def _happened_before(lowered: str, start: int) -> bool:
    """Does the clause before a day say what happened on it ("lost her gran on sunday"), with
    nothing still to come in between (not "asked me to lead the pitch on thurs")?"""
    edges = [m.end() for m in _CLAUSE_EDGE.finditer(lowered[:start])]
    clause = lowered[edges[-1] if edges else 0 : start]
    pasts = [
        past
        for past in _PAST_TENSE.finditer(clause)
        if _a_past(past)
        and not re.search(r"\b(?:the|a|an|my|your|our|his|her|their)\s+$", clause[: past.start()])
    ]
    return bool(pasts) and not _STILL_TO_COME.search(clause, pasts[-1].end())


# What puts a day after a past verb ahead: an errand given, a plan ("asked me to lead it on
# thurs", "said she'll come on sat").
_STILL_TO_COME = re.compile(
    r"\bto\s+(?!the\b|a\b|my\b)[a-z]+|['\u2019]ll\b|\b(?:will|can|going|gonna|shall)\b"
)


def _reports_the_past(lowered: str, match: re.Match[str]) -> bool:
    """Is "today" said of something done ("the letter came today", "he rang twice today",
    "the comp today was brutal")?"""
    edges = [m.end() for m in _CLAUSE_EDGE.finditer(lowered[: match.start()])]
    start = edges[-1] if edges else 0
    end_match = _CLAUSE_EDGE.search(lowered, match.end())
    end = end_match.start() if end_match else len(lowered)
    if (
        _GERMAN_PAST.search(lowered, start, end)
        or _SPANISH_PAST.search(lowered, start, end)
        or _A_DISTANCE.search(lowered, start, end)
        or _ALL_DONE.search(lowered, start, end)
        or (
            end_match is not None
            and _told_next(lowered, end_match)
            and not _opens_with_a_verb(lowered[start:end])
        )
    ):
        return True
    return any(  # not "post the signed forms today": a participle after "the" is no past
        _a_past(past)
        and not re.search(
            r"\b(?:the|a|an|my|your|our|his|her|their|this|that)\s+$", lowered[: past.start()]
        )
        for past in _PAST_TENSE.finditer(lowered, start, end)
    )


def _told_next(lowered: str, edge: re.Match[str]) -> bool:
    """Does the clause after the day's open with what was done ("91st today - took the cake
    in", "hurling w him today, he loved it", "brighter today, laughed at the photos")?"""
    if edge[0] not in {",", " - ", "\u2013", "\u2014"}:
        return False
    clause_end = _CLAUSE_EDGE.search(lowered, edge.end())
    said = lowered[edge.end() : clause_end.start() if clause_end else len(lowered)]
    words = re.findall(r"[\w']+", said)[:3]
    if words[:1] and words[0] in _SUBJECTS:
        words = words[1:]
    # a past with more to say ("he loved it"), not a bare word after an errand ("forgot")
    return (
        len(words) > 1 and (past := _PAST_TENSE.fullmatch(words[0])) is not None and _a_past(past)
    )


_SUBJECTS = {"he", "she", "they", "we", "i", "it", "you"}
# The verbs of errands said bare, whose past no "-ed" shows.
_ERRAND_VERBS = {
    "ring", "call", "send", "pay", "give", "bring", "buy", "take", "get", "tell", "make", "do",
    "go", "put", "sell", "pick", "drop", "meet", "find", "leave", "text", "email", "message",
    "post", "renew", "book", "order", "collect", "return",
}  # fmt: skip


def _opens_with_a_verb(clause: str) -> bool:
    """Does a clause open with a verb said bare, an errand ("post the forms today, recorded",
    "renew the reg TODAY, forgot")?"""
    first = re.match(r"\s*([a-z]+)", clause)
    if first is None:
        return False
    return first[1] in _ERRAND_VERBS


# German says what was done with "war" or a perfect ("Opa ist heute gekommen", "hat heute
# Geburtstag gefeiert", "hat heute angerufen").
_GERMAN_PAST = re.compile(
    r"\bwar(?:en)?\b|\b(?:hat|habe|hab|haben|ist|sind|bin)\b.*"
    # a separable verb's too ("hat heute angerufen", "ist heute ausgezogen")
    r"\b(?:an|auf|aus|ab|ein|mit|vor|zu|zurück|weg|los|nach|her|hin)?ge[^\W\d_]{3,}(?:t|en)\b"
)


# Spanish says what was done with its preterite ("me lo pidió hoy", "llamó hoy") or a perfect
# ("ha llamado hoy", "hemos comido").
_SPANISH_PAST = re.compile(
    r"\b[^\W\d_]{2,}(?:ió|ó)\b|\b(?:he|has|ha|hemos|han)\s+[^\W\d_]+(?:ado|ido)\b"
)


# A distance covered, in the clause of "today": a run, a ride or a swim done ("120k today in
# 5h10", "long run today 24k", "did 1.2km in the lake today"); not money ("£7.9k").
_A_DISTANCE = re.compile(
    r"(?<![£€$\d.,])\d+(?:\.\d+)?\s?(?:k|km|miles?|mi)\b"
    # "1500m swim", "400 m": metres swum or run, three digits or more (not "5m", millions)
    r"|(?<![£€$\d.,])\d{3,}\s?m\b"
)


# "intervals tonight 6x800 all done": said when it is over; not "want it all done by".
_ALL_DONE = re.compile(r"\ball done\b(?!\s+(?:by|before|for|in time)\b)")


# Someone due here at a time, with no day said: today ("dean here at 8", "jed here 8am").
_HERE_AT = re.compile(r"\bhere (?:at |from |by )?\d{1,2}(?:[.:]\d\d)?(?:am|pm)?\b(?![.:]?\d)")


def _a_past(match: re.Match[str]) -> bool:
    """A past of `_PAST_TENSE`: a word it lists, or one ending "-ed" that is an English verb's
    past ("passed"; not "manfred", "alfred": names)."""
    word = match[0]
    return not word.endswith("ed") or len(word) < 5 or a_past_form(word)


def _ahead_in_year(today: date, month: int, day: int) -> date | None:
    """A day of the year ahead of `today`: this year's if still to come; none if it passed in
    the last three months ("saw it on 2 oct" said on the 27th); else next year's."""
    this_year = _valid(today.year, month, day)
    if this_year is None or this_year >= today:
        return this_year
    if (today - this_year).days <= _RECENTLY_PASSED_DAYS:
        return None
    return _valid(today.year + 1, month, day)


_RECENTLY_PASSED_DAYS = 92


def _next_weekday(today: date, weekday: int) -> date:
    """The next such day after today ("friday" said on a Friday is a week on)."""
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _month_number(name: str) -> int:
    name = name.rstrip(".")
    if name in _MONTH_NUMBER:
        return _MONTH_NUMBER[name]
    return next(i for i, month in enumerate(MONTHS, start=1) if month.startswith(name[:3]))


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None  # "31 February": no date rather than a guess


def day_of_month_on(today: date, day: int, weekday: int | None) -> date | None:
    """The next `day` of a month on or after `today`; with the weekday said before it ("sat
    12th", `weekday` 0 for Monday), the first of the next three such days that falls on it
    ("sat 12th" said on Tue 10 Nov is Sat 12 Dec), else the nearest (a slip of the weekday)."""
    first = _next_day_of_month(today, day)
    when = first
    for _ in range(3):
        if weekday is None or when is None or when.weekday() == weekday:
            return when if when is not None else first
        when = _next_day_of_month(when + timedelta(days=1), day)
    return first


def _next_day_of_month(today: date, day: int) -> date | None:
    """A day of the month ("the 9th"): this month's if still to come, else the next one's."""
    year, month = today.year, today.month
    for _ in range(3):
        candidate = _valid(year, month, day)
        if candidate is not None and candidate >= today:
            return candidate
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None
