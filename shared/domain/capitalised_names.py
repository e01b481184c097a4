"""When a capitalised word is someone ("Ravi says", "ask Bex", "Dr Mensah", "Sarah Green") and
when it is a place, a firm or a thing ("in Berlin", "Thames Water", "Kestrel app")."""

from __future__ import annotations

import re

from shared.domain.people_lexicon import (
    a_past_form,
    a_things_word,
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
    AFTER_A_SUBJECT,
    ARTICLES,
    CLAUSE_BREAK,
    CONJUNCTIONS,
    FAMILY,
    GIVEN,
    KIN,
    NATIONALITIES,
    NOT_NAMES,
    PLACE_WORDS,
    POSSESSIVE,
    SIGN_OFFS,
    SUBJECT_VERBS,
    THINGS,
    TO_A_PLACE,
    WEAK_VERBS,
    capitalised,
    gap_after,
)

# Said before a name and dropped, as people file them: "Mr Adeyemi" -> "Adeyemi".
_TITLES = {
    "Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Professor", "Sir", "Dame", "Cllr",
    "Councillor", "Rev", "Revd", "Herr", "Frau", "Señor", "Señora", "Sra", "Madame", "Mme",
    "Monsieur", "Signora", "Signor",
}  # fmt: skip
_TITLE_WORDS = {t.lower() for t in _TITLES}
TITLE_WORDS = _TITLE_WORDS
# Months that are also first names: a person when possessive ("April's birthday") or met.
_MONTH_NAMES = {"April", "May", "June", "August"}
# After "from", a place ("back from Porto") unless something came from someone ("an idea
# from Kenji").
_FROM_A_PERSON = {
    "idea", "ideas", "message", "messages", "email", "emails", "text", "texts", "call",
    "calls", "note", "letter", "card", "gift", "present", "tip", "tips", "advice", "feedback",
    "news", "invite", "invitation", "recommendation", "word", "heard", "learned", "learnt",
    "borrow", "borrowed", "request", "reply", "voicemail", "fwd", "fw", "forwarded",
}  # fmt: skip
# Before a place named after a saint ("St Andrew's Hall", "San Sebastián").
SAINTS = {"st", "saint", "san", "santa", "sankt", "sant", "são"}
# Where a sentence ends, so that the next word is its first.
_SENTENCE_END = re.compile(r"[.!?;:\n][\s'\"\u2018\u201c]*$")  # "whatsapp: 'Hi all"
# What reaches a person, or a firm or a place just as well ("w", "to", "ask", "ring").
_REACHED = {
    "w", "with", "mit", "con", "to", "from", "ask", "tell", "ring", "call", "email", "phone",
    "text",
}  # fmt: skip
_A_GAELIC_SURNAME = re.compile(r"(?:Mc|Mac|O['\u2019])[A-Z]")
# The most capitalised words one name runs to ("Mary Ann Evans").
_MAX_NAME_WORDS = 3


