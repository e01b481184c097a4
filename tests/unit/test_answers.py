"""shared/domain/answers.py: which typed answers pick a bucket, in the many ways people say it,
which do not (a bucket word in a sentence is not a pick), and what remains of an answer; and
the words a confidence is shown in."""

from __future__ import annotations

import pytest

from shared.domain.answers import Reading, read_answer, title_of
from shared.domain.classification import Bucket
from shared.domain.outcomes import confidence_words

P, PR, ID, A = Bucket.PEOPLE, Bucket.PROJECTS, Bucket.IDEAS, Bucket.ADMIN


@pytest.mark.parametrize(
    ("answer", "bucket"),
    [
        ("Projects", PR),
        ("projects", PR),
        ("project", PR),
        ("Admin.", A),
        ("People!", P),
        ("  ideas  ", ID),
        ("an idea", ID),
        ("a person", P),
        ("it's a people one", P),
        ("it\u2019s a people one", P),
        ("its a people one", P),
        ("it is a project", PR),
        ("that's a project", PR),
        ("this is admin", A),
        ("it's for projects", PR),
        ("just put it in admin", A),
        ("put that in Admin", A),
        ("file it under people please", P),
        ("move it to the ideas bucket", ID),
        ("stick it in my admin pile", A),
        ("it goes in ideas", ID),
        ("goes under projects", PR),
        ("projects bucket", PR),
        ("the people one", P),
        ("admin please", A),
        ("no, projects", PR),
        ("nope, it's the Ideas bucket", ID),
        ("actually admin", A),
    ],
)
def test_an_answer_that_is_only_a_pick(answer: str, bucket: Bucket) -> None:
    assert read_answer(answer) == Reading(bucket, "")


@pytest.mark.parametrize(
    ("answer", "bucket", "rest"),
    [
        (
            "it's a people one - follow up with Tariq about the reference",
            P,
            "follow up with Tariq about the reference",
        ),
        ("projects - the deck for the kitchen pitch", PR, "the deck for the kitchen pitch"),
        ("admin, I need to update my address", A, "I need to update my address"),
        ("it's an idea: a map of quiet places", ID, "a map of quiet places"),
        ("it's for projects, the launch checklist", PR, "the launch checklist"),
        ("admin one, renew the passport", A, "renew the passport"),
        ("people \u2014 Sam's birthday is Friday", P, "Sam's birthday is Friday"),
        ("follow up with Tariq - it's a people one", P, "follow up with Tariq"),
        ("pay the water bill, admin", A, "pay the water bill"),
    ],
)
def test_an_answer_that_picks_and_explains(answer: str, bucket: Bucket, rest: str) -> None:
    assert read_answer(answer) == Reading(bucket, rest)


@pytest.mark.parametrize(
    "answer",
    [
        "people always forget to water the plants, set up a rota",
        "an idea for Lena: take her to the pottery class",
        "the admin team need the expense form by Friday",
        "my project idea is a tiny solar charger",
        "ideas are cheap, do the work",
        "Call my sister Ana about her birthday party on Saturday",
        "project meeting with Dana on Monday",
        "admin day tomorrow",
        "people to invite: Ana, Tom",
        "peoples",
        "adminstration",
        "-",
        "",
    ],
)
def test_a_bucket_word_in_a_sentence_is_not_a_pick(answer: str) -> None:
    reading = read_answer(answer)
    assert reading.bucket is None
    assert reading.rest == " ".join(answer.split())  # the whole answer, to be classified


def test_a_pick_with_nothing_beside_it_but_punctuation_is_only_a_pick() -> None:
    assert read_answer("people - ") == Reading(P, "")
    assert read_answer("ideas:!") == Reading(ID, "")


@pytest.mark.parametrize(
    ("words", "title"),
    [
        ("follow up with Tariq about the reference", "Follow up with Tariq about the reference"),
        ("think about the website.", "Think about the website"),
        ("iPhone case\nzzz", "IPhone case"),
        ("word " * 30, "Word" + " word" * 11),  # cut at a word, no "…" stored
        (" ,,, ", "Capture"),
    ],
)
def test_a_title_is_made_of_the_persons_words(words: str, title: str) -> None:
    assert title_of(words) == title
    assert len(title_of(words)) <= 60


@pytest.mark.parametrize(
    ("confidence", "words"),
    [
        (1.0, "sure"),
        (0.85, "sure"),
        (0.84, "fairly sure"),
        (0.6, "fairly sure"),
        (0.59, "not sure"),
        (0.45, "not sure"),
        (0.3, "not sure"),
        (0.29, "just a guess"),
        (0.0, "just a guess"),
    ],
)
def test_confidence_in_words_follows_the_thresholds(confidence: float, words: str) -> None:
    assert confidence_words(confidence) == words


@pytest.mark.parametrize(
    ("answer", "bucket", "rest"),
    [
        # Issue 40: an answer that weighs two buckets keeps the one it does not reject ...
        (
            "admin not people: book the function room, fri 13th",
            A,
            "book the function room, fri 13th",
        ),
        ("not people, projects - the fix lands before launch", PR, "the fix lands before launch"),
        ("an idea, not a project yet - no meetings on fridays", ID, "no meetings on fridays"),
        ("admin, definitely not projects: renew the permit", A, "renew the permit"),
        (
            "projects more than people: she takes over the handover",
            PR,
            "she takes over the handover",
        ),
        # ... the one it stresses, or the first it names.
        ("ideas or projects, ideas really - a wall one day", ID, "a wall one day"),
        ("people I think, maybe projects - he got promoted", P, "he got promoted"),
        ("admin not people", A, ""),
    ],
)
def test_an_answer_weighing_two_buckets_keeps_one(answer: str, bucket: Bucket, rest: str) -> None:
    assert read_answer(answer) == Reading(bucket, rest)
