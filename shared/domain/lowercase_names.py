"""When a lowercase word is someone: where the sentence puts a person there ("ravi says", "ask
priya", "dani's car", "lunch w olu"), where the lexicon knows the name well ("elena interview
tues"), and a lowercase full name ("alasdair munro")."""

from __future__ import annotations

import re

from shared.domain.calendar_words import TIME_WORDS
from shared.domain.capitalised_names import SAINTS, a_place_said_to_be_someone
from shared.domain.people_lexicon import (
    NAMES_AS_WORDS,
    a_compound,
    a_past_form,
    a_present_form,
    a_word,
    english_words,
    everyday_word,
    first_names,
    in_word_list,
    known_name,
    known_or_unlisted,
    name_and_word,
    places,
    plainly_a_name,
    surnames,
)
from shared.domain.people_words import (
    A_PERSONS_VERBS,
    AFTER_A_SUBJECT,
    ARTICLES,
    CLAUSE_BREAK,
    COMMON,
    CONJUNCTIONS,
    FAMILY,
    GIVEN,
    IRREGULAR_PASTS,
    KIN,
    LOWER_NOT_NAMES,
    OBJECTS,
    PLACE_WORDS,
    POSSESSIVE,
    SUBJECT_VERBS,
    THINGS,
    TO_A_PLACE,
    WEAK_VERBS,
    capitalised,
    gap_after,
)

# A lowercase word is a person after these ("ask priya", "Slack ravi the link")...
_CONTACT_VERBS = {
    "ask", "tell", "call", "ring", "phone", "text", "email", "message", "msg", "thank",
    "remind", "meet", "met", "invite", "slack", "ping", "chase", "congratulate", "cc", "dm",
    "whatsapp", "facetime", "hug", "visit", "congrats", "let",
    # and their pasts ("told abi to book", "rang nisha about it")
    "told", "asked", "rang", "phoned", "texted", "emailed", "messaged", "reminded", "thanked",
    "invited", "visited", "pinged",
}  # fmt: skip
# ... after Spanish ones and their personal "a" ("llamar a pilar"), or at the start of a
# clause before a verb of people (SUBJECT_VERBS: "ravi says").
_CONTACT_VERBS_A = {
    "llamar", "llama", "llamo", "escribir", "escribirle", "ver", "visitar", "preguntar",
    "preguntarle", "avisar", "felicitar", "invitar", "decirle", "dile",
    # and the verbs of sending, paying and giving ("mandar a inma las fotos")
    "mandar", "mandarle", "enviar", "enviarle", "pagar", "pagarle", "regalar", "regalarle",
    "dar", "darle", "devolver", "devolverle", "traer", "traerle", "llevar", "llevarle",
}  # fmt: skip
# Before the one something is given to and the thing ("pay abi my share", "send kev the link").
_GIVING_VERBS = {"send", "pay", "give", "lend", "show", "owe", "hand", "bring", "buy"}
# Before these, "'s" is no name's ("the builder's quote", "his back's gone").
_DETERMINERS = {
    "the", "a", "an", "my", "your", "his", "her", "our", "their", "its", "this", "that",
    "these", "those", "every", "each", "no", "some", "any", "whose", "one", "next", "last",
    "el", "la", "los", "las", "un", "una", "der", "die", "das", "den", "dem", "des", "ein",
    "eine", "le", "les",
}  # fmt: skip
# Before "else's": someone else's, no one's name ("everyone else's navy").
_ANYONE = {"everyone", "someone", "anyone", "everybody", "somebody", "anybody", "nobody"}
# Before a known first name, an article or a place word says it names a thing ("the reno").
_BEFORE_A_THING = _DETERMINERS | ARTICLES | PLACE_WORDS
# Before a contact verb that is a verb ("i need to ring gary"), not a noun ("phone charger").
_BEFORE_A_VERB = {
    "to", "and", "then", "pls", "please", "also", "i", "we", "can", "could", "should",
    "must", "will", "gotta", "remember", "need", "dont", "don't", "forget", "or", "just",
}  # fmt: skip