def name_at(text: str, words: list[re.Match[str]], i: int, last_end: int = -1) -> int:
    """How many capitalised words starting at `words[i]` make one person's name (0: none)."""
    raw = words[i].group(0)
    word = POSSESSIVE.sub("", raw)
    possessive = word != raw
    previous = words[i - 1].group(0).lower() if i else ""
    before_previous = words[i - 2].group(0).lower() if i > 1 else ""
    if word in _MONTH_NAMES:
        return 1 if possessive or previous == "with" else 0
    if not is_name(word) or previous in PLACE_WORDS or previous in ARTICLES:
        return 0
    if _a_firms_pair(text, words, i):
        return 0  # "Up & Running", "Ox and Finch", "Man & Van": a firm's name
    if (  # "die Hamburger Rechnungen": the rest of a thing's capitalised words
        i > 1
        and words[i - 1].group(0)[:1].isupper()
        and gap_after(text, words, i - 1) == " "
        and before_previous in PLACE_WORDS | ARTICLES | {"from"}
        and previous not in _TITLE_WORDS  # "from Mrs Kowalski"
    ):
        return 0
    if (  # "Kemp Town", "Yorkshire Tea": the thing's word after a capital no name took
        i > 0
        and last_end != i
        and words[i - 1].group(0)[:1].isupper()
        and gap_after(text, words, i - 1) == " "
        and previous not in _TITLE_WORDS
        and a_things_word(word)
    ):
        return 0
    if previous == "from" and before_previous not in _FROM_A_PERSON:
        return 0
    if previous in SAINTS and not text[: words[i - 1].start()][-1:].isdigit():
        return 0  # "St Andrew's Hall", "San Sebastián"; not "the 21st Ravi's off"
    if previous == "to" and before_previous in TO_A_PLACE:
        return 0
    if (  # "moving the wedding to Skye", "drive the van to Leeds": a thing taken somewhere
        previous == "to"
        and i > 3
        and words[i - 3].group(0).lower() in {"the", "a", "our", "my", "his", "her", "their"}
        and words[i - 4].group(0).lower() in TO_A_PLACE
    ):
        return 0
    if possessive and re.match(r"\s+day\b", text[words[i].end() :], re.IGNORECASE):
        return 0  # "Mother's Day", "Valentine's day": a holiday
    if (  # "renew w Admiral", "claim w Hoxton": an errand is done with a firm
        previous in {"w", "with"}
        and first_names().get(word.lower(), "r") in {"r", "w"}
        and _an_errand_before(text, words, i - 1)
    ):
        return 0
    if (  # "retest w Northline", "sending it to Nationwide", "ring Ysbyty Gwynedd": a long
        # word no list of names holds, reached as a person would be, is a firm or a place
        # (names no list holds are mostly short: "w Olu", "Bex says")
        previous in _REACHED
        and not possessive
        and len(word) > 5
        and not known_name(word)
        and word.lower() not in surnames()
        and not _A_GAELIC_SURNAME.match(word)  # "ask McAllister", "w O'Sullivan"
        and not _a_messages_sender(text, words, i)
    ):
        return 0
    if (  # "send it to Aviva w the claim form", "ring aviva to cancel the policy"
        previous in {"to", "ring", "call", "ask", "email", "phone"}
        and first_names().get(word.lower(), "r") in {"r", "w"}
        and _an_errand_in_clause(text, words, i)
    ):
        return 0
    if (  # "a card to Kassel", "claim w Hoxton": a town or a country is no one
        word.lower() in places()
        and previous not in _TITLE_WORDS
        and not (
            i + 1 < len(words)
            and is_name(words[i + 1].group(0))
            and gap_after(text, words, i) == " "
        )
        and not a_place_said_to_be_someone(text, words, i)
    ):
        return 0
    length = 1
    # A full name: capitalised names in a row, one space apart, up to a possessive.
    while (
        not possessive
        and length < _MAX_NAME_WORDS
        and i + length < len(words)
        and text[words[i + length - 1].end() : words[i + length].start()] == " "
        and is_name(POSSESSIVE.sub("", words[i + length].group(0)))
    ):
        possessive = bool(POSSESSIVE.search(words[i + length].group(0)))
        length += 1
    # "App Store", "Red Lion", "Topps Tiles": a place, a firm or a thing.
    parts = [POSSESSIVE.sub("", w.group(0)) for w in words[i : i + length]]
    if any(part.lower() in THINGS for part in parts):
        return 0
    # "Thames Water", "Cats Protection", "Bristol Energy": an everyday word or a place in a
    # run of capitals that starts with no common first name ("Sarah Green", "Grace Hopper").
    first_mark = first_names().get(parts[0].lower())
    if length > 1 and first_mark in {None, "r"} and any(map(a_things_word, parts)):
        return 0
    if (
        length > 1
        and parts[-1].lower() in _PLACES_ENDS
        and first_names().get(parts[0].lower()) in {None, "r"}
    ):
        return 0  # "Calton Hill", "Clifton Moor", "Cotham Hill"; not "Damon Hill"
    if length > 1 and parts[0] in _ARTICLES_FIRST:
        return 0  # "Le Creuset", "Les Quizerables", "El Corte Inglés": an article starts it
    # "Haribo Tangfastics", "Ubi Caritas", "Melin Tregwynt": a run of capitals no list of
    # first names or surnames holds any of is a brand, a title or a place
    # (not who a quoted message is from: "text from Norrie Hepple: '…'")
    if (
        length > 1
        and not any(known_name(p) or p.lower() in surnames() for p in parts)
        and not _a_messages_sender(text, words, i)
    ):
        return 0
    # "Royal Mail", "Tyne Clearances", "John Deere Financial": after the first, a word no list
    # holds as a surname or a proper noun is a firm's, a team's or a street's whatever the
    # first word is ("Grace Hopper", "Sarah Green": surnames, or nouns the word list holds).
    if any(map(_a_things_word_only, parts[1:])):
        return 0
    # "Reviewer 2", "Halle 11", "Ward 12": a word no list names before a number is a label.
    if (
        length == 1
        and not possessive
        and not known_name(word)
        and previous not in _TITLE_WORDS
        and re.match(r" \d", text[words[i].end() :])
    ):
        return 0
    # "Berlin", "Brooks", "Booker": a rare name or one that is a word, that the word list
    # holds as a proper noun, is a place or a brand unless the sentence says it is someone.
    if (
        length == 1
        and not possessive
        and first_names().get(word.lower()) in {"r", "w"}
        and word in english_words()
        and previous not in _TITLE_WORDS
        and not _said_of_a_person(text, words, i, last_end)
    ):
        return 0
    # "Republic", "Lego", "Calgary": a word or a place, not a name, unless a title, a
    # possessive or the sentence says it is someone ("Chen mentioned", "Wen's scan"; after
    # an everyday word, not a verb things do too: "Harbinger can offer", "Kelp is").
    if (
        length == 1
        and not possessive
        and a_things_word(word)
        and previous not in _TITLE_WORDS
        and not _said_of_a_person(
            text, words, i, last_end, weak_verbs=not everyday_word(word), a_thing_too=True
        )
    ):
        return 0
    next_word = words[i + length].group(0) if i + length < len(words) else ""
    if (
        length == 1
        and not possessive
        and next_word.lower().removesuffix("s") in _THINGS_AND_WHAT_FIRMS_SEND
        and next_word.lower() not in AFTER_A_SUBJECT | SUBJECT_VERBS
        and gap_after(text, words, i) == " "
    ):
        return 0  # "Kestrel app", "Octopus app"
    if (
        length == 1
        and not possessive
        and not known_name(word)
        and not _said_of_a_person(text, words, i, last_end, a_thing_too=_unlisted(word))
    ):
        return 0  # "before Porto", "your actual Tesco", "hana's Figma prototype"
    starts_sentence = i == 0 or bool(_SENTENCE_END.search(text[: words[i].start()]))
    if starts_sentence and length == 1 and not possessive and not plainly_a_name(word):
        following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
        gap = text[words[i].end() : words[i + 1].start()] if i + 1 < len(words) else ""
        # "Kwame, Ana and ..." or "Ravi is": a person; "Lunch w/ Fatima": the capture's noun.
        if (
            following not in AFTER_A_SUBJECT
            and following not in SUBJECT_VERBS
            and following not in CONJUNCTIONS
            and not (word.lower() in surnames() and a_past_form(following))
            and "," not in gap
            and "&" not in gap
            and "+" not in gap
        ):
            return 0
    return length


