"""WordNet's related words as the soft match's second way (bench/tools/ask_wordnet.py), on the
fakes through the app's offline path: a question's word no capture holds matched by a
capture's word the table relates to it, by the relations chosen, for part of its weight; an
unheard word related to nothing still leaves the question unanswered."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from bench.tools.ask_wordnet import (
    Table,
    base_forms,
    load_table,
    related_to,
    soft_with_wordnet,
    wordnet_credits,
)
from shared.services import ask_offline
from tests.fakes import Fakes
from tests.unit.office_captures import cited, office

TABLE: Table = {
    "bike": {"s": frozenset({"bicycle"}), "d": frozenset({"cycling"})},
    "solicitor": {"u": frozenset({"lawyer"})},
}


def _use(monkeypatch: pytest.MonkeyPatch, relations: str, credit: float) -> None:
    monkeypatch.setattr(ask_offline, "_soft", soft_with_wordnet(TABLE, relations, credit))


async def test_a_related_word_answers_by_the_relations_chosen(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await office(fakes)
    assert await cited(fakes, "is the office bike thing still on?") == []
    _use(monkeypatch, "s", 0.75)  # "bicycle" only: no capture says it
    assert await cited(fakes, "is the office bike thing still on?") == []
    _use(monkeypatch, "sd", 0.75)
    assert await cited(fakes, "is the office bike thing still on?") == [made["cycling"]]
    # A plural asked is read as its singular.
    assert await cited(fakes, "are the office bikes still on?") == [made["cycling"]]


async def test_the_credit_is_part_of_the_words_weight(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await office(fakes)
    _use(monkeypatch, "sd", 0.1)
    assert await cited(fakes, "is the office bike thing still on?") == []
    _use(monkeypatch, "sd", 0.75)
    assert await cited(fakes, "is the office bike thing still on?") == [made["cycling"]]


async def test_an_unheard_word_related_to_nothing_leaves_it_unanswered(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await office(fakes)
    _use(monkeypatch, "sd", 0.75)
    assert await cited(fakes, "is the office bike helmet still on?") == []
    # Without the guard (a variant measured) the related word answers alone.
    loose = soft_with_wordnet(TABLE, "sd", 0.75, guard=False)
    monkeypatch.setattr(ask_offline, "_soft", loose)
    assert await cited(fakes, "is the office bike helmet still on?") == [made["cycling"]]


def test_related_words_and_their_credits() -> None:
    assert base_forms("solicitors") == ["solicitors", "solicitor"]
    assert "lorry" in base_forms("lorries")
    assert related_to(TABLE, "solicitors", "u") == {"lawyer"}
    assert related_to(TABLE, "solicitors", "sd") == set()
    words = {"lawyers": {"a"}, "office": {"a", "b"}}
    assert wordnet_credits(TABLE, "u", 0.6, {"solicitor": "solicitor"}, words) == {
        "solicitor": {"a": 0.6}
    }
    assert wordnet_credits(TABLE, "s", 0.6, {"solicitor": "solicitor"}, words) == {"solicitor": {}}


def test_the_table_is_read_from_the_generators_file(tmp_path: Path) -> None:
    path = tmp_path / "t.txt.gz"
    with gzip.open(path, "wt") as out:
        out.write("# licence\nsurgery\ts:operation\tu:procedure,medicine\n")
    assert load_table(path) == {
        "surgery": {"s": frozenset({"operation"}), "u": frozenset({"procedure", "medicine"})}
    }
