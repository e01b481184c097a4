"""The server's thresholds and the filed items' details, as plain functions."""

from datetime import date

import pytest

from shared.domain.capture import Clarification, InboxItem
from shared.domain.classification import Bucket, Classification
from shared.domain.details import details_for
from shared.domain.due_dates import due_date_in
from shared.domain.outcomes import Outcome, decide, question_for
from shared.domain.people import people_in


@pytest.mark.parametrize(
    ("bucket", "confidence", "expected"),
    [
        (Bucket.PEOPLE, 0.92, Outcome.CLASSIFIED),
        (Bucket.PEOPLE, 0.6, Outcome.CLASSIFIED),
        (Bucket.IDEAS, 0.59, Outcome.LOW_CONFIDENCE),
        (Bucket.IDEAS, 0.3, Outcome.LOW_CONFIDENCE),
        (Bucket.ADMIN, 0.29, Outcome.MISUNDERSTOOD),
        (None, 0.95, Outcome.MISUNDERSTOOD),  # the model cannot override "no bucket"
    ],
)
def test_thresholds_are_the_servers(bucket, confidence, expected) -> None:
    c = Classification(bucket=bucket, confidence=confidence, title="t")
    assert decide(c) is expected


def test_questions_are_never_empty_where_the_contract_needs_one() -> None:
    c = Classification(bucket=None, confidence=0.0, title="t")
    assert question_for(Outcome.MISUNDERSTOOD, c)
    low = Classification(bucket=Bucket.IDEAS, confidence=0.4, title="t")
    assert "Ideas" in question_for(Outcome.LOW_CONFIDENCE, low)
    assert question_for(Outcome.CLASSIFIED, low) is None


def test_people_and_due_dates() -> None:
    assert people_in("Call Sarah and ask Tom about Mum's birthday") == ["Sarah", "Tom", "Mum"]
    saturday = date(2026, 11, 21)
    assert due_date_in("pay the council tax tomorrow", saturday) == date(2026, 11, 22)
    assert due_date_in("dentist on monday", saturday) == date(2026, 11, 23)
    assert due_date_in("renew the car insurance", saturday) is None
    # Every bucket reads people and a due date, beside what the bucket itself adds.
    assert details_for(Bucket.PROJECTS, "ask Ottilie by friday", "Order tiles", saturday) == {
        "people": ["Ottilie"],
        "due_date": date(2026, 11, 27),
        "next_action": "Order tiles",
    }


@pytest.mark.parametrize(
    ("text", "people"),
    [
        # Titles dropped; a kinship word stays with the name (issue 40: "Grandma Rose" split).
        ("Prof Hughes and Auntie Pam are coming", ["Hughes", "Auntie Pam"]),
        ("ring grandma, then Granddad", ["Grandma", "Granddad"]),  # family words, any case
        ("Anne-Marie loves Noël's cooking", ["Anne-Marie", "Noël"]),  # hyphens, accents
        ("Siobhan O'Neill starts at Amazon in March", ["Siobhan O'Neill"]),  # firm, month
        ("Lunch w/ Fatima", ["Fatima"]),  # a sentence's first noun is no person
        ("Coffee with Pedro Alves. Lebanese at 8", ["Pedro Alves"]),  # full names, nationality
        ("Ravi is flying in from Pune", ["Ravi"]),  # "Ravi is": a person; from a place
        ("April's party, then Kemal moves to Krakow", ["April", "Kemal"]),  # possessive month
        ("an idea from Kenji, send it to Leila", ["Kenji", "Leila"]),  # from/to a person
        ("Kwame, Ana and Mum", ["Kwame", "Ana", "Mum"]),
        ("Mañana llamar a Lucía", ["Lucía"]),  # "a" is "to" in Spanish, not an article
        ("It's Raj's turn to host at Easter", ["Raj"]),  # sentence starts, holidays
        ("send Kim the NHS form and my CV", ["Kim"]),  # capitals are not names
    ],
)
def test_people_named(text: str, people: list[str]) -> None:
    assert people_in(text) == people


