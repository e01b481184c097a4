"""A question's words as the offline answer matches them against a capture's: stems (irregular
verbs, money words, the people around us as one term each), terms and names, the question read
(its shape, terms, names, order, and what a follow-up points back at), and who a capture names."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from shared.domain.said_dates import CALENDAR_WORDS
from shared.services.ask_run import Question, Source

# -- words and their stems ---------------------------------------------------------------------

_APOSTROPHES = "'\u2019"
_WORD = re.compile(r"[^\W_]+(?:[" + _APOSTROPHES + r"][^\W_]+)*")
_STOP_LIST = """a about above after again against all am an and any anyone anything are as
    at be been
    before being below between both but by can could did do does doing done down during each
    else ever few for from further get got had has have having he her here hers herself him
    himself his how i if in into is it its itself just know let like ll me mine more most my
    myself no nor not now of on once only or other our ours out over own re s same say
    said she should so some still such t tell than that the their theirs them then there these
    they this those through to too under until up us very was we were what whats when where
    which while who whom whos whose why will with would you your yours d m ve thing things
    happening happen going go anything something remind one ones did didn don doesn isn wasn
    currently any again stuff sort kind think thought wrote write note notes capture captures
    might must may ought
    said saying mentioned mention situation info details story deal everything"""
STOP_WORDS = frozenset(_STOP_LIST.split())


# English's irregular verbs a capture is likely to use, as their stems.
_LEMMAS = {
    "paid": "pay", "owed": "owe", "owes": "owe", "owing": "owe", "said": "say", "bought": "buy",
    "went": "go", "gone": "go", "made": "mak",
    "took": "tak", "taken": "tak", "gave": "giv", "given": "giv", "told": "tell",
    "thought": "think", "lent": "lend", "left": "leav", "met": "meet", "sent": "send",
    "spent": "spend", "kept": "keep", "found": "find", "got": "get", "ran": "run",
    "built": "build", "brought": "bring", "sold": "sell", "wrote": "writ", "written": "writ",
    "began": "begin", "begun": "begin", "chose": "choos", "chosen": "choos", "fell": "fall",
    "broke": "break", "broken": "break", "ate": "eat", "saw": "see", "seen": "see",
    "rang": "ring", "rung": "ring", "lost": "los", "heard": "hear",
    "felt": "feel", "held": "hold", "stood": "stand", "understood": "understand",
}  # fmt: skip
# Words about money: in a question, one term that any of them, or an amount, answers.
MONEY = "¤money"
_MONEY_STEMS = frozenset(
    {"ow", "owe", "pay", "money", "cost", "pric", "spend", "quot", "deposit", "cash", "bill", "fee",
     "charg", "refund", "afford", "expens", "cheap", "budget", "lend", "borrow", "debt"}
)  # fmt: skip
AMOUNT = re.compile(r"[£$€]\s?\d|\d\s?(?:eur|euros?|pounds?|dollars?|quid)\b", re.IGNORECASE)
# "how much was the hotel?" asks for money as surely as "what did the hotel cost?"; not "how
# much longer", "how much of her time" nor "how much did he weigh?".
_HOW_MUCH_MONEY = re.compile(
    r"\bhow much\b(?!\s+(?:longer|time|more|less|further|of)\b)(?!.*\bweigh)", re.IGNORECASE
)


def asks_money(question: str) -> bool:
    """Whether the question asks about money: a money word in it, or "how much" of a thing."""
    return MONEY in stems_of(question) or bool(_HOW_MUCH_MONEY.search(question))


# Words for the people around us that mean the same (after stem): one term for each. A capture
# says "next door" where a question says "neighbour" (in `stems_of`).
_SAME_PERSON = {
    "neighbor": "neighbour", "mom": "mum", "moth": "mum", "mam": "mum", "mummy": "mum",
    "fath": "dad", "daddy": "dad", "children": "kid", "child": "kid", "grandma": "gran",
    "granny": "gran", "nan": "gran", "grandmoth": "gran", "grandfath": "grandpa",
    "granddad": "grandpa", "grandad": "grandpa",
}  # fmt: skip
_NEXT_DOOR = re.compile(r"\bnext[\s-]door\b", re.IGNORECASE)


_DOUBLED = re.compile(r"([bdgmnprt])\1$")

# A day or month as a phone shortens it, matched as the word written out: "fri 11th" holds
# "Friday", "3 dec" "December" (not "may", a word of its own).
_CALENDAR_SHORT = {
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
    "weds": "wednesday", "thu": "thursday", "thur": "thursday", "thurs": "thursday",
    "fri": "friday", "sat": "saturday", "sun": "sunday", "jan": "january", "feb": "february",
    "mar": "march", "apr": "april", "jun": "june", "jul": "july", "aug": "august",
    "sep": "september", "sept": "september", "oct": "october", "nov": "november",
    "dec": "december",
}  # fmt: skip


def stem(word: str) -> str:
    """A word as it is matched: casefolded, accents off, a plural or -ing/-ed/-er off."""
    w = "".join(
        c for c in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(c)
    )
    w = _CALENDAR_SHORT.get(bare_word(w), bare_word(w))
    if w in _LEMMAS:
        return _LEMMAS[w]
    for suffix in ("ing", "ers", "ies", "ied", "er", "ed", "es", "s"):
        base = w[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
        if w.endswith(suffix) and len(base) >= 3:  # "bus" and "red" stay whole
            w = base
            if suffix in ("ing", "ed") and len(w) > 4 and _DOUBLED.search(w):
                # "shopping" is "shop", "planned" "plan"; "falling" stays "fall", and
                # "wedding" "wedd" (not "wed", Wednesday).
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return _SAME_PERSON.get(w, w)


def bare_word(word: str) -> str:
    """A word without its 's or 're: "who's" is "who", "Priya's" is "Priya"."""
    return re.split(f"[{_APOSTROPHES}]", word)[0]


def words_of(text: str) -> list[str]:
    """A text's words, each with its apostrophe ("Priya's", "who's")."""
    return _WORD.findall(text)