def lowercase_name_at(text: str, words: list[re.Match[str]], i: int, last_end: int) -> bool:
    raw = words[i].group(0)
    word = POSSESSIVE.sub("", raw)
    if word in places():  # "visit calgary", "invited to argentina"; but "hollis says"
        return a_place_said_to_be_someone(text, words, i)
    if word in NAMES_AS_WORDS and _asked_about(text, words, i):
        return True
    if not plain_name(word, words, i):
        return False
    if a_compound(word) and not (
        _starts_clause(text, words, i) and _subject_of_a_verb(text, words, i, only_a_persons=True)
    ):
        # "walkthrough went well", "headshot sent", "heat exchanger's cracked": a word made of
        # everyday words is a thing, unless a person's verb follows ("thistlewood signed").
        return False
    if a_word(word) and word not in surnames():
        # "abstract accepted", "agent wants", "ask estates": an everyday word that no list of
        # first names or surnames holds is a thing or a role in lowercase, whatever follows;
        # but at a clause's start before what only a person does now ("tam says", "bola
        # says", "tansy wants"), a word with no role's or plural's ending is someone
        # ("letter says", "printer says", "agent wants", "judges loved" stay things).
        return _a_words_name_saying(text, words, i)
    if _named_by_a_role(text, words, i):
        return True  # "lech the roofer can look", "nev the boiler guy today"
    previous = words[i - 1].group(0).lower() if i else ""
    if (
        previous in SAINTS
        and gap_after(text, words, i - 1) == " "
        and not text[: words[i - 1].start()][-1:].isdigit()  # "21st - ravi's"
    ):
        return False  # "st wilfrid's", "san fermín": a church, a school, a town
    before_previous = words[i - 2].group(0).lower() if i > 1 else ""
    spaced_before = i > 0 and text[words[i - 1].end() : words[i].start()] == " "
    if word != raw:  # "dani's car", not "the builder's quote", "receipt's in", "anyone else's"
        return (previous not in _DETERMINERS | _ANYONE or not spaced_before) and not a_word(word)
    following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
    after_gap = gap_after(text, words, i)
    # "ask priya about", "text kofi the address", "let gary in"; not "phone contract ends".
    if (
        spaced_before
        and previous in _CONTACT_VERBS
        and (_starts_clause(text, words, i - 1) or before_previous in _BEFORE_A_VERB)
        and (
            not following
            or re.search(r"[^\w\s]", after_gap)
            or POSSESSIVE.sub("", following) in COMMON
        )
    ):
        return True
    if spaced_before and previous == "a" and before_previous in _CONTACT_VERBS_A:
        return True
    # "felicity (planning consultant) says", "ottoline (life drawing) is retiring": a name
    # the lists hold, and who they are in brackets
    if after_gap == " (" and known_name(word) and not in_word_list(word):
        return True
    # "encarni next door says": a neighbour
    if re.match(r" next door\b", text[words[i].end() :]) and not a_word(word):
        return True
    # "pay barney £40 before sat", "pay oisín £140": the one a sum is paid or sent
    if (
        spaced_before
        and previous in _GIVING_VERBS
        and re.match(r"\s*[£$€]\d", text[words[i].end() :])
        and not a_word(word)
    ):
        return True
    # "q from rosalyn: do we keep the notes?": who a message is from, before its colon
    if (
        spaced_before
        and previous == "from"
        and after_gap.strip().startswith(":")
        and not in_word_list(word)
    ):
        return True
    # "142 tickets sold says royce -", "canopy shipped today says damo.": who said it, after
    # what they said, where the clause ends
    if (
        spaced_before
        and previous in {"says", "said"}
        and (not following or re.search(r"[^\w\s]", after_gap))
        and not in_word_list(word)
    ):
        return True
    if (
        spaced_before
        and previous in {"w", "with", "con"}
        and _ends_a_phrase(text, words, i)
        and not a_word(word)  # "w dinosaurs and football", "w strings"
    ):
        return True
    # "send marguerite the numbers", "pay abi my share", "get gary to book": the one it is
    # sent, paid or given to, or asked.
    if (
        spaced_before
        and previous in _GIVING_VERBS
        and following in _DETERMINERS
        and (previous == "send" or not a_word(word))
    ):
        return True
    # "me and abi split it", "me + kev": one of a pair with the user.
    if (
        (spaced_before and previous in CONJUNCTIONS and before_previous == "me")
        or (previous == "me" and gap_after(text, words, i - 1).strip() in {"+", "&"})
    ) and not a_word(word):
        return True
    if spaced_before and previous == "get" and following == "to":
        return True
    # "send it to gary + pay ...", "pitch it to marguerite?", "for olu, she needs it".
    if (
        spaced_before
        and before_previous not in TO_A_PLACE
        and (
            (previous == "to" and before_previous in GIVEN and re.search(r"[^\w\s]", after_gap))
            or (previous == "for" and after_gap.strip() == ",")
            # "list for emlyn -", "the subs tin for royce +": a listed first name no word
            or (
                previous == "for"
                and (not following or re.search(r"[^\w\s]", after_gap))
                and known_name(word)
                and not in_word_list(word)
            )
            # "forwarded it to quigley", "figures to kowalczyk tonight": a surname or a
            # name many bear where the phrase ends.
            or (
                previous == "to"
                and (
                    word in surnames()
                    or plainly_a_name(word, common_too=False)
                    # "send the agenda to alun": a listed first name that is no word
                    or (known_name(word) and not in_word_list(word))
                )
                and (before_previous in GIVEN or not in_word_list(word))
                and _ends_a_phrase(text, words, i)
            )
        )
        and not a_word(word)
    ):
        return True
    # "kev + ollie", "gav and tom", "wren + pip": the first of a pair whose second is a known
    # name, where the first is no everyday word or one the word list also holds as a name.
    if (not everyday_word(word) or capitalised(word) in english_words()) and i + 1 < len(words):
        partner = words[i + 2].group(0) if i + 2 < len(words) else ""
        if after_gap.strip() in {"+", "&"}:
            partner = following
        elif following not in CONJUNCTIONS or after_gap != " ":
            partner = ""
        partner = POSSESSIVE.sub("", partner)
        if (
            partner
            and partner.lower() not in ARTICLES | COMMON
            and plainly_a_name(partner, common_too=False)
        ):
            return True
    # "ravi + kwame", "bex and wen", "elena, tobi and kemi": one of a list whose first is
    # a name.
    gap_before = gap_after(text, words, i - 1).strip() if i else ""
    if last_end == i and gap_before in {"+", "&"}:
        return True
    if last_end == i and gap_before == "," and (following in CONJUNCTIONS or "," in after_gap):
        return True
    if last_end == i - 1 and previous in CONJUNCTIONS and spaced_before:
        return True
    # At a clause's start before a verb: any verb after a word no English word list holds
    # ("keiko found a bug", "femi can't start"), only a person's after an everyday word
    # ("receipt is", "patch sent") or a name that is one ("will").
    if _starts_clause(text, words, i) and _subject_of_a_verb(
        text,
        words,
        i,
        only_a_persons=not name_and_word(word)
        and (everyday_word(word) or not known_or_unlisted(word)),
    ):
        return True
    # A first name the lexicon knows well ("elena interview tues", "gary back tues 3rd", "el
    # pasaporte de dani") stands for a person wherever no article, place word, number or
    # thing says otherwise ("the reno", "10 min walk", "burton rd"); short ones ("na", "om")
    # are too often another language's words.
    return (
        (len(word) > 3 or (len(word) == 3 and _short_name_alone(text, words, i)))
        and plainly_a_name(word, common_too=False)
        and not (spaced_before and previous in _BEFORE_A_THING)
        and not (i and words[i - 1].group(0)[:1].isdigit())
        and not re.search(r"\d\s*$", text[: words[i].start()])
        and following.removesuffix("s") not in THINGS
    )