TUESDAY = date(2027, 2, 16)


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("renew the permit by 3 March", date(2027, 3, 3)),
        ("insurance due the 21st of feb", date(2027, 2, 21)),
        ("MOT on Jan 5th", None),  # passed six weeks ago: a past day, not next year's (#40)
        ("MOT on Jan 5th, book it in", None),
        ("dentist 12 jan", None),
        ("the Nov 30th deadline", date(2027, 11, 30)),  # passed long ago: next year's
        ("pay the deposit 2027-04-01", date(2027, 4, 1)),
        ("bins on the 16th", date(2027, 2, 16)),  # today counts
        ("parking fine by the 30th", date(2027, 3, 30)),  # no 30 February: the next one
        ("pension form end of the month", date(2027, 2, 28)),
        ("return the drill tonight", TUESDAY),
        ("optician friday", date(2027, 2, 19)),
        ("call the council on tuesday", date(2027, 2, 23)),  # a weekday said on it: next week's
        ("sort the boiler next week", None),  # vague: no date rather than a made-up one
        ("flights for may", None),
        ("buy 2 bags of compost", None),
        ("gift for her 70th by end of the month", date(2027, 2, 28)),  # an age is no day
        ("tax return 31 feb", None),  # no such day
        ("go to the market 3 times", None),  # "mar" inside a word is no month
        ("finish the plan by the end of March", date(2027, 3, 31)),
        ("bins end of January", date(2028, 1, 31)),  # this year's has passed
        ("the day after tomorrow the vet", date(2027, 2, 18)),
        # Other languages: the days, the relative words and dates as they write them.
        ("llamar a Lucía el viernes", date(2027, 2, 19)),
        ("mañana comprar pan", date(2027, 2, 17)),
        ("reunión por la mañana", None),  # the morning, not tomorrow
        ("pasado mañana el paquete", date(2027, 2, 18)),
        ("cumpleaños el 14 de diciembre", date(2027, 12, 14)),
        ("renovar o passaporte até sexta", date(2027, 2, 19)),
        ("na quinta vou ao médico", date(2027, 2, 18)),
        ("a segunda vez que tento", None),  # "the second time"
        ("entregar a 15 de dezembro", date(2027, 12, 15)),
        ("appeler Camille lundi", date(2027, 2, 22)),
        ("aujourd'hui payer le loyer", TUESDAY),
        ("anniversaire le 3 décembre", date(2027, 12, 3)),
        ("Arzttermin am 12. Dezember", date(2027, 12, 12)),
        ("heute Morgen Brötchen holen", TUESDAY),  # this morning: today
        ("übermorgen den Keller aufräumen", date(2027, 2, 18)),
        ("domani portare la bici", date(2027, 2, 17)),
        ("il 20 dicembre", date(2027, 12, 20)),
        ("morgen de vuilnisbak buitenzetten", date(2027, 2, 17)),
        ("zapłacić w piątek", date(2027, 2, 19)),
        ("w niedzielę obiad", date(2027, 2, 21)),
        ("urodziny 5 grudnia", date(2027, 12, 5)),
        ("imorgon betala hyran", date(2027, 2, 17)),
        ("boka tandläkaren på lördag", date(2027, 2, 20)),
    ],
)
def test_due_dates(text: str, due: date | None) -> None:
    assert due_date_in(text, TUESDAY) == due