def stems_of(text: str) -> set[str]:
    """The stems of `text`'s words, and MONEY where it speaks of money or names an amount."""
    found = {stem(w) for w in words_of(text)}
    if found & _MONEY_STEMS or AMOUNT.search(text):
        found.add(MONEY)
    if _NEXT_DOOR.search(text):
        found.add("neighbour")
    return found


# The people around us, that a capture may name instead of a name (as their stems).
_RELATION_WORDS = """mum dad sister brother wife husband partner boyfriend girlfriend boss friend
    neighbour aunt uncle cousin son daughter gran grandpa kid landlord landlady colleague
    nephew niece doctor"""
_RELATIONS = frozenset(stem(word) for word in _RELATION_WORDS.split())


# -- the question read ------------------------------------------------------------------------

Shape = Literal["who", "what", "when", "due", "next", "count", "latest"]

_SHAPE_LIST = """many much often times latest last newest recent recently next due deadline when day
    date time week weeks today tomorrow yesterday month soon new news update updates status
    originally original initially first settle settled decide decided finally final eventually
    current supposed days plan plans progress"""
_SHAPE_WORDS = frozenset(_SHAPE_LIST.split())
_FOLLOW_UP = re.compile(
    r"^\s*(and|also|but|so|what about|how about|and what|and who|and when)\b|"
    r"\b(it|that|this|they|them|there|he|she|her|his|him|those|these)\b",
    re.IGNORECASE,
)


def shape_of(text: str) -> Shape:
    """What kind of answer the question wants, from its words."""
    q = text.casefold()
    if re.search(r"\bhow (many|often)\b|\bnumber of\b", q):
        return "count"
    if re.search(r"\b(due|deadline|owe|overdue|by when)\b", q):
        return "due"
    if re.search(r"\bwhen\b|\bwhat (day|date|time)\b", q):
        return "when"
    if re.search(r"\bnext\b|\bto do\b|\btodo\b", q):
        return "next"
    if re.search(r"\b(latest|newest|most recent|last|now|currently|still)\b", q):
        return "latest"
    if re.search(r"\bwho\b|\bwhom\b|\bwhose\b", q):
        return "who"
    return "what"


def _terms(text: str) -> list[str]:
    """The question's words that say what it is about (not how it asks)."""
    out = []
    for word in words_of(text):
        folded = bare_word(word).casefold()
        if folded in STOP_WORDS or folded in _SHAPE_WORDS or len(folded) < 2 or folded.isdigit():
            continue
        out.append(word)
    return list(dict.fromkeys(out))


# A day or month written out is capitalised and names no one ("who's covering my Friday shift?",
# "who's hosting in January?"): read as a name, it would be what every capture weighed must hold.
# The short forms ("Sat", "Jan", "Sun") can be people and stay names.
_CALENDAR_NAMES = frozenset(w for w in CALENDAR_WORDS if len(w) > 4)


def _names(text: str) -> list[str]:
    """Capitalised words not opening a sentence (nor a day or month written out): the people a
    question may name."""
    names = []
    for match in _WORD.finditer(text):
        word = match.group()
        before = text[: match.start()].rstrip()
        opens = not before or before[-1] in ".?!"
        folded = bare_word(word).casefold()
        if (
            word[:1].isupper()
            and not opens
            and folded not in STOP_WORDS | _CALENDAR_NAMES
            and word != "I"
        ):
            names.append(bare_word(word))
    return list(dict.fromkeys(names))


def term_of(word: str) -> str:
    """A question's word as the term it is matched by (any money word: MONEY)."""
    stemmed = stem(word)
    return MONEY if stemmed in _MONEY_STEMS else stemmed


