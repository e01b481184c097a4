"""The offline answer's soft word match: a question's term that no capture found holds is
matched, for part of its weight, by a capture's word near it in meaning (single words' vectors,
`Embedder.word_similarities`, from the model's `word_line`): "bike" for "cycling", "flight" for
"plane", "renewal" for "renew"."""

from __future__ import annotations

from shared.domain.errors import EmbedderUnavailable
from shared.domain.ports import Embedder
from shared.services.ask_run import Source
from shared.services.ask_words import MONEY, STOP_WORDS, Asked, bare_word, stem, term_of, words_of

# A soft match is credited this share of the term's weight times the words' cosine. Measured
# on the six older tuning parts (bench/tools/ask_soft_words.py, bench/data/ASK_SETS.md): at
# MiniLM's line 0.45 the figures hold from 0.75 to 1.0 (four questions more cited), 0.5 gains one;
# a line of 0.4 answers four nothing-to-find questions more.
SOFT_CREDIT = 0.75
# A word shorter than this is not matched.
MIN_LETTERS = 3

# Per unheard term, each capture's credit: the share of the term's weight its words earn.
Soft = dict[str, dict[str, float]]


def unheard(asked: Asked, held: set[str]) -> dict[str, str]:
    """The question's terms none of `held` (the stems the captures found hold), each with the
    word it was asked as: not the money term (its own words answer it), not a name."""
    names = {term_of(n) for n in asked.names}
    out: dict[str, str] = {}
    for word in asked.words:
        term = term_of(word)
        if term in asked.terms and term not in held and term != MONEY and term not in names:
            out.setdefault(term, bare_word(word).casefold())
    return out


def vocabulary(found: list[Source], skip: set[str]) -> dict[str, set[str]]:
    """The captures' own words (casefolded; no stop words, numbers or short words, none whose
    stem is in `skip`), each with the ids of the captures that say it."""
    out: dict[str, set[str]] = {}
    for source in found:
        for word in words_of(f"{source.title} {source.text} {' '.join(source.people)}"):
            folded = bare_word(word).casefold()
            if len(folded) < MIN_LETTERS or folded in STOP_WORDS or not folded.isalpha():
                continue
            if stem(folded) not in skip:
                out.setdefault(folded, set()).add(source.id)
    return out


async def soft_matches(
    embedder: Embedder, asked: Asked, found: list[Source], held: set[str]
) -> Soft:
    """Each unheard term's soft matches among `found`: a capture holding a word whose cosine
    to the term reaches the model's `word_line` earns SOFT_CREDIT times the best such cosine.
    None where the model's words are not compared, where it cannot answer now, or where one
    unheard term is near nothing: the question asks of something never captured ("did I
    renew my passport?": "renewal" is near "renew", nothing near "passport")."""
    line = embedder.word_line
    terms = unheard(asked, held) if line is not None and SOFT_CREDIT else {}
    words = vocabulary(found, set(asked.terms)) if terms else {}
    if not words or line is None:
        return {}
    try:
        rows = await embedder.word_similarities(list(terms.values()), list(words))
    except EmbedderUnavailable:
        return {}
    out: Soft = {}
    for term, row in zip(terms, rows, strict=True):
        credits: dict[str, float] = {}
        for ids, cosine in zip(words.values(), row, strict=True):
            if cosine >= line:
                for i in ids:
                    credits[i] = max(credits.get(i, 0.0), SOFT_CREDIT * cosine)
        if not credits:
            return {}
        out[term] = credits
    return out
