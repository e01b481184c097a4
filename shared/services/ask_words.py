"""How ask reads words, a question's and a capture's alike: stems (plurals, -ing/-ed, a noun
made of a verb, irregular verbs), the words that say nothing of what is asked, money, and the
people around us by who they are."""

from __future__ import annotations

import re
import unicodedata

from shared.domain.said_dates import CALENDAR_WORDS, month_of

APOSTROPHES = "'\u2019"
WORD = re.compile(r"[^\W_]+(?:[" + APOSTROPHES + r"][^\W_]+)*")
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
STOP = frozenset(_STOP_LIST.split())
_SHAPE_LIST = """many much often times latest last newest recent recently next due deadline when day
    date time week weeks today tomorrow yesterday month soon new news update updates status
    originally original initially first settle settled decide decided finally final eventually
    current supposed days plan plans progress"""
SHAPE_WORDS = frozenset(_SHAPE_LIST.split())


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
MONEY_STEMS = frozenset(
    {"ow", "owe", "pay", "money", "cost", "pric", "spend", "quot", "deposit", "cash", "bill", "fee",
     "charg", "refund", "afford", "expens", "cheap", "budget", "lend", "borrow", "debt"}
)  # fmt: skip
AMOUNT = re.compile(r"[£$€]\s?\d|\d\s?(?:eur|euros?|pounds?|dollars?|quid)\b", re.IGNORECASE)


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
# A noun made of a verb, as the verb: "completion" is "complete", "payment" "pay",
# "inspections" "inspect", "insurance" "insure".
_DERIVED = re.compile(r"(?<=[ts])ions?$|(?<=[ts])ion(?=s$)|ments?$|[ae]nces?$")


def stem(word: str) -> str:
    """A word as it is matched: casefolded, accents off, a plural or -ing/-ed/-er off."""
    w = "".join(
        c for c in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(c)
    )
    w = bare(w)
    if w in _LEMMAS:
        return _LEMMAS[w]
    w = _DERIVED.sub("", w) if len(_DERIVED.sub("", w)) >= 3 else w
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


def bare(word: str) -> str:
    """A word without its 's or 're: "who's" is "who", "Priya's" is "Priya"."""
    return re.split(f"[{APOSTROPHES}]", word)[0]


def words_of(text: str) -> list[str]:
    return WORD.findall(text)


def terms_of(text: str) -> list[str]:
    """The question's words that say what it is about (not how it asks)."""
    out = []
    for word in words_of(text):
        folded = bare(word).casefold()
        if folded in STOP or folded in SHAPE_WORDS or len(folded) < 2 or folded.isdigit():
            continue
        if month_of(word) is not None:
            continue  # a month asked of is what a capture's dates say (`_in_months`)
        out.append(word)
    return list(dict.fromkeys(out))


def names_of(text: str) -> list[str]:
    """Capitalised words not opening a sentence: the people a question may name."""
    names = []
    for match in WORD.finditer(text):
        word = match.group()
        before = text[: match.start()].rstrip()
        opens = not before or before[-1] in ".?!"
        folded = bare(word).casefold()
        calendar = folded in CALENDAR_WORDS  # "in January", "on Friday": not a person
        if word[:1].isupper() and not opens and folded not in STOP and not calendar and word != "I":
            names.append(bare(word))
    return list(dict.fromkeys(names))


def term_of(word: str) -> str:
    """A question's word as the term it is matched by (any money word: MONEY)."""
    stemmed = stem(word)
    return MONEY if stemmed in MONEY_STEMS else stemmed


def stems_of(text: str) -> set[str]:
    """The stems of `text`'s words, and MONEY where it speaks of money or names an amount."""
    found = {stem(w) for w in words_of(text)}
    if found & MONEY_STEMS or AMOUNT.search(text):
        found.add(MONEY)
    if _NEXT_DOOR.search(text):
        found.add("neighbour")
    return found


# The people around us, that a capture may name instead of a name (as their stems).
_RELATION_WORDS = """mum dad sister brother wife husband partner boyfriend girlfriend boss friend
    neighbour aunt uncle cousin son daughter gran grandpa kid landlord landlady colleague
    nephew niece doctor"""
RELATIONS = frozenset(stem(word) for word in _RELATION_WORDS.split())
