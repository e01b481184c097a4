"""What a question asks for, and whether a capture holds it (`services/ask_kinds`)."""

from datetime import UTC, datetime

import pytest

from shared.services.ask_kinds import asked_for, holds, role, unanswered
from shared.services.ask_run import Question, Source
from shared.services.ask_words import MONEY, read_question


def source(text: str, people: tuple[str, ...] = ()) -> Source:
    return Source(
        id="c1",
        bucket="Projects",
        title=text[:20],
        text=text,
        people=list(people),
        created_at=datetime(2026, 11, 23, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("How much is the electrician charging for the fuse board?", ["amount"]),
        ("What did the surveyor charge?", ["amount"]),
        ("how much do I owe Priya?", ["amount"]),
        # "how much" of a thing is its price, though no money word is said.
        ("How much was the hotel in Leeds?", ["amount"]),
        # "how much" without money, and money without asking for an amount.
        ("how much did he weigh?", []),
        ("how much longer is the wait?", []),
        ("and how much of her time is she giving it?", []),
        ("Did I pay the deposit?", []),
        ("What shift am I doing for Aisha to pay her back?", []),
        ("What time does our flight leave?", ["time"]),
        ("How many guests are coming?", ["count"]),
        ("What's the name of the surgeon?", ["name"]),
        ("What's Lorna's fiancé called?", ["name"]),
        ("Who's doing the tiles now?", ["name"]),
        ("What's happening with the kitchen?", []),
    ],
)
def test_what_a_question_asks_for(question: str, kinds: list[str]) -> None:
    assert asked_for(question) == kinds


def test_how_much_of_a_thing_is_weighed_as_money() -> None:
    """ "How much am I getting back from Trefor?" is answered by the capture with the amount,
    as "how much money …" would be."""
    assert MONEY in read_question(Question(text="How much was the hotel in Leeds?")).terms
    assert MONEY not in read_question(Question(text="how much did he weigh?")).terms


def test_what_a_capture_holds() -> None:
    asked = read_question(Question(text="Who's Lorna marrying?"))
    assert holds(asked, source("kev's quote is 38500 all in"), "amount")
    assert holds(asked, source("new price £39,800"), "amount")
    assert not holds(asked, source("the surveyor was here 2 hrs"), "amount")
    assert holds(asked, source("drop her off at 9.45"), "time")
    assert holds(asked, source("kick off half past two"), "time")
    assert not holds(asked, source("flight on the 12th"), "time")
    assert holds(asked, source("thirty invited so far"), "count")
    # Someone other than whom the question names (a capitalised word counts: generous, since
    # an answer is blanked only where none is there).
    assert not holds(asked, source("Lorna's hen do is in june", ("Lorna",)), "name")
    assert holds(asked, source("Lorna is marrying Dev in May", ("Lorna", "Dev")), "name")


def test_unanswered_when_none_chosen_holds_what_is_asked() -> None:
    question = "What did the surveyor charge?"
    asked = read_question(Question(text=question))
    visit = source("the surveyor was here 2 hrs")
    invoice = source("surveyor's invoice: £450")
    assert unanswered(asked, question, [visit])
    assert not unanswered(asked, question, [visit, invoice])
    what = "What's happening with the survey?"
    assert not unanswered(read_question(Question(text=what)), what, [visit])


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What's Lorna's fiancé called?", "fiancé"),
        ("What was the Dell engineer's name?", "engineer"),
        ("What's the name of the surgeon who did Gwenda's hip?", "surgeon"),
        ("What's the name of Calvin's brother, the best man?", "brother"),
        ("What's the name of the lad who put the scaffolding up?", "lad"),
        ("who called about the boiler?", None),
        ("Who is doing the tiles?", None),
    ],
)
def test_the_role_a_name_is_asked_for(question: str, said: str | None) -> None:
    assert role(question) == said


def test_a_name_asked_for_by_its_role_needs_a_capture_that_says_the_role() -> None:
    question = "What's the name of the surgeon who did Gwenda's hip?"
    asked = read_question(Question(text=question))
    date_only = source("gwenda rang - hip op tues 17th, County Hospital", ("Gwenda",))
    assert unanswered(asked, question, [date_only])  # names someone, says no surgeon
    surgeon = source("gwenda's surgeon is Mr Okafor, lovely man", ("Gwenda", "Okafor"))
    assert not unanswered(asked, question, [date_only, surgeon])
    # The role's first letters are enough: "lads" for "lad", "tiles" for "tiler".
    tiler = "What's the tiler called?"
    tiles = source("Kuba is doing the tiles now", ("Kuba",))
    assert not unanswered(read_question(Question(text=tiler)), tiler, [tiles])
