"""The words a capture may name people with (`candidates`): what the people rules
(shared/domain/people.py) took and the words they left that could be names, each with a few
general features a fitted decision weighs (bench/tools/fit_people.py measures one)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.domain.people import people_in
from shared.domain.people_lexicon import (
    a_past_form,
    english_words,
    everyday_word,
    first_names,
    in_word_list,
    places,
    surnames,
)
from shared.domain.people_words import (
    A_PERSONS_VERBS,
    ARTICLES,
    CLAUSE_BREAK,
    COMMON,
    FAMILY,
    KIN,
    LOWER_NOT_NAMES,
    PLACE_WORDS,
    POSSESSIVE,
    capitalised,
)

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_TITLES = {
    "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "dame", "cllr",
    "councillor", "rev", "revd", "herr", "frau", "señor", "señora", "sra", "madame", "mme",
}  # fmt: skip
# Before a person: "w Ana", "with", "ask", "call", "tell", "text", "to", "for".
_CUES_BEFORE = {
    "w", "with", "ask", "asked", "call", "called", "ring", "rang", "tell", "told", "text",
    "texted", "email", "emailed", "message", "to", "for", "from", "and", "cc", "ping",
    "meet", "met", "remind", "thank", "visit", "invite", "con", "mit", "y", "und", "a",
}  # fmt: skip
_SAYS = {"says", "said", "sagt", "dice", "dijo", "reckons", "thinks", "wants"}
_IS = {"is", "was", "ist", "es", "está", "has", "had", "hat"}
# Words Spanish or German put in a clause and English does not.
_ELSEWHERE = {
    "el", "la", "los", "las", "y", "que", "de", "del", "con", "para", "por", "es", "está",
    "una", "pero", "muy", "mañana", "hoy", "der", "die", "das", "und", "ist", "nicht", "mit",
    "für", "ich", "wir", "heute", "morgen", "auch", "noch", "den", "dem", "ein", "eine",
}  # fmt: skip
_SENTENCE_END = re.compile(r"[.!?;:\n]\s*['\"\u2018\u201c]*$")

FEATURES = (
    "taken", "two_words", "family", "kin_with_name", "common_first_name",
    "rare_first_name", "word_first_name", "surname", "english_word", "everyday_word",
    "place", "capitalised", "all_caps", "opens_capture", "opens_sentence", "title_before",
    "kin_before", "cue_before", "possessive", "says_after", "is_after", "persons_verb_after",
    "past_after", "elsewhere", "short", "length", "said_twice", "common_word", "proper_noun_listed",
    "capitalised_next", "capitalised_before", "article_before", "place_word_before",
    "lowercase_writer", "pronoun_in_capture",
)  # fmt: skip


@dataclass(frozen=True)
class Candidate:
    """A name a capture may hold, as it would be filed, and its features (FEATURES' order)."""

    name: str
    features: tuple[float, ...]


def candidates(text: str) -> list[Candidate]:
    """Every name the rules took (spelt as they spell it) and every word they left that could
    be a name: capitalised and not opening a sentence, a word a name list holds, or a word
    after a title or a kinship word; each once, in the order the capture says them."""
    words = list(_WORD.finditer(text))
    taken = people_in(text)
    taken_words = {w.lower() for name in taken for w in name.split()}
    out: list[Candidate] = []
    for name in taken:
        first = name.split()[0].lower()
        at = next(
            (j for j, m in enumerate(words) if POSSESSIVE.sub("", m.group(0)).lower() == first),
            None,
        )
        out.append(Candidate(name, _features(text, words, at, name, True)))
    seen = set(taken_words)
    for j, match in enumerate(words):
        word = POSSESSIVE.sub("", match.group(0))
        low = word.lower()
        if low in seen or len(word) < 2 or low in COMMON or low in LOWER_NOT_NAMES:
            continue
        before = words[j - 1].group(0).lower() if j else ""
        if not (
            (word[:1].isupper() and not _opens(text, words, j))
            or low in first_names()
            or low in surnames()
            or before in _TITLES
            or before in KIN
        ):
            continue
        seen.add(low)
        name = word if word[:1].isupper() and not word.isupper() else capitalised(low)
        out.append(Candidate(name, _features(text, words, j, name, False)))
    return out


def _opens(text: str, words: list[re.Match[str]], j: int) -> bool:
    """Does `words[j]` open the capture or a sentence?"""
    return j == 0 or bool(_SENTENCE_END.search(text[: words[j].start()]))


def _features(
    text: str, words: list[re.Match[str]], j: int | None, name: str, taken: bool
) -> tuple[float, ...]:
    """The features of `name` (FEATURES' order), read at `words[j]`, where its first word is
    written (None: not found as a word, a spelling the rules made)."""
    first = name.split()[0]
    low = first.lower()
    mark = first_names().get(low)
    raw = words[j].group(0) if j is not None else first
    word = POSSESSIVE.sub("", raw)
    before = words[j - 1].group(0).lower() if j else ""
    inside = j is not None and j + 1 < len(words)
    gap = text[words[j].end() : words[j + 1].start()] if inside and j is not None else "."
    after = words[j + 1].group(0).lower() if inside and j is not None else ""
    if CLAUSE_BREAK.search(gap):
        after = ""
    lows = [m.group(0).lower() for m in words]
    elsewhere = sum(w in _ELSEWHERE for w in lows)
    last = name.split()[-1].lower()
    return (
        float(taken),
        float(" " in name),
        float(low in FAMILY and " " not in name),
        float(low in KIN and " " in name),
        float(mark == ""),
        float(mark == "r"),
        float(mark == "w"),
        float(last in surnames()),
        float(in_word_list(low)),
        float(everyday_word(first)),
        float(low in places()),
        float(word[:1].isupper()),
        float(len(word) > 1 and word.isupper()),
        float(j == 0),
        float(j is not None and _opens(text, words, j)),
        float(before in _TITLES),
        float(before in KIN and " " not in name),
        float(before in _CUES_BEFORE),
        float(bool(POSSESSIVE.search(raw))),
        float(after in _SAYS),
        float(after in _IS),
        float(after in A_PERSONS_VERBS),
        float(a_past_form(after)),
        float(elsewhere >= 2),
        float(len(first) <= 3),
        len(first) / 10,
        float(sum(POSSESSIVE.sub("", w) == low for w in lows) > 1),
        float(low in COMMON),
        float(capitalised(low) in english_words()),
        float(bool(after[:1]) and words[j + 1].group(0)[:1].isupper()) if j is not None else 0.0,
        float(bool(j) and not _opens(text, words, j - 1) and words[j - 1].group(0)[:1].isupper())
        if j is not None
        else 0.0,
        float(before in ARTICLES or before in {"the", "a", "an", "el", "la", "der", "die", "das"}),
        float(before in PLACE_WORDS or before in {"in", "at", "near", "en", "im"}),
        float(sum(m.group(0)[:1].isupper() for m in words) <= 1),
        float(any(w in {"she", "he", "her", "him", "his", "hers"} for w in lows)),
    )