# What a firm sends or sells, after its name ("Admiral quote", "Pathé clips", "Sky
# subscription"); a person's would be "'s" ("Dave's quote").
_WHAT_A_FIRM_SENDS = {
    "quote", "subscription", "policy", "account", "paperwork", "renewal", "clip", "insurance",
    "licence", "license", "scheme", "contract", "statement", "tariff", "membership",
}  # fmt: skip
_THINGS_AND_WHAT_FIRMS_SEND = THINGS | _WHAT_A_FIRM_SENDS


# The last word of a hill's, a moor's or a green's name ("Calton Hill", "Clifton Moor").
_PLACES_ENDS = {"hill", "hills", "moor", "green", "common", "heath", "fell", "tor", "seat"}
# French's and Spanish's articles, at the start of a run of capitals: a thing's name.
_ARTICLES_FIRST = {"Le", "La", "Les", "El", "Los", "Las"}


def _a_messages_sender(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` who a quoted message is from, its name before a colon ("text from Norrie
    Hepple: 'sorry pet'", "Fwd from Eifion: 'Morning'"; not "letter from Leasys came")?"""
    return (
        i > 1
        and words[i - 1].group(0).lower() == "from"
        and words[i - 2].group(0).lower() in _FROM_A_PERSON
        and bool(re.match(r"(?: [A-Z][\w'\u2019-]*)?\s*:", text[words[i].end() :]))
    )


def _a_things_word_only(word: str) -> bool:
    """Is `word` an everyday word ("Mail", "Clearances") that no list of first names or
    surnames holds, nor the word list as a proper noun ("Hopper", "Green")?"""
    return (
        everyday_word(word)
        and not known_name(word)
        and word.lower() not in surnames()
        and capitalised(word.lower()) not in english_words()
    )


# Between the two capitalised words of a firm's name ("Patel & Sons", "Ox and Finch").
_FIRMS_JOIN = re.compile(r"\s*&\s*|\s+and\s+")


def _a_firms_pair(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` one of two capitalised words joined by "&" or "and", neither a name many
    bear that is no word, of which one is an everyday word or a thing ("Up & Running", "Ox
    and Finch") or both are words ("Man & Van"): a firm, a shop or a pub, not two people
    ("Wen and Ravi")?"""
    for j in (i - 2, i - 1, i + 1, i + 2):
        if not 0 <= j < len(words) or words[j].group(0)[:1].islower():
            continue
        first, second = sorted((i, j))
        if not _FIRMS_JOIN.fullmatch(text[words[first].end() : words[second].start()]):
            continue  # "Up & Running", "Ox and Finch": joined, nothing else between
        pair = [POSSESSIVE.sub("", words[k].group(0)) for k in (first, second)]
        if any(plainly_a_name(w, common_too=False) for w in pair):
            continue  # "Wen and Ravi": a name many bear and no word
        if any(map(a_things_word, pair)) or all(in_word_list(w.lower()) for w in pair):
            return True
    return False


# Before a capitalised word the lexicon does not know, what says it is someone ("ask Bex",
# "w Olu", "Dr Mensah"); "ring", "call" and "email" reach firms too ("ring Octopus").
_PERSON_BEFORE = {
    "ask", "tell", "text", "message", "msg", "thank", "thanks", "remind", "meet", "invite",
    "slack", "ping", "congratulate", "congrats", "cc", "dm", "whatsapp", "facetime", "hug",
    "let", "w", "with", "con", "mit", "avec", "dr", "mr", "mrs", "ms", "miss", "mx", "prof",
    "professor", "sir", "dame",
}  # fmt: skip


def _unlisted(word: str) -> bool:
    """Is `word` in no list at all: no first name, surname, everyday word or proper noun of
    the word list ("Lexora", "Goldcar", "Haribo", and "Bex" or "Olu" too: only what the
    sentence says of it tells a person from a firm or a brand)?"""
    low = word.lower()
    return not (
        known_name(word)
        or low in surnames()
        or in_word_list(low)
        or capitalised(low) in english_words()
    )


# After a word no list holds or a thing's word, the verbs a firm, a brand or a place is said
# to do as often as a person ("Goldcar is cheapest", "Lexora has a calendar", "Edmundson have
# the RCBOs", "Arbor won't export"); not what a person is said to do ("Jonno got the keys").
_THINGS_DO_TOO = {
    "is", "isn't", "isnt", "was", "wasn't", "wasnt", "are", "were", "has", "had", "have",
    "can", "cant", "can't", "could", "couldnt", "couldn't", "will", "wont", "won't", "would",
    "should", "might", "must", "does", "did", "didn't", "didnt", "doesn't", "doesnt", "dont",
    "don't", "books", "booked", "owns", "ist", "hat", "es", "está", "tiene",
}  # fmt: skip


def _said_of_a_person(
    text: str,
    words: list[re.Match[str]],
    i: int,
    last_end: int,
    weak_verbs: bool = True,
    a_thing_too: bool = False,
) -> bool:
    """Does the sentence say that a capitalised word the lexicon does not know, `words[i]`, is
    someone: a title or a word said to people before it ("Dr Mensah", "ask Bex", "w Olu"), a
    verb only a person does after it ("Bex says", "Sunita doesn't"), a name before or after it
    in a list ("Ravi + Bex")? Unless `weak_verbs`, not a verb things do too ("can", "is");
    if `a_thing_too` (a word no list holds, or a thing's word), not the verbs a firm or a brand
    is said to do ("Goldcar is cheapest", "Lexora has a calendar", "Arbor won't export")."""
    previous = words[i - 1].group(0).lower() if i else ""
    before_previous = words[i - 2].group(0).lower() if i > 1 else ""
    if previous in _PERSON_BEFORE | _TITLE_WORDS or (previous == "to" and before_previous in GIVEN):
        return True
    if re.match(r" next door\b", text[words[i].end() :]):
        return True  # "Pattinson next door", "the key for Jan next door": a neighbour
    if previous in SIGN_OFFS and gap_after(text, words, i - 1).strip() == ",":
        return True  # "Kind regards, Glesni'", "Thanks, Tricia": who signed a message
    if previous == "from" and before_previous in _FROM_A_PERSON:
        return True
    gap_before = gap_after(text, words, i - 1).strip() if i else ""
    if last_end == i and gap_before in {"+", "&", ","}:
        return True
    if last_end == i - 1 and previous in CONJUNCTIONS:
        return True
    j = i + 1
    if j < len(words):
        following = words[j].group(0).lower()
        if following in A_PERSONS_VERBS and (
            (weak_verbs and not (a_thing_too and following in _THINGS_DO_TOO))
            or following not in WEAK_VERBS
        ):
            return True
        # "Dobson exchanged yesterday": a surname before a verb's past.
        if (
            words[i].group(0).lower() in surnames()
            and a_past_form(following)
            and not CLAUSE_BREAK.search(gap_after(text, words, i))
        ):
            return True
        # "Bex and Ravi", "Bex + Ravi": a list with a known name.
        partner = words[j + 1].group(0) if j + 1 < len(words) else ""
        if following in CONJUNCTIONS and (known_name(partner) or partner.lower() in FAMILY):
            return True
        if gap_after(text, words, i).strip() in {"+", "&"} and known_name(following):
            return True
        # "Ged from Derwent Garden Rooms coming", "Damo from Kemble says": someone from a firm
        if (
            following == "from"
            and j + 1 < len(words)
            and words[j + 1].group(0)[:1].isupper()
            and gap_after(text, words, i) == gap_after(text, words, j) == " "
            and not a_things_word(POSSESSIVE.sub("", words[i].group(0)))
            and len(words[i].group(0)) <= 5  # not "Ryanair from Bristol": names are short
        ):
            return True
    return False


# A capitalised word that may be a name: no acronym, title or word that is never one.
def is_name(word: str) -> bool:
    return (
        len(word) > 1
        and word[0].isupper()
        and not word[1].isupper()  # "CV", "NHS": not names
        and word not in NOT_NAMES
        and word not in _TITLES
        and word not in NATIONALITIES
        and word.lower() not in KIN - FAMILY
    )


def a_place_said_to_be_someone(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the town `words[i]`, a name the lexicon knows too, followed by a verb only a person
    does ("hollis says", "Mali wants"; not "Bristol has an offer", "kiel's favour")?"""
    word = words[i].group(0)
    if not known_name(word) or POSSESSIVE.search(word):
        return False
    following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
    return following in A_PERSONS_VERBS - WEAK_VERBS and not CLAUSE_BREAK.search(
        gap_after(text, words, i)
    )


# What a clause is doing when "w" reaches a firm, not a person ("renew the insurance w
# Admiral", "register w Waltham Forest", "sort the post redirection w Royal Mail").
_ERRANDS = {
    "renew", "register", "claim", "insure", "switch", "cancel", "redirect", "redirection",
    "insurance", "policy", "account", "mortgage", "loan", "finance", "broadband", "contract",
    "subscription", "tax", "licence", "license",
}  # fmt: skip


def _an_errand_in_clause(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Does the clause around `words[i]` name an errand, before or after it?"""
    j = i
    while j + 1 < len(words) and not CLAUSE_BREAK.search(gap_after(text, words, j)):
        j += 1
    return _an_errand_before(text, words, j + 1)


def _an_errand_before(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Does the clause up to `words[i]` name an errand (renewing, registering, insuring)?"""
    j = i
    while j > 0 and not CLAUSE_BREAK.search(gap_after(text, words, j - 1)):
        j -= 1
    return any(words[k].group(0).lower().removesuffix("'s") in _ERRANDS for k in range(j, i))
