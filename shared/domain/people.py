"""The people a capture names (`people_in`), read word by word: a title and a surname, a
kinship word and a name, a family word, or a name written capitalised (capitalised_names.py)
or in lowercase (lowercase_names.py)."""

from __future__ import annotations

import re

from shared.domain.calendar_words import TIME_WORDS
from shared.domain.capitalised_names import TITLE_WORDS, is_name, name_at
from shared.domain.lowercase_names import (
    a_surname_after,
    cued_as_a_person,
    lowercase_name_at,
    plain_name,
)
from shared.domain.people_history import with_known
from shared.domain.people_lexicon import (
    a_past_form,
    a_word,
    english_words,
    everyday_word,
    first_names,
    in_word_list,
    known_name,
    places,
    plainly_a_name,
    surnames,
)
from shared.domain.people_words import (
    A_PERSONS_VERBS,
    CLAUSE_BREAK,
    COMMON,
    FAMILY,
    IRREGULAR_PASTS,
    KIN,
    LOWER_NOT_NAMES,
    OBJECTS,
    POSSESSIVE,
    capitalised,
    gap_after,
    named_at,
)

# A word of letters, with inner hyphens or apostrophes ("Marie-Claire", "O'Neill", "Zoë").
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
# Titles written in lowercase ("mr okafor", "dr bhatt"); not "miss", also a verb.
_LOWER_TITLES = {"mr", "mrs", "ms", "mx", "dr", "prof", "cllr", "herr", "frau", "sra"}
# Titles said only before a surname: after them even a word is one ("mrs harries", "herr
# gruber"); "dr" and "prof" also come before a thing ("dr appt").
_SURNAME_TITLES = _LOWER_TITLES - {"dr", "prof"}
# A capital inside a word, as brands and degrees are written ("ClearView", "PhD"), but after
# the prefixes of names ("McAllister", "MacLeod", "DeShawn", "LaToya", "DiMaggio", "VanDyke").
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_NAME_PREFIX = re.compile(r"(?:Mc|Mac|De|Di|Da|Du|La|Le|Van|Von)[A-Z]")
# "stephen mccracken" -> "Stephen McCracken", as the surname is written.
_GAELIC_PREFIX = re.compile(r"\b(Mc)([a-z])(?=[a-z]{2})")
_FAMILY_PLURALS = {"mums", "moms", "dads", "mams"}  # "mums hip op": Mum's
# Before a family word, someone else's relative, not the user's ("his mum", "Yusuf's dad").
_SOMEONE_ELSES = {"his", "her", "their", "your", "its", "su", "sus", "seine", "ihre", "sa", "son"}


def people_in(text: str, known: frozenset[str] = frozenset()) -> list[str]:
    """The people a capture names, as a person would list them, each once: full names kept
    whole ("Pedro Alves"), kinship words with the name ("Granny Maeve"), titles dropped,
    possessives read ("April's" -> "April"), lowercase names capitalised where the sentence
    says a person stands there ("ravi says", "ask priya", "dani's car"). `known`: the names
    the user's earlier captures said with a strong cue (people_history.py), read wherever the
    capture spells them ("harj board paper fri" once "Harj says" was filed)."""
    words = list(_WORD.finditer(text))
    named = named_at(text)
    spans: dict[int, tuple[int, str]] = {}
    last_end = -1
    i = 0
    while i < len(words):
        length, name = _person_at(text, words, i, last_end, named)
        if length == 1 and name.lower() not in FAMILY and _beside_a_place(words, i):
            length = 0  # "cambridge to ely", "leicester or bradford": a route, a choice of towns
        if length == 1 and _after_a_things_capital(text, words, i, spans):
            length = 0  # "Bristol Old Vic", "Direct Line", "Hound Tor": the end of a thing's name
        if length and _a_firms_plural(text, words, i, length):
            length = 0  # "Arnold Clark have a Skoda", "Evans have the bike": a firm
        if length:
            spans[i] = (length, name)
            last_end = i + length
            i += length
        else:
            i += 1
    # A word read as a name in one place is that name wherever else it is written.
    covered = {j for i, (length, _) in spans.items() for j in range(i, i + length)}
    read = {n.lower(): n for _, n in spans.values() if " " not in n and n.lower() not in FAMILY}
    for j, match in enumerate(words):
        word = POSSESSIVE.sub("", match.group(0))
        if j not in covered and word.lower() in read and word.lower() not in COMMON:
            spans[j] = (1, read[word.lower()])
    names: list[str] = []
    for i in sorted(spans):
        name = _GAELIC_PREFIX.sub(lambda m: m.group(1) + m.group(2).upper(), spans[i][1])
        if name not in names:
            names.append(name)
    # "Fwd from Tricia Sowerby: '... Thanks, Tricia'": a first name alone is the full name's.
    firsts = {n.split()[0] for n in names if " " in n and n.split()[0].lower() not in KIN}
    names = [n for n in names if " " in n or n not in firsts]
    return with_known(text, names, known)


