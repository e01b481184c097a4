"""The user's own history of people (issue 40): the names the rules found with a strong cue
in earlier captures (`cued_people`, stored with each filed item), and a later capture's words
that those names spell where the rules alone saw no one (`with_known`: "harj board paper fri"
after "Harj says")."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from shared.domain.lowercase_names import CONTACT_VERBS, DETERMINERS
from shared.domain.people_lexicon import everyday_word, in_word_list, known_name
from shared.domain.people_words import (
    ARTICLES,
    CLAUSE_BREAK,
    COMMON,
    FAMILY,
    KIN,
    POSSESSIVE,
    SIGN_OFFS,
)

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_TITLES = {"mr", "mrs", "ms", "mx", "dr", "prof", "cllr", "herr", "frau", "sra", "sr"}
# After a name, what only a person does (not "rang", "is", "starts", "going": firms and things
# do those too: "Currys rang", "uni starts").
_PERSONS_ONLY = {
    "says", "said", "wants", "wanted", "thinks", "reckons", "asked", "asks", "told", "tells",
    "texted", "emailed", "messaged", "mentioned", "suggested", "suggests", "agreed", "agrees",
    "loves", "loved", "hates", "hated", "likes", "liked", "prefers", "knows", "knew", "cried",
    "owes", "sagt", "meint", "dice", "dijo", "quiere", "dit", "veut",
}  # fmt: skip
_BEFORE_A_THING = DETERMINERS | ARTICLES
_NOT_POSSESSIVES = {"it's", "that's", "what's"}
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")


def _gap(text: str, words: list[re.Match[str]], i: int) -> str:
    return text[words[i].end() : words[i + 1].start()]


def _cued_at(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the name at `words[i]` said of a person: a contact verb, a title or a kinship word
    before it, a possessive that is no firm's ("harj's", "Priya's"; not "Xero's price"), or a
    verb only people do after it ("Harj says")?"""
    raw = words[i].group(0)
    word = POSSESSIVE.sub("", raw)
    if POSSESSIVE.search(raw) and raw.lower() not in _NOT_POSSESSIVES:
        return word == word.lower() or known_name(word)
    before = words[i - 1].group(0).lower() if i else ""
    if before in CONTACT_VERBS | _TITLES | KIN | FAMILY and _gap(text, words, i - 1).strip() == "":
        # "ring Admiral", "call Sage": an everyday word reached is a firm as often as a person
        return before not in CONTACT_VERBS or not everyday_word(word)
    if before in SIGN_OFFS and _gap(text, words, i - 1).strip() == ",":
        return word[:1].isupper()  # "Kind regards, Glesni": who signed the message
    if before in {"says", "said"} and _gap(text, words, i - 1) == " ":
        # "12k records broken says rosalyn,": who said it, after what they said
        return (i + 1 == len(words) or bool(CLAUSE_BREAK.search(_gap(text, words, i)))) and (
            not everyday_word(word)
        )
    if i + 1 < len(words) and not CLAUSE_BREAK.search(_gap(text, words, i)):
        return words[i + 1].group(0).lower() in _PERSONS_ONLY
    return False


def cued_people(text: str, people: Iterable[str]) -> list[str]:
    """What to remember of the `people` the rules found in `text`: a single name said with a
    strong cue ("ask Harj", "harj's", "Harj says"), the name after a kinship word or a title
    ("Elsie" of "Nana Elsie"), and a full name whose first name the lists hold, whole and its
    first name ("Benedict Orme", "Benedict"; not "Royal Devon"). A name found with no such cue
    ("Currys rang", "the Massey") is not remembered, so one wrong reading does not spread."""
    words = list(_WORD.finditer(text))
    keys = [POSSESSIVE.sub("", w.group(0)).lower() for w in words]
    remembered: list[str] = []
    for name in people:
        parts = name.split()
        if len(parts) > 1:
            kin = parts[0].lower() in KIN | _TITLES
            first = parts[1] if kin else parts[0]
            if first.lower() in FAMILY | COMMON or not (kin or known_name(first)):
                continue
            remembered += [first] if kin else [name, first]
            last = parts[-1]
            if not kin and len(parts) == 2 and not (in_word_list(last.lower()) or known_name(last)):
                remembered.append(last)  # "brackenbury's wheat" after "roger brackenbury"
        elif name.lower() not in FAMILY | COMMON and any(
            key == name.lower() and _cued_at(text, words, i) for i, key in enumerate(keys)
        ):
            remembered.append(name)
    return list(dict.fromkeys(remembered))


@functools.lru_cache(maxsize=16)
def _index(
    known: frozenset[str],
) -> tuple[dict[str, str], dict[str, list[tuple[tuple[str, ...], str]]]]:
    """`known` by lowercase key: single names, and full names by their first word. Made once
    per set: a user's set is the same for every capture until a new name is filed."""
    singles: dict[str, str] = {}
    full_names: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for name in sorted(known):
        parts = tuple(name.lower().split())
        if len(parts) == 1:
            singles.setdefault(parts[0], name)
        elif parts:
            full_names.setdefault(parts[0], []).append((parts, name))
    return singles, full_names


def with_known(text: str, found: list[str], known: frozenset[str]) -> list[str]:
    """`found` (what the rules read in `text`) and the names of `known` (what `cued_people`
    remembered of the user's earlier captures) that `text` spells where the rules saw no one:
    a full name whole, a single name written lowercase unless it is an English word that the
    lists of first names hold too ("harj", "tam", not "will"), and never after an article
    ("the cqc") nor beside a capitalised word the rules left ("Theatre Royal")."""
    if not known:
        return found
    words = list(_WORD.finditer(text))
    keys = [POSSESSIVE.sub("", w.group(0)).lower() for w in words]
    taken = {p.lower() for n in found for p in n.split()}
    out = list(found)
    singles, full_names = _index(known)
    for i, key in enumerate(keys):
        for parts, name in full_names.get(key, ()):
            if name not in out and keys[i : i + len(parts)] == list(parts):
                out = [n for n in out if n.lower() not in parts] + [name]
                taken.update(parts)
    for i, key in enumerate(keys):
        if key not in singles or key in taken or key in COMMON | FAMILY:
            continue
        raw = POSSESSIVE.sub("", words[i].group(0))
        if raw == key and in_word_list(key) and known_name(key):
            # "will", "mark" in lowercase: a word, whatever the memory holds; a word no list of
            # first names holds ("tam", "bola") is remembered as the user's name for someone.
            continue
        end = words[i].end()
        if _INNER_CAPITAL.search(raw) or text[end : end + 1].isdigit():
            continue  # "ClearView", "Jet2": a brand, as the rules read it
        if i and not CLAUSE_BREAK.search(_gap(text, words, i - 1)):
            before = words[i - 1].group(0)
            if before.lower() in _BEFORE_A_THING:
                continue
            if before[:1].isupper() and before.lower() not in taken and i > 1:
                continue
        if i + 1 < len(words) and not CLAUSE_BREAK.search(_gap(text, words, i)):
            after = words[i + 1].group(0)
            if after[:1].isupper() and POSSESSIVE.sub("", after).lower() not in taken:
                continue
        if singles[key] not in out:
            out.append(singles[key])
        taken.add(key)
    return out
