"""What a question asks for (an amount, a time, a count, a name) and whether the captures an
answer rests on hold one: a capture about the question's subject that says none ("What did the
surveyor charge?" for "the surveyor was here 2 hrs") does not answer it."""

from __future__ import annotations

import re
from typing import Literal

from shared.services.ask_run import Source
from shared.services.ask_words import AMOUNT, Asked, asks_money, people_named

Kind = Literal["amount", "time", "count", "name"]

# "how much …" about money (`asks_money`: "how much is he charging?", "how much was the
# hotel?"; not "how much did he weigh?"), or "what … cost / charge / price / fee / quote".
_HOW_MUCH = re.compile(r"\bhow much\b", re.IGNORECASE)
_WHAT_PRICE = re.compile(
    r"\bwhat\b.*\b(?:cost|costs|costing|price|priced|charge|charges|charged|charging|fees?|"
    r"quote|quoted|quoting)\b",
    re.IGNORECASE,
)
_WHAT_TIME = re.compile(r"\bwhat time\b", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow many\b", re.IGNORECASE)
# Who, or a name: "what's the name of the surgeon?", "what's Lorna's fiancé called?".
_A_NAME = re.compile(r"\bname of\b|\bcalled\b|\bwho\b|\bwhose\b", re.IGNORECASE)

# The role a name is asked for: "the name of the surgeon who …", "Lorna's fiancé called", "the
# Dell engineer's name": one of the captures that name someone must say it too.
_ROLE_AFTER = re.compile(r"\bname of (?:the |my |our |a |\w+'s )?(\w+)", re.IGNORECASE)
_ROLE_BEFORE = re.compile(r"(\w+)(?:'s)? (?:called|name)\b", re.IGNORECASE)
_NOT_A_ROLE = frozenset(
    {"who", "what", "whats", "is", "was", "the", "his", "her", "their", "its", "it", "they", "he",
     "she", "you", "i"}
)  # fmt: skip
# Letters a word must share from its start with the role ("tiler" and "tiles", "lads" and "lad").
_ROLE_LETTERS = 4

# What a capture holds. Generous on purpose: an answer is blanked only where none is there.
# An amount as ask_words reads one ("£450", "40 quid"), or a figure a capture writes bare
# ("kev's quote 38500", "39,800", "12.50").
_FIGURE = re.compile(r"\d\s?(?:grand|k)\b|\d[\d,]*\.\d\d\b|\b\d{2,}[\d,]*\b", re.IGNORECASE)
_TIME = re.compile(
    r"\b\d{1,2}(?:[:.]\d{2})?\s?(?:am|pm)\b|\b\d{1,2}[:.]\d{2}\b|\bnoon\b|\bmidday\b|"
    r"\bmidnight\b|\bo'?clock\b|\bquarter (?:past|to)\b|\bhalf (?:past|\d|one|two|three|four|"
    r"five|six|seven|eight|nine|ten|eleven|twelve)\b",
    re.IGNORECASE,
)
_COUNT = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|twenty|"
    r"thirty|forty|fifty|hundred|once|twice|a couple|both|all|none|no one|nobody)\b",
    re.IGNORECASE,
)
_HOLDS = {"time": _TIME, "count": _COUNT}


def asked_for(question: str) -> list[Kind]:
    """The kinds of thing `question` asks for, if any ("what's happening with the kitchen?"
    asks for none)."""
    kinds: list[Kind] = []
    if (_HOW_MUCH.search(question) and asks_money(question)) or _WHAT_PRICE.search(question):
        kinds.append("amount")
    if _WHAT_TIME.search(question):
        kinds.append("time")
    if _HOW_MANY.search(question):
        kinds.append("count")
    if _A_NAME.search(question):
        kinds.append("name")
    return kinds


def holds(asked: Asked, source: Source, kind: Kind) -> bool:
    """Whether the capture holds a thing of that kind (a name: someone the question does not
    name already)."""
    if kind == "name":
        return bool(people_named(asked, source))
    if kind == "amount":
        return bool(AMOUNT.search(source.text) or _FIGURE.search(source.text))
    return bool(_HOLDS[kind].search(source.text))


def role(question: str) -> str | None:
    """The role whose name the question asks ("surgeon", "fiancé"), if it says one."""
    m = _ROLE_AFTER.search(question) or _ROLE_BEFORE.search(question)
    word = m[1].casefold() if m else None
    return word if word and word not in _NOT_A_ROLE and len(word) > 2 else None


def _says(source: Source, word: str) -> bool:
    start = word[:_ROLE_LETTERS]
    return any(w.startswith(start) for w in re.findall(r"\w+", source.text.casefold()))


def unanswered(asked: Asked, question: str, chosen: list[Source]) -> bool:
    """Whether the question asks for a kind of thing that none of `chosen` holds (a name asked
    for by its role: one that names someone and says the role)."""
    for kind in asked_for(question):
        holding = [s for s in chosen if holds(asked, s, kind)]
        wanted = role(question) if kind == "name" else None
        if wanted:
            holding = [s for s in holding if _says(s, wanted)]
        if not holding:
            return True
    return False