def _person_at(
    text: str, words: list[re.Match[str]], i: int, last_end: int, named: frozenset[int]
) -> tuple[int, str]:
    """How many words starting at `words[i]` make one person's name (0: none), and the name;
    `named`: where a word starts that the capture says someone is called (`named_at`)."""
    raw = words[i].group(0)
    word = POSSESSIVE.sub("", raw)
    low = word.lower()
    if low == "valentine" and raw != word:
        return 0, ""  # "Valentine's table", "valentine's next yr": the day, no one's
    if raw in _LOWER_TITLES and i + 1 < len(words) and gap_after(text, words, i) == " ":
        following = POSSESSIVE.sub("", words[i + 1].group(0))
        # "mr okafor", "dr bhatt": a surname whatever its case, unless a word ("dr appt").
        if (
            following == following.lower()
            and plain_name(following, words, i + 1, after_a_title=True)
            and (
                raw in _SURNAME_TITLES
                or not everyday_word(following)
                # "dr fee's surgery", "dr wicks says": a word said of a doctor
                or _said_after(text, words, i + 1)
            )
            and not _glued_to_a_number(text, words, i + 1)
        ):
            return 2, capitalised(following)
    if raw == "miss" and i + 1 < len(words) and gap_after(text, words, i) == " ":
        following = POSSESSIVE.sub("", words[i + 1].group(0))
        # "w miss rowlands", "says miss hendry": a teacher's surname, not "miss tirion's gala"
        if (
            following == following.lower()
            and following in surnames()
            and not in_word_list(following)
            and first_names().get(following) in {None, "r"}
            and following == words[i + 1].group(0)
        ):
            return 2, capitalised(following)
    if low in KIN and raw == word and i + 1 < len(words) and gap_after(text, words, i) == " ":
        following = POSSESSIVE.sub("", words[i + 1].group(0))
        last = i + 2 == len(words) and following == words[i + 1].group(0)
        # "Auntie Win", "uncle terry" at the end too; not "nan died" or "für Oma kaufen":
        # after a family word that names someone alone, an everyday word is no name.
        if (
            is_name(following)
            or (
                # "grandad con's party": a name whatever else the word is, before "'s"
                low in FAMILY
                and known_name(following)
                and following != words[i + 1].group(0)
                and following not in OBJECTS | _SOMEONE_ELSES
            )
            or (
                plain_name(following, words, i + 1)
                and (
                    (low not in FAMILY and not _a_verbs_past(following))
                    or not everyday_word(following)
                    # "grandad con's party", "grandad con did a speech": a name that is a word
                    or (known_name(following) and _said_after(text, words, i + 1))
                )
                and (not last or plainly_a_name(following))
            )
        ):
            return 2, f"{capitalised(word)} {capitalised(following)}"
    if low in FAMILY or (low in _FAMILY_PLURALS and raw == word):
        if low in _FAMILY_PLURALS and _after_a_modifier(text, words, i):
            return 0, ""  # "the cricket mums", "Welsh speaking mums": mothers, not Mum's
        if _someone_elses(text, words, i):
            if (relative := _a_relatives_name(text, words, i)) is not None:
                return 2, relative  # "quique's dad salva", "Margalida's dad Pep": his name
            return 0, ""
        return 1, low.rstrip("s").title() if low in _FAMILY_PLURALS else low.title()
    if (  # "called her Ada", "is called kit", "a little girl, Ivy"
        named
        and words[i].start() in named
        and word.isalpha()
        and low not in COMMON | OBJECTS | FAMILY
        and (word[:1].isupper() or known_name(word))
        and not word[1:2].isupper()
    ):
        if (  # "someone called Coral Nixon", "is called Margaux Lenoir": the full name
            word == raw
            and word[:1].isupper()
            and i + 1 < len(words)
            and gap_after(text, words, i) == " "
            and is_name(surname := POSSESSIVE.sub("", words[i + 1].group(0)))
        ):
            return 2, f"{word} {surname}"
        return max(name_at(text, words, i, last_end), 1), capitalised(word)
    if low.endswith("s") and _a_german_genitive(text, words, i):  # "Veronikas Hochzeit"
        return 1, capitalised(word[:-1])
    if word[:1].isupper():
        if (  # "REUBEN PASSED", "GAIL SIGNED IT": a name many bear, shouted, and no word
            len(word) > 3
            and word.isupper()
            and word.isalpha()
            and plainly_a_name(word, common_too=False)
            and not in_word_list(low)
        ):
            return 1, word.title()
        if _glued_to_a_number(text, words, i):
            return 0, ""  # "Jet2", "Win11": a product, not a person
        if _INNER_CAPITAL.search(word) and not _NAME_PREFIX.match(word):
            return 0, ""  # "ClearView", "PhD", "FreeAgent": a brand or a title, not a person
        length = name_at(text, words, i, last_end)
        parts = [POSSESSIVE.sub("", w.group(0)) for w in words[i : i + length]]
        return length, " ".join(parts)
    if (  # "tell alasdair munro", "alasdair munro says": a full name no lexicon lists
        raw == word
        and word == low
        and not in_word_list(low)
        and not known_name(word)
        and a_surname_after(text, words, i)
        and plain_name(word, words, i)
        and cued_as_a_person(text, words, i, i + 2)
    ):
        surname = POSSESSIVE.sub("", words[i + 1].group(0))
        return 2, f"{capitalised(word)} {capitalised(surname)}"
    if (  # "heather gunn wants", "feedback from heather gunn": a name that is also a word,
        # before a surname that is none, where the sentence says a person stands there
        raw == word
        and word == low
        and first_names().get(low) == "w"
        and len(word) > 3
        and i + 1 < len(words)
        and gap_after(text, words, i) == " "
        and _a_plain_surname(POSSESSIVE.sub("", words[i + 1].group(0)))
        and cued_as_a_person(text, words, i, i + 2)
    ):
        surname = POSSESSIVE.sub("", words[i + 1].group(0))
        return 2, f"{capitalised(word)} {capitalised(surname)}"
    if lowercase_name_at(text, words, i, last_end):
        if raw == word and plainly_a_name(word) and a_surname_after(text, words, i):
            surname = POSSESSIVE.sub("", words[i + 1].group(0))
            return 2, f"{capitalised(word)} {capitalised(surname)}"  # "alasdair munro"
        return 1, capitalised(word)
    return 0, ""