@pytest.mark.parametrize(
    ("text", "due"),
    [
        # A weekday with its day of the month: the day of the month says which (#40).
        ("renew the parking permit by fri 26th", date(2027, 2, 26)),
        ("plumber comes thurs 25th", date(2027, 2, 25)),
        ("she starts sat 20th on the late shift", date(2027, 2, 20)),
        ("lunch fri, 40 people so far", date(2027, 2, 19)),  # a count is no day
        ("delayed until the 22nd now", date(2027, 2, 22)),
        # Recurring days: a list of days before "evenings", a plural after the day.
        ("yoga on mon or weds evenings", None),
        ("have them round for sunday lunches", None),
        ("ask about the thurs swim lessons", None),
        # A day a past verb happened on.
        ("the cat died on monday, so sad", None),
        ("flat viewing on monday", date(2027, 2, 22)),
        # "today" with a participle that says nothing of the past; tonight elsewhere.
        ("post the signed forms to the bank today", TUESDAY),
        ("the forms arrived today", None),
        ("llamar a tía carmen esta noche", TUESDAY),
        ("rehearse once more this afternoon", TUESDAY),
        ("she didn't know me today", None),  # a past in the negative
        ("Good Friday so the shop is shut", None),  # a holiday, not next Friday
        ("shop rota: jo can do the 20th after all", date(2027, 2, 20)),
        ("heute: stasera la pizza", TUESDAY),
    ],
)
def test_due_dates_kinds_of_false_dates(text: str, due: date | None) -> None:
    assert due_date_in(text, TUESDAY) == due


def test_a_short_days_list_written_on_that_day_is_today() -> None:
    saturday = date(2027, 2, 20)
    assert due_date_in("sat jobs: tip run, bike to the shop", saturday) == saturday
    assert due_date_in("sat jobs: tip run", date(2027, 2, 18)) == saturday


def test_misunderstood_becomes_unresolved_after_two_follow_up_rounds() -> None:
    unclear = Classification(bucket=None, confidence=0.1, title="?")
    assert [decide(unclear, rounds=n) for n in range(4)] == [
        Outcome.MISUNDERSTOOD,
        Outcome.MISUNDERSTOOD,
        Outcome.UNRESOLVED,
        Outcome.UNRESOLVED,
    ]
    sure = Classification(bucket=Bucket.PEOPLE, confidence=0.9, title="Sam")
    assert decide(sure, rounds=2) is Outcome.CLASSIFIED


def test_the_latest_clarification_comes_first_in_the_text_to_classify() -> None:
    item = InboxItem(id="c", user_id="u", source="voice", text="mmm", thread_id="t", run_id="r")
    assert item.text_to_classify() == "mmm"
    item.clarifications = [
        Clarification(run_id="a", text="the budget"),
        Clarification(run_id="b", text="call Sarah about the budget"),
    ]
    assert item.text_to_classify() == "call Sarah about the budget\nthe budget\nmmm"


def test_a_models_question_is_cut_to_what_a_phone_can_show() -> None:
    from shared.domain.outcomes import MAX_QUESTION_CHARS

    rambling = "Did you mean " + "the thing about the budget and the other thing " * 40 + "?"
    c = Classification(bucket=None, confidence=0.0, title="t", question=rambling)
    shown = question_for(Outcome.MISUNDERSTOOD, c)
    assert shown is not None and len(shown) <= MAX_QUESTION_CHARS and shown.endswith("…")
    assert shown.startswith("Did you mean the thing")
    short = Classification(bucket=Bucket.IDEAS, confidence=0.4, title="t", question="Ideas?")
    assert question_for(Outcome.LOW_CONFIDENCE, short) == "Ideas?"


@pytest.mark.parametrize(
    ("raw", "valid"),
    [
        ("Call \udfff Sarah", "Call \ufffd Sarah"),  # a lone low surrogate
        ("cut \ud83d", "cut \ufffd"),  # half an emoji, as JavaScript's slice leaves it
        ("\ud83d\ude00", "\U0001f600"),  # a pair split into two code points is joined
        ("plain", "plain"),
    ],
)
def test_every_string_that_comes_in_is_valid_unicode(raw: str, valid: str) -> None:
    from shared.domain.capture import InboxItem as Item
    from shared.domain.text import valid_text

    assert valid_text(raw) == valid
    stored = {
        "id": "i",
        "userId": "u",
        "source": "text",
        "threadId": raw,
        "runId": "r",
        "text": raw,
    }
    item = Item.model_validate(stored)  # as an old document is read back
    assert item.text == valid and item.thread_id == valid
    item.model_dump_json().encode("utf-8")
    c = Classification(bucket=None, confidence=0.0, title=raw, question=raw)
    assert c.title == valid and c.question == valid
