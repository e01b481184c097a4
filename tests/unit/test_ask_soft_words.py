"""The soft word match's measure (bench/tools/ask_soft_words.py): a set's figures as questions,
a variant set on what holds it (the embedder's `word_line` for SOFT_LINE) and put back, and
the word comparisons counted, timed and put back."""

from __future__ import annotations

from typing import Any

import pytest

from bench.tools import ask_soft_words
from bench.tools.ask_soft_words import Words, counts, recording
from shared.adapters.embedder.words import WordVectors
from shared.services import ask_offline, ask_soft


def test_a_sets_figures_are_counted_as_questions() -> None:
    answered = [{"nothing": False}] * 4 + [{"nothing": True}] * 2
    scored = {"all_cited": 0.75, "one_cited": 1.0, "facts": 0.5, "nothing_clean": 0.5}
    assert counts(scored, answered) == {
        "all_cited": 3,
        "one_cited": 4,
        "facts": 2,
        "nothing_clean": 1,
    }


class _Embedder:
    word_line: float | None = 0.45

    def __init__(self) -> None:
        table = {"bike": [1.0, 0.0], "cycling": [0.8, 0.6], "tax": [0.0, 1.0]}

        async def embed(words: list[str]) -> list[list[float]]:
            return [table[w] for w in words]

        self.words = WordVectors(embed)

    async def word_similarities(self, terms: list[str], words: list[str]) -> list[list[float]]:
        return await self.words.similarities(terms, words)


def test_a_variant_is_set_where_it_is_held_and_put_back() -> None:
    embedder = _Embedder()
    was = ask_soft_words._set({"SOFT_LINE": 0.6, "SOFT_CREDIT": 0.5, "ANSWER_CUT": 0.5}, embedder)
    assert (embedder.word_line, ask_soft.SOFT_CREDIT, ask_offline.ANSWER_CUT) == (0.6, 0.5, 0.5)
    for held, name, value in was.values():
        setattr(held, name, value)
    assert embedder.word_line == 0.45 and ask_soft.SOFT_CREDIT == 0.75
    with pytest.raises(SystemExit):
        ask_soft_words._set({"NO_SUCH": 1}, embedder)


@pytest.mark.parametrize("cold", [False, True])
async def test_word_comparisons_are_counted_and_put_back(cold: bool) -> None:
    embedder: Any = _Embedder()
    words = Words()
    with recording(embedder, words, cold):
        await embedder.word_similarities(["bike"], ["cycling", "tax"])
        await embedder.word_similarities(["bike"], ["cycling"])
    assert words.asked == [3, 2]
    assert words.embedded == ([3, 2] if cold else [3, 0])
    assert words.pairs == [("bike", "cycling", 0.8), ("bike", "cycling", 0.8)]
    assert len(words.spent_ms) == 2
    assert "word_similarities" not in vars(embedder)  # the class's own again
