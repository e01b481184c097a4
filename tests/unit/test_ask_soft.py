"""The offline answer's soft word match (services/ask_soft.py) on the fakes: a question's word
no capture holds matched by a capture's word near it (the embedder's `word_similarities`,
from its `word_line`), for part of its weight; below the line, with an unheard word near
nothing, with a model whose words are not compared, or with the words' model down, the answer
is as without it. And the adapters' bounded cache of words' vectors."""

from __future__ import annotations

import pytest

from shared.adapters.embedder.words import WordVectors
from shared.domain.errors import EmbedderUnavailable
from shared.services import ask_offline, ask_soft
from shared.services.ask import new_question
from shared.services.ask_soft import unheard
from shared.services.ask_words import MONEY, read_question
from tests.fakes import Fakes
from tests.unit.office_captures import cited, office

# "bike" and "cycling" 0.8 alike; "bike" and "mondays" 0.4.
BIKE = [1.0, 0.0, 0.0]
CYCLING = [0.8, 0.6, 0.0]
MONDAYS = [0.4, 0.0, 0.916515]


def _words(fakes: Fakes, line: float | None, **vectors: list[float]) -> None:
    fakes.embedder.word_line = line
    fakes.embedder.word_vectors.update(vectors)


async def test_a_word_no_capture_holds_is_matched_by_one_near_it(fakes: Fakes) -> None:
    made = await office(fakes)
    # Without the soft match "bike" is a word no capture holds: "office" alone, which both
    # captures hold, is not enough to answer.
    assert await cited(fakes, "is the office bike thing still on?") == []
    assert fakes.embedder.words_compared == []  # this model's words are not compared
    _words(fakes, 0.5, bike=BIKE, cycling=CYCLING)
    assert await cited(fakes, "is the office bike thing still on?") == [made["cycling"]]
    # One call a question: the unheard word and the captures' own words (not "office", which
    # the question holds, nor stop words).
    terms, words = fakes.embedder.words_compared[-1]
    assert terms == ["bike"] and "cycling" in words and "party" in words
    assert "office" not in words and "the" not in words


async def test_only_the_best_candidates_words_are_compared(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await office(fakes)
    _words(fakes, 0.5, bike=BIKE, cycling=CYCLING)
    monkeypatch.setattr(ask_offline, "SOFT_CANDIDATES", 0)
    assert await cited(fakes, "is the office bike thing still on?") == []
    assert fakes.embedder.words_compared == []
    monkeypatch.setattr(ask_offline, "SOFT_CANDIDATES", 2)
    assert await cited(fakes, "is the office bike thing still on?") == [made["cycling"]]


async def test_a_word_below_the_line_is_no_match(fakes: Fakes) -> None:
    await office(fakes)
    _words(fakes, 0.5, bike=BIKE, cycling=[0.4, 0.916515, 0.0])
    assert await cited(fakes, "is the office bike thing still on?") == []


async def test_the_credit_is_part_of_the_words_weight(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await office(fakes)
    _words(fakes, 0.5, bike=BIKE, cycling=CYCLING)
    # A credit so small that the near word does not lift the capture over the cut.
    monkeypatch.setattr(ask_soft, "SOFT_CREDIT", 0.1)
    assert await cited(fakes, "is the office bike thing still on?") == []
    monkeypatch.setattr(ask_soft, "SOFT_CREDIT", 0.75)
    assert await cited(fakes, "is the office bike thing still on?") == [made["cycling"]]


async def test_an_unheard_word_near_nothing_leaves_the_question_unanswered(fakes: Fakes) -> None:
    await office(fakes)
    _words(fakes, 0.5, bike=BIKE, cycling=CYCLING, mondays=MONDAYS)
    # "helmet" is near no word of the captures: the question asks of something never
    # captured, and "bike" near "cycling" does not make it answered.
    assert await cited(fakes, "is the office bike helmet still on?") == []


async def test_without_the_words_model_the_answer_is_as_without_the_match(fakes: Fakes) -> None:
    await office(fakes)
    _words(fakes, 0.5, bike=BIKE, cycling=CYCLING)
    fakes.embedder.fail_next("word_similarities", EmbedderUnavailable("down"))
    assert await cited(fakes, "is the office bike thing still on?") == []


@pytest.mark.parametrize(
    ("question", "held", "expected"),
    [
        ("is the office bike thing still on?", {"offic"}, {"bik": "bike"}),
        # A name the question gives is not matched by meaning, nor money (its own words).
        ("what did Priya say about the bikes?", set(), {"bik": "bikes"}),
        ("how much was the bike?", set(), {"bik": "bike"}),
        ("is the office bike thing still on?", {"offic", "bik"}, {}),
    ],
)
def test_unheard_terms_are_those_no_capture_holds(
    question: str, held: set[str], expected: dict[str, str]
) -> None:
    asked = read_question(new_question(question))
    found = unheard(asked, held)
    assert found == expected
    assert MONEY not in found


async def test_words_vectors_are_remembered_within_a_bound() -> None:
    embedded: list[list[str]] = []
    table = {"bike": [3.0, 0.0], "cycling": [0.8, 0.6], "tax": [0.0, 2.0], "vat": [0.0, 1.0]}

    async def embed(words: list[str]) -> list[list[float]]:
        embedded.append(list(words))
        return [table[w] for w in words]

    vectors = WordVectors(embed, size=3)
    rows = await vectors.similarities(["bike"], ["cycling", "tax"])
    assert rows == [[pytest.approx(0.8), pytest.approx(0.0)]]  # unit length first
    assert embedded == [["bike", "cycling", "tax"]]
    # Only the words not remembered are embedded; the least recently used goes past the bound.
    await vectors.similarities(["bike"], ["vat"])
    assert embedded[-1] == ["vat"] and vectors.embedded == 4
    await vectors.similarities(["cycling"], ["bike"])
    assert embedded[-1] == ["cycling"]  # dropped for "vat" (the least recently used)
    vectors.clear()
    await vectors.similarities(["bike"], ["bike"])
    assert embedded[-1] == ["bike"]
