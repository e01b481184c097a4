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
from typing import Any

from shared.domain.classification import Bucket

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTHS = [m.lower() for m in calendar.month_name[1:]]

# The same days and months in the other languages people capture in (French, Spanish,
# German, Italian, Portuguese, Dutch, Polish, Swedish), lowercase, Monday and January first;
# Polish as it is said with a date or after "w" ("w sobotę", "5 grudnia").
_WEEKDAYS_ELSEWHERE = [
    ("lundi", "lunes", "montag", "lunedì", "lunedi", "segunda-feira", "maandag",
     "poniedziałek", "måndag"),
    ("mardi", "martes", "dienstag", "martedì", "martedi", "terça-feira", "terça", "terca",
     "dinsdag", "wtorek", "tisdag"),
    ("mercredi", "miércoles", "miercoles", "mittwoch", "mercoledì", "mercoledi",
     "quarta-feira", "woensdag", "środa", "środę", "sroda", "srode", "onsdag"),
    ("jeudi", "jueves", "donnerstag", "giovedì", "giovedi", "quinta-feira", "donderdag",
     "czwartek", "torsdag"),
    ("vendredi", "viernes", "freitag", "venerdì", "venerdi", "sexta-feira", "sexta",
     "vrijdag", "piątek", "piatek", "fredag"),
    ("samedi", "sábado", "sabado", "samstag", "sonnabend", "sabato", "zaterdag", "sobota",
     "sobotę", "sobote", "lördag"),
    ("dimanche", "domingo", "sonntag", "domenica", "zondag", "niedziela", "niedzielę",
     "niedziele", "söndag"),
]  # fmt: skip
# Portuguese says the other days by their number ("na quarta", "até quinta"): bare, they are
# also "fourth" and "fifth", so they count only after one of these.
_PT_ORDINAL_DAYS = {"segunda": 0, "terça": 1, "quarta": 2, "quinta": 3}
_PT_BEFORE_A_DAY = r"(?:na|no|até|ate|à|para|esta|nesta|próxima|proxima)"
_MONTHS_ELSEWHERE = [
    ("janvier", "enero", "januar", "jänner", "gennaio", "janeiro", "januari", "stycznia"),
    ("février", "fevrier", "febrero", "februar", "febbraio", "fevereiro", "februari",
     "lutego"),
    ("mars", "marzo", "märz", "marz", "março", "marco", "maart", "marca"),
    ("avril", "abril", "aprile", "kwietnia"),
    ("mai", "mayo", "maggio", "maio", "mei", "maja", "maj"),
    ("juin", "junio", "juni", "giugno", "junho", "czerwca"),
    ("juillet", "julio", "juli", "luglio", "julho", "lipca"),
    ("août", "aout", "agosto", "augustus", "sierpnia", "augusti"),
    ("septembre", "septiembre", "setembro", "settembre", "września", "wrzesnia"),
    ("octobre", "octubre", "oktober", "ottobre", "outubro", "października",
     "pazdziernika"),
    ("novembre", "noviembre", "novembro", "listopada"),
    ("décembre", "decembre", "diciembre", "dezember", "dicembre", "dezembro", "december",
     "grudnia"),
]  # fmt: skip

# --- People -----------------------------------------------------------------------------------

