"""How a person's typed answer to a question is read: does it name a bucket ("projects", "it's a
people one", "just put it in admin"), which one, and what else it says once the bucket words
are taken out. Only a bucket said as a pick counts: "people always forget" names no bucket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.domain.classification import Bucket, cut_title

_WORDS = {
    "people": Bucket.PEOPLE,
    "person": Bucket.PEOPLE,
    "project": Bucket.PROJECTS,
    "projects": Bucket.PROJECTS,
    "idea": Bucket.IDEAS,
    "ideas": Bucket.IDEAS,
    "admin": Bucket.ADMIN,
}
_BUCKET = r"(?P<bucket>people|person|projects?|ideas?|admin)"
# A bucket word as a pick: alone, or in the phrasings people use to file something somewhere.
_PICK = re.compile(
    r"(?:(?:no|nope|yes|yeah|actually|oh|um+|well|ok(?:ay)?|sorry)[\s,.!]+)*"
    r"(?:(?:just|please)\s+)?"
    r"(?:"
    # "put it in admin", "file this under people", "move it to the ideas bucket", "it goes in ideas"
    r"(?:(?:put|file|move|stick|throw|add|save)\s+(?:it|this|that)?\s*|(?:it|this|that)?\s*goes\s+)"
    r"(?:in|into|under|to|with|as)\s+(?:the\s+|my\s+|an?\s+)?"
    # "it's a people one", "that's a project", "it's for projects", "this is admin"
    r"|(?:it'?s|it\s+is|its|that'?s|that\s+is|this\s+is|this'?s)\s+(?:for\s+)?(?:the\s+|an?\s+)?"
    r"|(?:the\s+|an?\s+)"
    r")?"
    rf"{_BUCKET}"
    r"(?:\s+(?:one|thing|bucket|folder|list|pile))?"
    r"(?:\s+(?:please|thanks|thank\s+you))?",
    re.IGNORECASE,
)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})
# What may stand between the pick and the rest of the answer ("people - call Tariq").
_SEPARATOR = r"\s*(?:[-\u2013\u2014:;,.!]+|\bso\b|\bbut\b)\s*"
_LEADING = re.compile(rf"^(?P<pick>.+?){_SEPARATOR}(?P<rest>.+)$", re.DOTALL)
_TRAILING = re.compile(rf"^(?P<rest>.+){_SEPARATOR}(?P<pick>[^-\u2013\u2014:;,.!]+?)$", re.DOTALL)
_END_PUNCTUATION = " \t\n.!?,;:-\u2013\u2014"


@dataclass(frozen=True)
class Reading:
    """An answer, read: the bucket it picks (None: it only explains), and what else it says
    ("" when it is only a pick)."""

    bucket: Bucket | None
    rest: str


def read_answer(answer: str) -> Reading:
    """Whether `answer` picks a bucket: the whole answer is a pick ("Projects", "just put it in
    admin"), or a pick comes first or last, set off by a dash, colon or comma, with an
    explanation beside it ("it's a people one - follow up with Tariq")."""
    text = " ".join(answer.translate(_APOSTROPHES).split())
    whole = _pick_of(text)
    if whole is not None:
        return Reading(whole, "")
    if weighed := _two_buckets(text):
        return weighed
    for pattern in (_LEADING, _TRAILING):
        match = pattern.match(text)
        if match is None:
            continue
        bucket = _pick_of(match["pick"])
        rest = match["rest"].strip(_END_PUNCTUATION)
        if bucket is not None and any(ch.isalnum() for ch in rest):
            return Reading(bucket, rest)
    return Reading(None, text.strip())


# Words that may stand around bucket words when an answer weighs two of them ("admin not
# people:", "people I think, maybe projects -", "ideas or projects, ideas really -").
_HEDGES = {
    "not", "no", "isn't", "isnt", "than", "rather", "instead", "of", "more", "or", "maybe",
    "probably", "perhaps", "i", "think", "suppose", "guess", "really", "definitely", "actually",
    "just", "yet", "it's", "its", "it", "is", "a", "an", "the", "one", "but",
    "well", "hmm", "um", "either", "mostly", "both",
}  # fmt: skip
_NEGATIONS = {"not", "no", "isn't", "isnt", "than", "instead"}
_STRESSED = {"really", "definitely", "mostly"}
_TOKEN = re.compile(r"[\w']+|[^\w\s]")


def _two_buckets(text: str) -> Reading | None:
    """An answer that opens by weighing buckets, then says what the capture is: the bucket it
    keeps (not one it rejects, "admin not people"; the one it stresses, "ideas really"; else
    the first it names), and the rest."""
    tokens = list(_TOKEN.finditer(text))
    run_end = 0  # the end of the weighing, at its last punctuation
    picks: list[tuple[Bucket, bool, bool]] = []  # (bucket, rejected, stressed)
    kept: list[tuple[Bucket, bool, bool]] = []
    for n, token in enumerate(tokens):
        word = token.group(0).lower()
        if word in _WORDS:
            before = {t.group(0).lower() for t in tokens[max(0, n - 2) : n]}
            after = tokens[n + 1].group(0).lower() if n + 1 < len(tokens) else ""
            picks.append(
                (
                    _WORDS[word],
                    bool(before & _NEGATIONS),
                    after in _STRESSED or bool(before & _STRESSED),
                )
            )
        elif not re.fullmatch(r"[\w']+", word):
            run_end, kept = token.end(), list(picks)  # punctuation closes a part of the weighing
        elif word not in _HEDGES:
            break
    else:
        run_end, kept = len(text), list(picks)
    if len({bucket for bucket, _, _ in kept}) < 2 and not any(rejected for _, rejected, _ in kept):
        return None
    chosen = [p for p in kept if not p[1]]
    stressed = [p for p in chosen if p[2]]
    if not chosen:
        return None
    bucket = (stressed or chosen)[0][0]
    return Reading(bucket, text[run_end:].strip(_END_PUNCTUATION))


def _pick_of(phrase: str) -> Bucket | None:
    match = _PICK.fullmatch(phrase.strip(_END_PUNCTUATION))
    return _WORDS[match["bucket"].lower()] if match else None


TITLE_MAX = 60


def title_of(words: str) -> str:
    """A title made of a person's own words: the first line, at most 60 characters cut at a
    word, the first letter capitalised. None of them: "Capture"."""
    lines = [line for line in words.splitlines() if line.strip()]
    text = " ".join((lines[0] if lines else "").split()).strip(_END_PUNCTUATION)
    if not any(ch.isalnum() for ch in text):
        return "Capture"
    text = cut_title(text, TITLE_MAX)
    return text[0].upper() + text[1:]
