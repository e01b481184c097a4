"""The clause weighing measured beside the offline answer's own (bench/tools/ask_clauses.py): a
capture split into the clauses it says, the clause nearest the question found with its margin,
its weight as each variant puts it, and the app's path with it installed (then put back)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench.tools import ask_clauses
from bench.tools.ask_clauses import Clause, best_clause, clause_weight, clauses_of, installed
from shared.domain.classification import Bucket
from shared.services import ask_compose, ask_offline
from shared.services.ask import AskLimits, answer_of, ask, new_question
from shared.services.ask_offline import MEANING_WEIGHT
from shared.services.embedding import with_embedding
from shared.services.filing import file_capture
from tests.fakes import USER, Fakes, text_item


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        # A short capture is one clause, however it is punctuated.
        ("paid the hydro bill - done", ["paid the hydro bill - done"]),
        (
            "Callum says Raj is off for 6 wks. He's had a knee op, so Gary's doing our "
            "electrics now",
            [
                "Callum says Raj is off for 6 wks.",
                "He's had a knee op",
                "so Gary's doing our electrics now",
            ],
        ),
        (
            "garden room: quote £14,800 for the 3x4m one\nelectrics NOT incl - wants 30% deposit",
            [
                "garden room: quote £14,800 for the 3x4m one",
                "electrics NOT incl",
                "wants 30% deposit",
            ],
        ),
        (
            "the boiler man came round today; new pump needed but he has none in stock",
            ["the boiler man came round today", "new pump needed", "but he has none in stock"],
        ),
        # A piece of a word or two joins the next, and a last one the one before.
        (
            "Done. The tiler starts on Monday at eight sharp, Kuba says. OK!",
            ["Done. The tiler starts on Monday at eight sharp, Kuba says. OK!"],
        ),
        (
            "Rang them. The quote for the loft is £9,200 with the dormer. Fine.",
            ["Rang them. The quote for the loft is £9,200 with the dormer. Fine."],
        ),
    ],
)  # fmt: skip
def test_a_capture_is_split_into_the_clauses_it_says(text: str, clauses: list[str]) -> None:
    assert clauses_of(text) == clauses


def test_an_empty_capture_has_no_clause() -> None:
    assert clauses_of("  ") == []


def test_the_best_clause_is_the_nearest_with_its_margin_over_the_others() -> None:
    question = [1.0, 0.0]
    clause = best_clause(question, ["far", "near", "aside"], [[0.0, 1.0], [0.8, 0.6], [0.6, 0.8]])
    assert clause.text == "near"
    assert clause.similarity == pytest.approx(0.8)
    assert clause.margin == pytest.approx(0.8 - (0.0 + 0.6) / 2)
    one = best_clause(question, ["only"], [[2.0, 0.0]])
    assert one == Clause(pytest.approx(1.0), 0.0, "only")


@pytest.fixture
def variant(monkeypatch: pytest.MonkeyPatch):
    def set_(**constants: object) -> None:
        for name, value in constants.items():
            monkeypatch.setattr(ask_clauses, name, value)

    return set_


def test_without_a_clause_the_weight_is_the_apps(variant) -> None:
    variant(CLAUSE_WEIGHT=1.0, CLAUSE_MARGIN=1.0)
    assert clause_weight(0.2, 0.5, None, 0.0, 0.3, 0.3) == pytest.approx(0.5 + MEANING_WEIGHT * 0.2)


def test_the_best_clause_adds_its_meaning_over_its_floor(variant) -> None:
    clause = Clause(0.65, 0.2, "so Gary's doing our electrics now")
    # As shipped (every weight 0, "add"): the app's weight.
    assert clause_weight(0.1, 0.4, clause, 1.0, 0.3, 0.3) == pytest.approx(
        0.4 + MEANING_WEIGHT * 0.1
    )
    variant(CLAUSE_WEIGHT=0.5, CLAUSE_FLOOR=0.45)
    near = (0.65 - 0.45) / 0.7
    assert clause_weight(0.1, 0.4, clause, 1.0, 0.3, 0.3) == pytest.approx(
        0.4 + MEANING_WEIGHT * 0.1 + 0.5 * near
    )
    # Over the named person's median where that is higher than the floor, as the app's.
    assert clause_weight(0.1, 0.4, clause, 1.0, 0.6, 0.3) == pytest.approx(
        0.4 + MEANING_WEIGHT * 0.1 + 0.5 * (0.65 - 0.6) / 0.7
    )
    # Under its floor it adds nothing.
    low = Clause(0.4, 0.0, "x")
    assert clause_weight(0.1, 0.4, low, 1.0, 0.3, 0.3) == pytest.approx(0.4 + MEANING_WEIGHT * 0.1)


def test_the_best_clause_in_place_of_the_whole_its_margin_and_its_words(variant) -> None:
    clause = Clause(0.65, 0.2, "x")
    near = (0.65 - 0.3) / 0.7
    variant(CLAUSE_MODE="max")
    assert clause_weight(0.1, 0.4, clause, 0.0, 0.3, 0.3) == pytest.approx(
        0.4 + MEANING_WEIGHT * near
    )
    assert clause_weight(0.9, 0.4, clause, 0.0, 0.3, 0.3) == pytest.approx(
        0.4 + MEANING_WEIGHT * 0.9
    )
    variant(CLAUSE_MODE="replace")
    assert clause_weight(0.9, 0.4, clause, 0.0, 0.3, 0.3) == pytest.approx(
        0.4 + MEANING_WEIGHT * near
    )
    variant(CLAUSE_MODE="add", CLAUSE_MARGIN=0.5, CLAUSE_WORDS=0.5)
    assert clause_weight(0.1, 0.4, clause, 1.0, 0.3, 0.3) == pytest.approx(
        0.5 * 0.4 + 0.5 * 1.0 + MEANING_WEIGHT * 0.1 + 0.5 * 0.2
    )


MON = datetime(2026, 11, 23, 9, tzinfo=UTC)


async def test_installed_it_weighs_the_best_candidates_clauses_and_puts_the_app_back(
    fakes: Fakes, variant
) -> None:
    texts = [
        "Garden room: Callum came round to measure up. Raj off for six weeks, so Gary is "
        "doing our electrics now",
        "What is the garden room actually for? Euan says an office, I say a guest room",
    ]
    made = []
    for day, text in enumerate(texts):
        item = text_item(text, user_id=USER, created_at=MON + timedelta(days=day))
        item = fakes.repo.seed(await with_embedding(item, fakes.embedder))
        made.append(
            await file_capture(item, item.picked(Bucket.PROJECTS, ""), fakes.repo, fakes.outbox)
        )
    app = (ask_offline._meaning, ask_offline._weigh, ask_compose.best_quote)
    variant(CLAUSE_WEIGHT=0.5, CLAUSE_QUOTE=True)
    with installed():
        done = await answer_of(
            ask(
                USER,
                new_question("who is doing the garden room electrics?"),
                MON + timedelta(days=7),
                AskLimits(),
                fakes.adapters,
            )
        )
        # Both captures' clauses were embedded, in one call beside the question.
        assert "so Gary is doing our electrics now" in fakes.embedder.texts
        assert "What is the garden room actually for?" in fakes.embedder.texts
    assert (ask_offline._meaning, ask_offline._weigh, ask_compose.best_quote) == app
    assert ask_clauses._CLAUSES == {}
    assert made[0].id in [c.capture_id for c in done.answer.citations]
    assert "Gary" in done.answer.answer