# Capitalised words that start a capture or name a time, not a person: the verbs a capture
# starts with, pronouns and fillers, holidays, days and months (full and short, and in the
# other languages read below, but for those that are also first names).
_NOT_NAMES = {
    "I", "I'm", "I'll", "Call", "Email", "Text", "Ask", "Tell", "Remind", "Remember", "Meet",
    "Message", "Ring", "Phone", "Send", "Buy", "Book", "Pay", "Check", "Talk", "The", "A",
    "Need", "Get", "Pick", "Invite", "Thank", "Follow", "Catch", "Schedule", "Set", "Write",
    "Review", "Sign", "Transfer", "Return", "Renew", "Cancel", "Swap", "Finish", "Paint",
    "Move", "Order", "Pitch", "Apply", "Share", "Visit", "Fix", "Collect", "Drop", "Bring",
    "Take", "Give", "Lend", "Borrow", "Help", "See", "Find", "Make", "Sort", "Plan",
    "Organise", "Organize", "Arrange", "Confirm", "Update", "Reply", "Chase", "Contact",
    "Post", "Print", "Read", "Watch", "Try", "Start", "Fill", "Congratulate",
    "Today", "Tomorrow", "Tonight", "Next", "This", "Note", "Idea", "What", "Maybe", "Should",
    "Wish", "It", "We", "He", "She", "They", "My", "Our", "Don't", "Please", "Also", "And",
    "But", "If", "When", "Before", "After", "About", "For", "With", "From", "To", "An",
    "Christmas", "Easter", "Halloween", "Diwali", "Eid", "Hanukkah", "Ramadan", "New", "Year",
    "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
    *(d.title() for d in _WEEKDAYS), *(m.title() for m in _MONTHS),
    *(d.title() for days in _WEEKDAYS_ELSEWHERE for d in days),
    *(m.title() for months in _MONTHS_ELSEWHERE for m in months),
} - {"Maja", "Domingo", "Domenica"}  # fmt: skip
# Nationalities and languages ("the Lebanese place", "Thai food", "Spanish lessons").
_NATIONALITIES = {
    "American", "Argentinian", "Australian", "Austrian", "Belgian", "Brazilian", "British",
    "Canadian", "Chinese", "Colombian", "Croatian", "Cuban", "Czech", "Danish", "Dutch",
    "Egyptian", "English", "Ethiopian", "Filipino", "Finnish", "French", "Georgian", "German",
    "Ghanaian", "Greek", "Hungarian", "Indian", "Indonesian", "Iranian", "Irish", "Israeli",
    "Italian", "Jamaican", "Japanese", "Kenyan", "Korean", "Lebanese", "Malaysian", "Mexican",
    "Moroccan", "Nepalese", "Nigerian", "Norwegian", "Pakistani", "Persian", "Peruvian",
    "Polish", "Portuguese", "Romanian", "Russian", "Scottish", "Sicilian", "Spanish",
    "Swedish", "Swiss", "Syrian", "Taiwanese", "Thai", "Turkish", "Ukrainian", "Vietnamese",
    "Welsh", "Arabic", "Hindi", "Urdu", "Mandarin", "Cantonese", "Bengali", "Punjabi",
    "Tamil", "Swahili", "Yoruba", "Hebrew", "Latin", "European", "African", "Asian",
    "Caribbean", "Scandinavian", "Latino", "Mediterranean", "Balkan", "Nordic",
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
# Months that are also first names: a person when possessive ("April's birthday") or met.
_MONTH_NAMES = {"April", "May", "June", "August"}
# A word of letters, with inner hyphens or apostrophes ("Marie-Claire", "O'Neill", "Zoë").
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_POSSESSIVE = re.compile(r"['\u2019]s$")
# A capitalised word after these is a place or a firm ("in Berlin", "at Google", "the Peak").
# Not "a": Spanish and Portuguese say "a Lucía" for "to Lucía".
_PLACE_WORDS = {"in", "at", "the", "near", "via", "around", "across"}
# After "from", a place ("back from Porto") unless something came from someone ("an idea
# from Kenji"); after "to", a person ("send it to Sofia") unless someone goes there.
_FROM_A_PERSON = {
    "idea", "ideas", "message", "messages", "email", "emails", "text", "texts", "call",
    "calls", "note", "letter", "card", "gift", "present", "tip", "tips", "advice", "feedback",
    "news", "invite", "invitation", "recommendation", "word", "heard", "learned", "learnt",
    "borrow", "borrowed", "request", "reply", "voicemail",
}  # fmt: skip
_TO_A_PLACE = {
    "move", "moves", "moving", "moved", "fly", "flies", "flying", "flew", "flight", "flights",
    "go", "goes", "going", "went", "gone", "trip", "trips", "travel", "travelling",
    "traveling", "drive", "driving", "drove", "train", "trains", "walk", "walks", "walking",
    "ticket", "tickets", "return", "returning", "holiday", "holidays", "back", "relocate",
    "relocating", "emigrate", "emigrating", "commute", "bus", "ride", "road", "way", "route",
    "journey", "visit", "visiting", "cycle", "cycling", "sail", "sailing", "ferry", "coach",
    "get", "getting", "head", "heading",
}  # fmt: skip
# After a sentence's first word, these say it was a person ("Ravi is", "Chen mentioned"):
# otherwise a capitalised first word is the capture's noun ("Lunch w/ Fatima", "Coffee with").
_AFTER_A_SUBJECT = {
    "is", "was", "are", "were", "has", "had", "have", "says", "said", "wants", "wanted",
    "mentioned", "just", "loves", "loved", "likes", "liked", "prefers", "preferred", "and",
    "doesn't", "didn't", "can't", "won't", "isn't", "wasn't", "hasn't", "will", "would",
    "could", "should", "might", "needs", "needed", "thinks", "thought", "told", "asked",
    "called", "texted", "emailed", "rang", "turns", "turned", "got", "gets", "starts",
    "started", "recommended", "lent", "sent", "gave", "also", "still", "from", "owes",
    "knows", "knew", "hates", "hated", "left", "came", "comes",
    "seems", "looks", "went", "goes", "lives", "works", "invited", "offered", "suggested",
}  # fmt: skip
# Where a sentence ends, so that the next word is its first.
_SENTENCE_END = re.compile(r"[.!?;:\n]\s*$")
_MAX_NAME_WORDS = 3


def people_in(text: str) -> list[str]:
    """The people a capture names, as written, each once: full names kept whole ("Pedro
    Alves"), titles dropped, possessives read ("April's" -> "April")."""
    words = list(_WORD.finditer(text))
    names: list[str] = []
    i = 0
    while i < len(words):
        length = _name_at(text, words, i)
        if length:
            parts = [_POSSESSIVE.sub("", w.group(0)) for w in words[i : i + length]]
            name = parts[0].title() if parts[0].lower() in _FAMILY else " ".join(parts)
            if name not in names:
                names.append(name)
            i += length
        else:
            i += 1
    return names


def _name_at(text: str, words: list[re.Match[str]], i: int) -> int:
    """How many words starting at `words[i]` make one person's name (0: none)."""
    raw = words[i].group(0)
    word = _POSSESSIVE.sub("", raw)
    possessive = word != raw
    previous = words[i - 1].group(0).lower() if i else ""
    before_previous = words[i - 2].group(0).lower() if i > 1 else ""
    if word.lower() in _FAMILY:
        return 1
    if word in _MONTH_NAMES:
        return 1 if possessive or previous == "with" else 0
    if not _is_name(word) or previous in _PLACE_WORDS:
        return 0
    if previous == "from" and before_previous not in _FROM_A_PERSON:
        return 0
    if previous == "to" and before_previous in _TO_A_PLACE:
        return 0
    length = 1
    # A full name: capitalised names in a row, one space apart, up to a possessive.
    while (
        not possessive
        and length < _MAX_NAME_WORDS
        and i + length < len(words)
        and text[words[i + length - 1].end() : words[i + length].start()] == " "
        and _is_name(_POSSESSIVE.sub("", words[i + length].group(0)))
    ):
        possessive = bool(_POSSESSIVE.search(words[i + length].group(0)))
        length += 1
    starts_sentence = i == 0 or bool(_SENTENCE_END.search(text[: words[i].start()]))
    if starts_sentence and length == 1 and not possessive:
        following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
        gap = text[words[i].end() : words[i + 1].start()] if i + 1 < len(words) else ""
        # "Kwame, Ana and ..." or "Ravi is": a person; "Lunch w/ Fatima": the capture's noun.
        if following not in _AFTER_A_SUBJECT and "," not in gap and "&" not in gap:
            return 0
    return length


def _is_name(word: str) -> bool:
    return (
        len(word) > 1
        and word[0].isupper()
        and not word[1].isupper()  # "CV", "NHS": not names
        and word not in _NOT_NAMES
        and word not in _TITLES
        and word not in _NATIONALITIES
    )


# --- Due dates --------------------------------------------------------------------------------

_ENGLISH_MONTH = rf"{'|'.join(_MONTHS)}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
_MONTH_NUMBER = {
    name: number
    for number, names in enumerate(_MONTHS_ELSEWHERE, start=1)
    for name in (_MONTHS[number - 1], *names)
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
_END_OF_MONTH = re.compile(r"\bend of (?:the |this )?month\b")
_END_OF_A_MONTH = re.compile(rf"\bend of (?P<month>{'|'.join(_MONTHS)})\b")
_TODAY = re.compile(
    r"\b(?:today|tonight|hoy|hoje|oggi|heute|vandaag|dzisiaj|dziś|idag|i dag)\b"
    r"|\baujourd['\u2019]hui\b"
)
_DAY_AFTER_TOMORROW = re.compile(
    r"\b(?:day after tomorrow|pasado mañana|depois de amanhã|dopodomani|übermorgen"
    r"|overmorgen|pojutrze|övermorgon)\b|après-demain"
)
# "mañana" and "morgen" are also the morning ("por la mañana", "heute Morgen", "'s morgens").
_TOMORROW = re.compile(
    r"\b(?:tomorrow|demain|amanhã|domani|jutro|imorgon|i morgon)\b"
    r"|(?<!la )(?<!esta )\bmañana\b"
    r"|(?<!heute )(?<!guten )(?<!am )(?<!jeden )(?<!goeden )(?<!deze )\bmorgen\b"
)
_WEEKDAY_NAMED = [
    re.compile(rf"\b(?:{'|'.join(re.escape(w) for w in (english, *others))})\b")
    for english, others in zip(_WEEKDAYS, _WEEKDAYS_ELSEWHERE, strict=True)
]
_PT_DAY = re.compile(rf"\b{_PT_BEFORE_A_DAY}\s+(?P<day>{'|'.join(_PT_ORDINAL_DAYS)})\b(?!-feira)")


def due_date_in(text: str, today: date) -> date | None:
    """The date a capture names, resolved to its next occurrence on or after `today`. Vague
    times ("next week", "in February", "before winter") give none: the user can set one."""
    lowered = text.lower()
    if match := _ISO.search(lowered):
        return _valid(int(match["year"]), int(match["month"]), int(match["day"]))
    if match := _DAY_MONTH.search(lowered) or _MONTH_DAY.search(lowered):
        return _next_day_of_year(today, _month_number(match["month"]), int(match["day"]))
    if match := _END_OF_A_MONTH.search(lowered):
        month = _month_number(match["month"])
        year = today.year if month >= today.month else today.year + 1
        return date(year, month, calendar.monthrange(year, month)[1])
    # A day of the month; "her 70th" is an age, and the search goes on.
    if (match := _ORDINAL.search(lowered)) and 1 <= int(match["day"]) <= 31:
        return _next_day_of_month(today, int(match["day"]))
    if _END_OF_MONTH.search(lowered):
        return today.replace(day=calendar.monthrange(today.year, today.month)[1])
    if _DAY_AFTER_TOMORROW.search(lowered):
        return today + timedelta(days=2)
    if _TODAY.search(lowered):
        return today
    if _TOMORROW.search(lowered):
        return today + timedelta(days=1)
    for i, named in enumerate(_WEEKDAY_NAMED):
        if named.search(lowered):
            return _next_weekday(today, i)
    if match := _PT_DAY.search(lowered):
        return _next_weekday(today, _PT_ORDINAL_DAYS[match["day"]])
    return None


def _next_weekday(today: date, weekday: int) -> date:
    """The next such day after today ("friday" said on a Friday is a week on)."""
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _month_number(name: str) -> int:
    name = name.rstrip(".")
    if name in _MONTH_NUMBER:
        return _MONTH_NUMBER[name]
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