@dataclass(frozen=True)
class Asked:
    """A question read: its shape, its terms (with weights: a term carried from an earlier
    turn counts half), the names it mentions (`own_names`: in its own words), which capture
    answers where several speak of it (`order`: the newest, unless it asks how it was at
    first), and, for a follow-up that points back ("how much was it?"), the words the last
    answer quoted (`referents`)."""

    shape: Shape
    terms: dict[str, float]
    names: list[str]
    words: list[str]  # what to search for, as written
    own_names: tuple[str, ...] = ()
    who: bool = False  # asks who (whatever its shape: "who's doing it now?")
    order: Literal["newest", "oldest", "default"] = "default"
    referents: tuple[str, ...] = ()
    before: str = ""  # a follow-up's earlier question, whose subject it carries
    history: bool = False  # asks how something changed: every step, not only the newest


# A question that asks how things stand now, or how they ended; and one that asks how they were
# at first.
_NOW = re.compile(
    r"\b(now|latest|newest|most recent|currently|current|still|in the end|finally|final|"
    r"settled?|decided?|ended up|eventually|so far|these days)\b",
    re.IGNORECASE,
)
# A question that asks how something changed over time ("how has the quote changed since the
# start of the month?"; not "why did it change?" nor "how much did the change cost?").
_HISTORY = re.compile(
    r"^\W*how\b(?!\s+(?:much|many|long|often|far)\b).*\bchang(?:e|ed|es|ing)\b", re.IGNORECASE
)
# The words that frame such a question, not what it is about.
_HISTORY_FRAME = re.compile(
    r"\b(?:chang(?:e|ed|es|ing)|since|over|start|beginning|month|first|time)\b",
    re.IGNORECASE,
)
_AT_FIRST = re.compile(
    r"\b(originally|original|initially|at first|first|used to|to begin with|at the start)\b",
    re.IGNORECASE,
)
# A follow-up that points back at what was just said.
_POINTS_BACK = re.compile(
    r"\b(it|that|this|he|she|him|her|his|hers|they|them|their|those|these)\b", re.IGNORECASE
)
_QUOTED = re.compile(r"\u201c([^\u201d]{8,})\u201d")


def read_question(question: Question) -> Asked:
    """The question, with a follow-up's subject taken from the thread's last question ("and
    who's doing the tiles?" after "what's happening with the kitchen?") and, when it points
    back ("when is it?"), the captures the last answer quoted."""
    own_text = re.sub(r"\bin the end\b", " ", question.text, flags=re.IGNORECASE)
    history = bool(_HISTORY.search(question.text))
    if history:
        # "how has the quote changed since the start of the month?" is about the quote.
        own_text = _HISTORY_FRAME.sub(" ", own_text)
    own = _terms(own_text)
    terms = {term_of(t): 1.0 for t in own}
    if _HOW_MUCH_MONEY.search(question.text):
        terms.setdefault(MONEY, 1.0)
    words = list(own)
    names = _names(question.text)
    own_names = tuple(names)
    earlier = [t.content or "" for t in question.earlier if t.role == "user"]
    referents: tuple[str, ...] = ()
    before = ""
    if earlier and (_FOLLOW_UP.search(question.text) or len(own) <= 1):
        before = earlier[-1]
        for word in _terms(before):
            if term_of(word) not in terms:
                terms[term_of(word)] = 0.5
                words.append(word)
        names += [n for n in _names(before) if n not in names]
        answers = [t.content or "" for t in question.earlier if t.role == "assistant"]
        if answers and _POINTS_BACK.search(question.text):
            quotes = [q.strip(" …") for q in _QUOTED.findall(answers[-1]) if q.strip(" …")]
            referents = tuple(" ".join(q.split()).casefold() for q in quotes)
    if _AT_FIRST.search(question.text):
        order: Literal["newest", "oldest", "default"] = "oldest"
    elif _NOW.search(question.text):
        order = "newest"
    else:
        order = "default"
    who = bool(re.search(r"\bwho(?:m|se)?\b", question.text, re.IGNORECASE))
    return Asked(
        shape_of(question.text),
        terms,
        names,
        words,
        own_names,
        who,
        order,
        referents[:1],
        before,
        history,
    )


def weight_of(asked: Asked, text: str) -> float:
    """How much of the question `text` speaks of (the terms' weights it holds)."""
    have = stems_of(text)
    return sum(w for t, w in asked.terms.items() if t in have)


# -- who a capture names ----------------------------------------------------------------------


def people_named(asked: Asked, source: Source) -> set[str]:
    """Who a capture names: its filed people, and capitalised words that are not what the
    question is about ("Marco pulled out. Kuba is doing the tiles": Marco and Kuba)."""
    named = {p.casefold() for p in source.people}
    for word in words_of(source.text):
        folded = word.casefold()
        calendar = folded in CALENDAR_WORDS  # not "Marco" for "mar", nor "Sunil" for "sun"
        if (
            word[:1].isupper()
            and folded not in STOP_WORDS
            and not calendar
            and (stem(word) not in asked.terms)
        ):
            named.add(folded)
    # "dad found someone", "my sister is": people named by who they are to the user.
    named |= (stems_of(source.text) & _RELATIONS) - set(asked.terms)
    return named - {"i"} - {n.casefold() for n in asked.names}