def _a_plain_surname(word: str) -> bool:
    """A lowercase surname of the list that is no English word nor a name many bear ("gunn",
    "okafor"; not "good", "land")."""
    return (
        word == word.lower()
        and len(word) > 2
        and word in surnames()
        and not in_word_list(word)
        and word not in COMMON
    )


# The plural of a verb: after one name, a firm's ("Arnold Clark have", "Evans have"), as
# British English speaks of a firm; a person's only as one of a pair ("owen and faye want").
_PLURAL_VERBS = {
    "have", "are", "were", "want", "need", "say", "don't", "dont", "aren't", "arent",
    "haven't", "havent", "weren't", "werent",
}  # fmt: skip
_PAIRED = re.compile(r"[+&/]|\b(?:and|y|und|et|e|or|with|w)\b|,\s*$", re.IGNORECASE)


# What starts a sentence, whose first word is capitalised whatever it is ("Ask Priya").
_SENTENCE_START = re.compile(r"[.!?\n:;'\"\u2018\u201c(\[]|[^\w\s,'\u2019&+/-]")


def _after_a_things_capital(
    text: str, words: list[re.Match[str]], i: int, spans: dict[int, tuple[int, str]]
) -> bool:
    """Is `words[i]` right after a capitalised word the rules left, inside a sentence ("book
    Bristol Old Vic tickets", "Direct Line letter", "Lanternfish Press"): the rest of a
    thing's name? Not after a sentence's first word (after a full stop, a colon, a quote or
    an emoji), a title, a kinship or family word, nor
    a name ("Oma Gerti", "Professor Lindqvist")."""
    if i < 2 or gap_after(text, words, i - 1) != " " or (i - 1) in spans:
        return False
    before = words[i - 1].group(0)
    if not before[:1].isupper() or POSSESSIVE.search(before) or not before.isalpha():
        return False
    if before.lower() in KIN | FAMILY | TITLE_WORDS or known_name(before):
        return False
    return not _SENTENCE_START.search(gap_after(text, words, i - 2))


def _a_firms_plural(text: str, words: list[re.Match[str]], i: int, length: int) -> bool:
    """Is the name at `words[i : i + length]` the subject of a plural verb with no partner
    before it ("Arnold Clark have it ready"; not "owen and faye want", "Mitch + Jess have")?"""
    j = i + length
    if j >= len(words) or gap_after(text, words, j - 1) != " ":
        return False
    if words[j].group(0).lower() not in _PLURAL_VERBS or POSSESSIVE.search(words[j - 1].group(0)):
        return False
    # "Beatriz and her husband Joaquim are": a partner a few words back.
    before = text[words[max(i - 3, 0)].start() : words[i].start()] if i else ""
    return not _PAIRED.search(before)


