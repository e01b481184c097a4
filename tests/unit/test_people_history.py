"""The user's own history of people (issue 40): what is remembered of a capture, how a later
capture reads it, and the bench's replay of a month in order."""

from __future__ import annotations

from datetime import datetime

from bench.labelled import LabelledCapture
from bench.tools.people_history import figures, main, replay
from shared.domain.people import people_in
from shared.domain.people_history import cued_people, with_known


def test_a_name_said_with_a_cue_is_remembered() -> None:
    for text in ("Harj says the board paper is late", "ask harj about the paper", "harj's paper"):
        assert cued_people(text, people_in(text)) == ["Harj"], text


def test_a_name_found_with_no_persons_cue_is_not_remembered() -> None:
    # "rang" and "'s" of a firm are no person's cue: one wrong reading must not spread.
    assert cued_people("Currys rang: the part's in", ["Currys"]) == []
    assert cued_people("Xero's price rise is nuts", ["Xero"]) == []
    assert cued_people("cqc rang the switchboard", ["Cqc"]) == []
    # An everyday word reached by a contact verb is a firm as often as a person ("ring
    # Admiral"); a name that is none is remembered so ("ring Harj"), and a word is after a
    # person's verb ("Rose says").
    assert cued_people("ring Admiral first thing mon", ["Admiral"]) == []
    assert cued_people("ring Harj first thing mon", ["Harj"]) == ["Harj"]
    assert cued_people("Rose says hi", ["Rose"]) == ["Rose"]


def test_who_said_it_after_what_they_said_is_remembered() -> None:
    # "the loader rejects them says horatio,": a name after "says" where the clause ends; not
    # an everyday word ("says Admiral.") nor a name before more of the clause.
    assert cued_people("the loader rejects them says horatio, fix it", ["Horatio"]) == ["Horatio"]
    assert cued_people("cover's fine says Admiral.", ["Admiral"]) == []
    assert cued_people("sent it, says horatio will check", ["Horatio"]) == []
    # ... and who signed a message ("Kind regards, Perdita").
    assert cued_people("'see you then. Thanks, Perdita' -> reply", ["Perdita"]) == ["Perdita"]


def test_kinship_and_full_names_are_remembered_whole_and_by_first_name() -> None:
    assert cued_people("ring nana elsie", ["Nana Elsie"]) == ["Elsie"]
    # The name after someone else's family word is remembered ("quique's dad salva").
    text = "quique's dad salva had a scan today"
    assert people_in(text) == ["Quique", "Salva"]
    assert cued_people(text, people_in(text)) == ["Quique", "Salva"]
    # ... and its surname where no word list holds it, as the user says it later on its own
    # ("brackenbury's wheat" after "roger brackenbury"); not a surname that is a word.
    assert cued_people("benedict orme pulled out", ["Benedict Orme"]) == [
        "Benedict Orme",
        "Benedict",
        "Orme",
    ]
    assert cued_people("roger baker pulled out", ["Roger Baker"]) == ["Roger Baker", "Roger"]
    known = frozenset(cued_people("harvest order: roger brackenbury first", ["Roger Brackenbury"]))
    assert people_in("brackenbury's wheat fit mon", known) == ["Brackenbury"]
    # A full name whose first word the lists do not hold as a first name: a place, a firm.
    assert cued_people("Keelmen Homes will require", ["Keelmen Homes"]) == []


def test_a_known_name_is_read_where_the_rules_alone_see_no_one() -> None:
    text = "harj board paper fri"
    assert people_in(text) == []
    assert people_in(text, frozenset({"Harj"})) == ["Harj"]
    assert people_in("refunds for the benedict orme event", frozenset({"Benedict Orme"})) == [
        "Benedict Orme"
    ]


def test_a_known_spelling_does_not_make_a_thing_a_person() -> None:
    known = frozenset({"Massey", "Royal", "Will", "Jet", "Clear"})
    # After an article, beside a capitalised word the rules left, an English word in
    # lowercase, a brand's inner capital or a number glued on: the rules' "no one" stands.
    assert people_in("keep the Massey going till then", known) == []
    assert people_in("a job at the Theatre Royal Plymouth", known) == []
    assert people_in("will do it fri", known) == []
    # A word no list of first names holds is the user's name for someone once remembered.
    assert people_in("joiner tam finishes thurs", frozenset({"Tam"})) == ["Tam"]
    assert people_in("joiner tam finishes thurs") == []
    assert people_in("fly Jet2 on the 3rd", known) == []
    assert with_known("ClearView quote came", [], known) == []


def test_what_the_rules_found_is_kept_and_not_doubled() -> None:
    assert people_in("Harj and harj's kid", frozenset({"Harj"})) == ["Harj"]
    assert with_known("ask Priya", ["Priya"], frozenset()) == ["Priya"]


def _capture(i: int, text: str, people: list[str]) -> LabelledCapture:
    return LabelledCapture(
        id=f"t{i}",
        text=text,
        label="Projects",
        people=tuple(people),
        captured=datetime(2026, 1, i + 1, 9, 0),
    )


def test_the_replay_remembers_only_what_came_before_in_the_order_written() -> None:
    later = _capture(5, "harj board paper fri", ["Harj"])
    earlier = _capture(1, "Harj says the board paper slips", ["Harj"])
    # Given out of order: the replay sorts by `captured`, so the cue comes first.
    assert figures(replay([later, earlier], None))[0] == 1
    assert figures(replay([later, earlier], "cued"))[0] == 2
    # Nothing earlier: the memory is empty for the first capture.
    assert figures(replay([later], "cued"))[0] == 0


def test_the_tool_prints_a_table_for_a_tuning_set() -> None:
    lines: list[str] = []
    assert main(["--set", "details3", "--variant", "cued"], out=lines.append) == 0
    assert lines[0].startswith("| set | rules alone | cued |")
    assert lines[2].startswith("| `details3` | ")
    assert lines[-1].startswith("| **all** (")