_A_DOERS_ENDING = re.compile(r"(?:er|or)$")
_ONE_WHO = {"guy", "man", "woman", "lady", "bloke", "fella"}


def _named_by_a_role(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the word no list of words holds followed by "the" and a doer's noun ("lech the
    roofer", "holt the tutor") or one who does a thing ("nev the boiler guy")?"""
    if i + 2 >= len(words) or words[i + 1].group(0).lower() != "the":
        return False
    if text[words[i].end() : words[i + 1].start()] != " ":
        return False
    role = words[i + 2].group(0).lower()
    if text[words[i + 1].end() : words[i + 2].start()] != " ":
        return False
    if (
        i + 3 < len(words)
        and words[i + 3].group(0).lower() in _ONE_WHO
        and text[words[i + 2].end() : words[i + 3].start()] == " "
    ):
        return True
    return bool(_A_DOERS_ENDING.search(role)) and any(
        base in english_words() for base in (role[:-2], role[:-2] + "e", role[:-1])
    )


# What only a person does, said now, after a word the word list holds ("tam says"): not a
# past ("split agreed"), which a report of things takes too.
_ONLY_A_PERSON_NOW = {
    "wants", "thinks", "reckons", "agrees", "suggests", "loves", "hates", "likes",
    "prefers", "knows", "meint", "quiere",
}  # fmt: skip
# The endings of roles, doers and things that say ("agent", "organiser", "inspector", "letter").
_A_ROLES_ENDING = re.compile(r"(?:er|or|ent|ant|ist|ian|ee|s)$")


def _a_words_name_saying(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the everyday word `words[i]` someone, at a clause's start before what only a person
    does now ("tam wants"; not "agent wants")? The verb is looked at first: it seldom follows."""
    return (
        i + 1 < len(words)
        and words[i + 1].group(0).lower() in _ONLY_A_PERSON_NOW
        and gap_after(text, words, i) == " "
        and not _A_ROLES_ENDING.search(words[i].group(0))
        and _starts_clause(text, words, i)
    )


_A_VOWEL = re.compile(r"[aeiouyw\u00e0-\u00ff]")


def plain_name(word: str, words: list[re.Match[str]], i: int, after_a_title: bool = False) -> bool:
    """Could this lowercase word be a name at all: a word of letters that is none of the
    common words, times or verbs ("granny maeve", not "granny says"), nor shaped like a
    word's inflection or derivation ("meeting", "quickly") unless no word it is made from
    is English ("pengelly") or the word list holds it as a proper noun ("pickering")."""
    low = word.lower()
    return (
        len(word) > 1
        and word.isalpha()
        and word == low
        and low not in COMMON
        and low not in FAMILY
        and low not in KIN
        and low not in SUBJECT_VERBS
        and low not in AFTER_A_SUBJECT
        and low not in _CONTACT_VERBS
        and low not in LOWER_NOT_NAMES
        and bool(_A_VOWEL.search(low))  # "hnc marks back", "pwc": an acronym, no name
        and not (
            len(low) > 4
            and low.endswith(("ing", "ed", "tion", "ment", "ness", "ly"))
            and not known_name(low)  # "aisling"
            and not after_a_title
            and capitalised(low) not in english_words()  # "pickering"
            and (in_word_list(low) or in_word_list(re.sub(r"(?:tion|ment|ness|ly)$", "", low)))
        )
    )


def _asked_about(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` the one a clause's contact verb reaches, before "about"/"re" or where
    the clause ends ("ask will about the van", "ring bill re the lease", "text may.")?"""
    if i == 0 or words[i - 1].group(0).lower() not in _CONTACT_VERBS:
        return False
    if not _starts_clause(text, words, i - 1) or gap_after(text, words, i - 1) != " ":
        return False
    following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
    return (
        not following
        or following in {"about", "re"}
        or bool(CLAUSE_BREAK.search(gap_after(text, words, i)))
    )


# Words that start a new clause, as a comma or a full stop does (CLAUSE_BREAK).
_CLAUSE_WORDS = {
    "and", "but", "then", "so", "also", "ok", "y", "und", "pero", "aber", "before", "after",
    "when", "until", "till", "til", "unless", "while", "once", "since", "because", "cos",
}  # fmt: skip


def _starts_clause(text: str, words: list[re.Match[str]], i: int) -> bool:
    if i == 0:
        return True
    if CLAUSE_BREAK.search(text[words[i - 1].end() : words[i].start()]):
        return True
    return words[i - 1].group(0).lower() in _CLAUSE_WORDS


# The verbs said of one person, not of a plural noun ("jonas says", not "meetings had").
_SINGULAR_VERBS = {
    v for v in SUBJECT_VERBS if v.endswith("s") and v not in {"was", "has", "is"}
} | {"was", "has", "is", "isn't", "isnt", "wasn't", "wasnt", "doesn't", "doesnt"}
# What things say too ("letter says", "sticker says").
_SAYS = {"says", "said", "say"}
# What follows a verb, not a plural noun ("lands at", "flies home", "pops in", "sends her").
_AFTER_A_VERB = {
    "at", "in", "on", "to", "home", "up", "out", "back", "off", "with", "w", "me", "her",
    "him", "them", "us", "into", "over", "round", "the", "a", "my", "our", "your", "his",
}  # fmt: skip


def _subject_of_a_verb(
    text: str, words: list[re.Match[str]], i: int, only_a_persons: bool = False
) -> bool:
    """Is `words[i]` followed by a verb a person does ("ravi says", "hana to send", "cormac
    and shauna are", "ravi on it")? With `only_a_persons`, a verb only a person does ("bex
    says", not "receipt is" or "offer to elena")."""
    j = i + 1
    if j >= len(words) or ":" in gap_after(text, words, i):
        return False  # "porto: found a flat": a heading, not a subject
    # "X and Y are", "X + Y on call": look past the partner (a known name says both are).
    if gap_after(text, words, i).strip() in {"+", "&"} and words[j].group(0).lower() in {"me", "i"}:
        return True  # "ishbel + me on the cruise"
    if gap_after(text, words, i).strip() in {"+", "&"} and j + 1 < len(words):
        only_a_persons = only_a_persons and not plainly_a_name(words[j].group(0))
        j += 1
    elif words[j].group(0).lower() in CONJUNCTIONS and j + 1 < len(words):
        if words[j + 1].group(0).lower() in {"me", "i"}:  # "jürgen and me on the call"
            return True
        only_a_persons = only_a_persons and not plainly_a_name(words[j + 1].group(0))
        j += 2
    elif gap_after(text, words, i).strip() == "," and j + 2 < len(words):
        # "elena, tobi and kemi for the role": a list of names at a clause's start.
        partner, conjunction, last = (w.group(0) for w in words[j : j + 3])
        return (
            conjunction.lower() in CONJUNCTIONS
            and plain_name(partner, words, j)
            and plain_name(last, words, j + 2)
        )
    if j >= len(words):
        return False
    # "hollingworth still prescribing", "pereira finally signed": the verb after an adverb.
    if (
        words[j].group(0).lower() in _ADVERBS
        and j + 1 < len(words)
        and gap_after(text, words, j) == " "
        and gap_after(text, words, j - 1) == " "
    ):
        j += 1
    following = words[j].group(0).lower()
    after = words[j + 1].group(0).lower() if j + 1 < len(words) else ""
    word = words[i].group(0).lower()
    if (  # "hebblethwaite replied", "hollingworth still prescribing": a surname's shape
        _A_SURNAMES_ENDING.search(word)
        and no_list_holds(word)
        and (
            following in SUBJECT_VERBS
            or following in {"hasn't", "hasnt", "hadn't"}
            or a_past_form(following)
            or _a_participle(following)
        )
    ):
        return True
    if only_a_persons and following in WEAK_VERBS:
        return False
    # "letter says", "sticker says": things say things too, and a role is no name.
    if (
        following in _SAYS
        and a_word(word)
        and word not in surnames()
        and capitalised(word) not in english_words()  # "paddy says"
    ):
        return False
    if following in SUBJECT_VERBS:
        # "meetings had", "clocks are": a plural noun, not a name ("jonas says").
        return (
            j > i + 1
            or not word.endswith("s")
            or not in_word_list(word)  # "hargreaves sent": no plural of a word
            or following in _SINGULAR_VERBS
            or known_name(word)  # "precious told me", "jonas had"
        )
    if only_a_persons:
        return False
    unlisted_or_rare = first_names().get(word) in {None, "r"}  # "alun changed plans"
    if (
        (a_past_form(following) or following in IRREGULAR_PASTS)
        and unlisted_or_rare
        and j + 1 < len(words)
    ):
        return not CLAUSE_BREAK.search(gap_after(text, words, j))  # "ruaridh dragged me up"
    if (  # "abbasi observing u15s", "priyesh sending the logs"
        unlisted_or_rare
        and after in _AFTER_A_PARTICIPLE
        and _a_participle(following)
        and gap_after(text, words, j) == " "
        and not everyday_word(word)
        and not re.search(r"\d$", text[: words[i].start()])  # "2nd fitting"
    ):
        return True
    if a_present_form(following) and unlisted_or_rare and after in _AFTER_A_VERB:
        return gap_after(text, words, j) == " "  # "encarni lands at 2", "kasia pops in"
    if following == "to" and i > 0:  # "hana to send the invites"; not "learn to sail"
        return bool(after) and after not in _DETERMINERS and after not in OBJECTS
    return following == "on" and after in {"it", "call", "leave", "holiday"}


# What follows a verb's "-ing" ("sending the logs", "sorting a van"), not a noun's ("underfloor
# heating in the bathroom", "opening moved").
_AFTER_A_PARTICIPLE = {
    "the", "a", "an", "my", "his", "her", "their", "our", "your", "it", "them", "him", "me",
    "us", "up", "out", "off", "back", "round", "over", "so",
}  # fmt: skip


def _a_participle(word: str) -> bool:
    """The "-ing" form of an everyday verb ("sending", "observing", "sorting")."""
    return (
        word.endswith("ing")
        and len(word) > 5
        and any(in_word_list(stem, 1) for stem in (word[:-3], word[:-3] + "e", word[:-4]))
    )


# Said between a subject and its verb ("still hasn't replied", "finally signed").
_ADVERBS = {"still", "finally", "already", "never", "also", "just", "now", "actually"}


def _short_name_alone(text: str, words: list[re.Match[str]], i: int) -> bool:
    """A three-letter name with no number right beside it ("but kai scored"; not "90 secs
    max", "max 4000 words") that is no English word."""
    word = words[i].group(0)
    return (
        not everyday_word(word)
        and not re.match(r"\s*[£$€]?\d", text[words[i].end() :])  # "max £36k"
        and not re.search(r"\d\s*$", text[: words[i].start()])
        and not (  # "6 volunteers min"; not "4-1 but kai"
            i > 0
            and words[i - 1].group(0).lower() not in COMMON
            and re.search(r"\d\s*$", text[: words[i - 1].start()])
        )
    )


# A lowercase word after "w"/"with" is a person when the phrase ends there ("lunch w olu -",
# "check in w dani on thurs"), not when a noun follows ("w bad wifi").
_ENDS_A_PHRASE = {
    "and", "about", "re", "tmrw", "tmw", "today", "tomorrow", "tonight", "later", "soon",
    "first", "again", "y", "und", "too", "asap", "tho", "lol", "ok", "cuando",
}  # fmt: skip
# Before a time that ends the phrase too ("w dani on thurs", "w olu at 3").
_BEFORE_A_TIME = {"on", "at", "this", "next", "before", "after", "by", "from", "tues", "thurs"}


def _ends_a_phrase(text: str, words: list[re.Match[str]], i: int) -> bool:
    if i + 1 >= len(words) or re.search(r"[^\w\s]", gap_after(text, words, i)):
        return True
    following = words[i + 1].group(0).lower()
    if following in _ENDS_A_PHRASE:
        return True
    after = words[i + 2].group(0).lower() if i + 2 < len(words) else ""
    return following in _BEFORE_A_TIME and (after in TIME_WORDS or after[:1].isdigit())


def a_surname_after(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the lowercase word after the first name `words[i]` a surname: one the word list
    holds as a proper noun and the lexicon not as a first name ("alasdair munro", "gillian
    frost"; not "pilar cuando", "dani says")?"""
    if i + 1 >= len(words) or gap_after(text, words, i) != " ":
        return False
    raw = words[i + 1].group(0)
    surname = POSSESSIVE.sub("", raw)
    if (
        surname != surname.lower()
        or len(surname) < 3
        or surname in COMMON
        or surname in LOWER_NOT_NAMES
        or surname in SUBJECT_VERBS
        or surname in _ELSEWHERE_WORDS
    ):
        return False
    mark = first_names().get(surname)
    listed = capitalised(surname) in english_words() or surname in surnames()
    if (
        mark is None
        and not listed
        # "stuart blyth called": a surname that is also a town, where a person is cued
        and (no_list_holds(surname) or (surname in places() and not in_word_list(surname)))
    ):
        # "ottilie brandreth confirmed", "benedict orme pulled out": after a first name the
        # lexicon knows well, a word no list holds is a surname where the sentence says a
        # person stands there (not "kwame retesting over the wkend", "regula meinte, wir").
        first = POSSESSIVE.sub("", words[i].group(0))
        return plainly_a_name(first) and (
            _said_of_a_pair(text, words, i)
            # "gordon ashworth happy w the budget": after a name many bear, a word no list
            # holds that ends as English surnames do (not "svenja schreibt", "jens fragt").
            or (
                plainly_a_name(first, common_too=False) and bool(_A_SURNAMES_ENDING.search(surname))
            )
        )
    if mark is not None:  # "alasdair munro", "glenys rees": a name the lists hold as a surname
        # "hattie marsh's agent": even a word, where the possessive closes the name.
        if (mark in {"r", ""} or raw != surname) and listed and surname in surnames():
            return True
        # "dave thorne can start", "pay dave thorne's invoice": a name many bear, then a
        # first name of no English list where the sentence says a person stands there.
        first = POSSESSIVE.sub("", words[i].group(0))
        return (
            mark == ""
            and not in_word_list(surname)
            and plainly_a_name(first, common_too=False)
            and cued_as_a_person(text, words, i, i + 2)
        )
    # "glenys rees", "ronan kehoe"; "hattie marsh's agent": even a word, where the
    # possessive closes the name.
    return listed and (
        raw != surname
        or not everyday_word(surname)
        or (
            capitalised(surname) in english_words()  # "gillian frost"
            and not _a_words_phrase(text, words, i + 1)
        )
    )


def _a_words_phrase(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Does the everyday word `words[i]` run on into a phrase with the content word after it
    ("good luck", "flowers for"; not "frost at", "pike the"), where a surname ends the name?"""
    if i + 1 >= len(words) or gap_after(text, words, i) != " ":
        return False
    following = words[i + 1].group(0).lower()
    return (
        following not in COMMON
        and in_word_list(following)
        and following not in SUBJECT_VERBS | A_PERSONS_VERBS | WEAK_VERBS
        and not a_past_form(following)
        and not a_present_form(following)
    )


# How English, Scots and Irish surnames end ("ashworth", "fairclough", "hebblethwaite").
_A_SURNAMES_ENDING = re.compile(
    r"..(?:worth|ough|thwaite|son|ton|ley|by|ham|field|ford|wood|well|shaw|croft|hurst|ridge"
    r"|dale|combe|bury|stead|wick)$"
)


def _said_of_a_pair(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the pair `words[i:i+2]` said to be someone: cued as a person, or followed by a
    verb's past ("benedict orme pulled out")?"""
    if CLAUSE_BREAK.search(gap_after(text, words, i + 1)):  # "svenja schreibt: slides"
        previous = words[i - 1].group(0).lower() if i else ""
        return previous in _CONTACT_VERBS | {"w", "with", "to", "for", "from"}
    following = words[i + 2].group(0).lower() if i + 2 < len(words) else ""
    return cued_as_a_person(text, words, i, i + 2) or a_past_form(following)


def no_list_holds(word: str) -> bool:
    """Is the lowercase `word` in no list: no English word or form of one, first name, place,
    verb the rules know, nor another language's small word ("brandreth", not "está")?"""
    return (
        word.isascii()
        and word.isalpha()
        and not in_word_list(word)
        and not known_name(word)
        and word not in places()
        and word not in A_PERSONS_VERBS | WEAK_VERBS | _ELSEWHERE_WORDS
    )


# Other languages' small words, which no English list holds ("pilar cuando llegue").
_ELSEWHERE_WORDS = {
    "cuando", "que", "para", "pero", "porque", "como", "donde", "por", "sin", "desde",
    "hasta", "muy", "mañana", "und", "oder", "aber", "wenn", "weil", "dass", "mit", "bei",
    "nach", "vom", "zum", "zur", "noch", "auch", "schon", "quando", "perché", "mais",
    "quand", "avec", "pour", "dans", "sur",
}  # fmt: skip


def cued_as_a_person(text: str, words: list[re.Match[str]], i: int, end: int) -> bool:
    """Is the phrase `words[i:end]` reached by a contact word ("tell", "w", "to") before it,
    or followed by a verb ("says", "needs"), or a possessive ("alasdair munro's email")?"""
    previous = words[i - 1].group(0).lower() if i else ""
    if previous in _CONTACT_VERBS | {"w", "with", "to", "for", "from"}:
        return True
    if bool(POSSESSIVE.search(words[end - 1].group(0))):
        return True
    following = words[end].group(0).lower() if end < len(words) else ""
    return following in SUBJECT_VERBS or a_present_form(following)


# For people_history.py: the verbs that reach a person, and the words before a thing.
CONTACT_VERBS = frozenset(_CONTACT_VERBS | _CONTACT_VERBS_A)
DETERMINERS = frozenset(_DETERMINERS)