def _beside_a_place(words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` one end of a route or a choice whose other end is a town ("Brampton to
    Carlisle", "leicester or bradford", "Ely or Cambridge")?"""
    if i > 1 and words[i - 1].group(0).lower() in {"to", "or"} and _a_town(words[i - 2]):
        return True
    return i + 2 < len(words) and words[i + 1].group(0) in {"to", "or"} and _a_town(words[i + 2])


def _a_town(match: re.Match[str]) -> bool:
    """A town of the places list that is no everyday word ("cambridge", not "wedding")."""
    low = match.group(0).lower()
    return low in places() and not in_word_list(low)


def _someone_elses(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the family word `words[i]` someone else's relative ("his mum", "Yusuf's dad", "la
    mamá de lorena")?"""
    if i + 2 < len(words) and words[i + 1].group(0).lower() in {"de", "von", "di", "du"}:
        return True  # "la mamá de lorena", "die Mama von Jonas"
    if i == 0:
        return False
    before = words[i - 1].group(0)
    if gap_after(text, words, i - 1) != " ":
        return False
    return before.lower() in _SOMEONE_ELSES or (
        bool(POSSESSIVE.search(before)) and before.lower() not in {"it's", "that's", "what's"}
    )


# Before a plural family word, what makes it "Mum's" still ("for mums walker", "to dads").
_BEFORE_MUMS = {"for", "to", "at", "w", "with", "from", "about", "ring", "call", "text", "and"}


def _after_a_modifier(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the plural family word `words[i]` after a word that describes them, in the same
    phrase ("the cricket mums", "loads of Welsh speaking mums"), so mothers, not the user's?"""
    if i == 0 or gap_after(text, words, i - 1) != " ":
        return False
    before = words[i - 1].group(0)
    return before.lower() not in _BEFORE_MUMS | _SOMEONE_ELSES and before.isalpha()


def _a_verbs_past(word: str) -> bool:
    """Is the lowercase `word` an everyday verb's past and no name ("threw", "cooked")?"""
    return word == word.lower() and a_word(word) and (word in IRREGULAR_PASTS or a_past_form(word))


def _a_relatives_name(text: str, words: list[re.Match[str]], i: int) -> str | None:
    """The name right after someone else's family word, in apposition ("quique's dad salva
    had a scan", "Margalida's dad Pep is"): a first name the lists hold that is no word, or a
    capitalised word that is no day, month or common word; None where there is none."""
    if i + 1 >= len(words) or gap_after(text, words, i) != " ":
        return None
    raw = words[i + 1].group(0)
    word = POSSESSIVE.sub("", raw)
    low = word.lower()
    if not word.isalpha() or low in COMMON | OBJECTS | FAMILY | KIN | TIME_WORDS:
        return None
    if word == low:
        return capitalised(word) if first_names().get(low) in {"", "r"} else None
    if word[1:] == low[1:] and not known_name(word) and in_word_list(low) and not raw.endswith("s"):
        # "her dad Pep": a capitalised word the list holds is his name only before a verb
        following = words[i + 2].group(0).lower() if i + 2 < len(words) else ""
        return word if following in A_PERSONS_VERBS else None
    return word if word[1:] == low[1:] else None


def _said_after(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` possessive, or followed by a verb only a person does or by a verb's
    past ("con's party", "con did a speech", "dean found rot")?"""
    if POSSESSIVE.search(words[i].group(0)):
        return True
    if i + 1 >= len(words) or CLAUSE_BREAK.search(gap_after(text, words, i)):
        return False
    following = words[i + 1].group(0).lower()
    return following in A_PERSONS_VERBS or a_past_form(following)


def _glued_to_a_number(text: str, words: list[re.Match[str]], i: int) -> bool:
    end = words[i].end()
    return end < len(text) and text[end].isdigit()


def _a_german_genitive(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` a known first name with German's genitive "s", before a word of no
    English list or a number ("Veronikas Hochzeit", "manfreds rückflug", "Waltrauds 80.";
    not "Lloyds Bank", "Tomos")?"""
    word = words[i].group(0)
    stem = word[:-1]
    if (
        len(stem) < 3
        or not word.endswith("s")
        or not plainly_a_name(stem)
        or not word.isalpha()
        or known_name(word)
        or in_word_list(word.lower())
        or word.lower() in LOWER_NOT_NAMES  # "Alles Gute", "el martes 15."
    ):
        return False
    if word.islower() and not plainly_a_name(stem, common_too=False):
        return False  # "tres leches": in lowercase, only a name many bear
    if re.match(r" \d+\.", text[words[i].end() :]):
        return True  # "Waltrauds 80.": a birthday, as German writes it
    if i + 1 >= len(words) or gap_after(text, words, i) != " ":
        return False
    following = words[i + 1].group(0)
    return (
        following.isalpha()
        # "Veronikas Hochzeit", "katjas hochzeit", "ilkas Eltern" (a German noun's capital)
        and (following[:1].isupper() or not word[:1].isupper())
        and not in_word_list(following.lower())
        and capitalised(following.lower()) not in english_words()
        and not known_name(following)
    )
