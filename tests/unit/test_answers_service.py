"""shared/services/answers.py on the fakes, through the resume a client sends: a typed answer
naming a bucket files the capture there (also on a which-bucket question, moving its
provisional filed item), an answer that explains is classified on its own first, and the
capture's title comes from what was said, never a bare bucket name."""

from __future__ import annotations

from typing import Any

from shared.agui.events import Conversation, interrupt_for
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.interrupts import InterruptKind, parse_payload, response_schema
from shared.domain.outcomes import Outcome
from shared.services.capture import TextCapture
from shared.services.filing import classify_and_file, file_capture
from shared.services.follow_up import open_follow_up, store_clarification
from shared.services.resume import ResumeAnswer, ResumeRequest
from tests.fakes import USER, Fakes, guess, text_item
from tests.runs import resume_run

SPEAKS = Conversation(interrupts=True)


async def asked(
    fakes: Fakes, text: str, bucket: Bucket | None, confidence: float, title: str = ""
) -> InboxItem:
    item = fakes.repo.seed(text_item(text, thread_id="t-1"))
    title = title or (text.capitalize() if bucket else "Unclear capture")
    question = guess(bucket, confidence, title, "Ideas or Projects?" if bucket else "What?")
    settled = await file_capture(item, item.classified(question), fakes.repo, fakes.outbox)
    await fakes.drain()
    return settled


async def answered(fakes: Fakes, item: InboxItem, payload: Any) -> list[dict]:
    answer = ResumeAnswer(interrupt_id=f"{item.id}:1", status="resolved", payload=payload)
    req = ResumeRequest(user_id=USER, thread_id="t-1", run_id="r-2", answers=[answer])
    run = [
        e.model_dump(mode="json", by_alias=True, exclude_none=True)
        async for e in resume_run(req, fakes.adapters, SPEAKS)
    ]
    await fakes.drain()
    return run


async def test_a_bucket_typed_on_a_which_bucket_question_files_it_there(fakes: Fakes) -> None:
    item = await asked(fakes, "think about the website", Bucket.IDEAS, 0.55, "Website thoughts")
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.IDEAS]
    run = await answered(fakes, item, {"answer": "Projects"})
    assert run[-1]["result"]["outcome"] == "CLASSIFIED"
    assert run[-1]["result"]["bucket"] == "Projects"
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.status, stored.filed_bucket, stored.chosen_by) == (
        Status.FILED,
        Bucket.PROJECTS,
        "user",
    )
    # Never "Projects": the title it had, as a pick by button keeps it.
    assert stored.title == "Website thoughts"
    # The provisional item left Ideas: the capture is in one bucket only.
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PROJECTS]
    assert stored.interrupts[0].response == {"answer": "Projects"}
    assert fakes.classifier.texts == []  # a pick asks no model


async def test_a_pick_and_an_explanation_is_filed_and_titled_from_the_explanation(
    fakes: Fakes,
) -> None:
    item = await asked(fakes, "call her", Bucket.PEOPLE, 0.45)
    answer = "it's a people one - follow up with Tariq about the reference"
    run = await answered(fakes, item, {"answer": answer})
    assert run[-1]["result"]["bucket"] == "People"
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.status, stored.title) == (
        Status.FILED,
        "Follow up with Tariq about the reference",
    )
    filed = fakes.repo.filed(USER, item.id)[Bucket.PEOPLE]
    assert filed.title == stored.title


async def test_a_bucket_named_after_gibberish_is_titled_with_what_came_before(
    fakes: Fakes,
) -> None:
    item = await asked(fakes, "zxcv qwer", None, 0.1)
    await answered(fakes, item, {"answer": "file it under people please"})
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.filed_bucket, stored.title) == (Bucket.PEOPLE, "Zxcv qwer")


async def test_a_confident_answer_is_filed_on_its_own(fakes: Fakes) -> None:
    item = await asked(fakes, "kkkkkkllll", None, 0.1)
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Text Hana congrats on the new baby"))
    run = await answered(fakes, item, {"answer": "text Hana congrats on the new baby"})
    assert run[-1]["result"]["outcome"] == "CLASSIFIED"
    assert fakes.classifier.texts == ["text Hana congrats on the new baby"]


async def test_gibberish_before_an_answer_never_lowers_it(fakes: Fakes) -> None:
    item = await asked(fakes, "zxcv bnm ,,, lkjh", None, 0.1)
    fakes.classifier.then(
        guess(Bucket.PEOPLE, 0.5, "Call my sister Ana"),  # the answer alone: not sure
        guess(Bucket.ADMIN, 0.2, "Zxcv bnm lkjh"),  # under its heading: dragged down
        guess(Bucket.ADMIN, 0.2, "Zxcv bnm"),  # dragged down by what came before
    )
    await answered(fakes, item, {"answer": "Call my sister Ana about her party"})
    assert fakes.classifier.texts == [
        "Call my sister Ana about her party",
        "zxcv bnm lkjh - Call my sister Ana about her party",
        "Call my sister Ana about her party\nzxcv bnm ,,, lkjh",
    ]
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.outcome, stored.filed_bucket, stored.confidence) == (
        Outcome.LOW_CONFIDENCE,
        Bucket.PEOPLE,
        0.5,
    )
    assert stored.title == "Call my sister Ana"


async def test_a_name_asked_about_heads_the_answer_that_explains_it(fakes: Fakes) -> None:
    # A capture of a few words names whom (or what) it is about, not what to do: the answer
    # is also read under it, as one capture written at once, and the surer reading is kept.
    item = await asked(fakes, "marek", None, 0.1)
    fakes.classifier.then(
        guess(Bucket.PEOPLE, 0.5, "Pay his invoice by friday"),  # the answer alone
        guess(Bucket.ADMIN, 0.7, "Marek - pay his invoice by friday"),  # under its heading
    )
    run = await answered(fakes, item, {"answer": "pay his invoice by friday"})
    assert run[-1]["result"]["outcome"] == "CLASSIFIED"
    assert fakes.classifier.texts == [
        "pay his invoice by friday",
        "marek - pay his invoice by friday",
    ]
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.filed_bucket, stored.confidence) == (Bucket.ADMIN, 0.7)
    assert stored.title == "Pay his invoice by friday"  # the answer's words, not the heading's


async def test_a_capture_that_says_more_than_a_heading_is_not_read_as_one(fakes: Fakes) -> None:
    item = await asked(fakes, "the quarterly roadmap slides", Bucket.PROJECTS, 0.45)
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.5, "The deck"))
    await answered(fakes, item, {"answer": "the deck"})
    assert fakes.classifier.texts == ["the deck", "the deck\nthe quarterly roadmap slides"]


async def test_the_capture_helps_an_answer_that_says_little(fakes: Fakes) -> None:
    item = await asked(fakes, "the quarterly roadmap slides", Bucket.PROJECTS, 0.45)
    fakes.classifier.then(
        guess(None, 0.1, "The deck", question="What?"),
        guess(Bucket.PROJECTS, 0.8, "The deck for the roadmap slides"),
    )
    await answered(fakes, item, {"answer": "the deck"})
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.outcome, stored.filed_bucket) == (Outcome.CLASSIFIED, Bucket.PROJECTS)
    # The answer alone could not be read: the title is the one for the whole story.
    assert stored.title == "The deck for the roadmap slides"


async def test_an_explanation_on_a_which_bucket_question_moves_the_capture(fakes: Fakes) -> None:
    item = await asked(fakes, "insurance", Bucket.IDEAS, 0.45)
    fakes.classifier.then(guess(Bucket.ADMIN, 0.9, "Renew the home insurance"))
    run = await answered(fakes, item, {"answer": "renew the home insurance by the 14th"})
    assert run[-1]["result"]["bucket"] == "Admin"
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.status, stored.chosen_by) == (Status.FILED, "classifier")
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.ADMIN]


async def test_the_rest_follow_up_takes_an_answer_to_a_which_bucket_question(
    fakes: Fakes,
) -> None:
    item = await asked(fakes, "think about the website", Bucket.IDEAS, 0.55)
    answer = TextCapture(
        user_id=USER, thread_id="t", run_id="f-1", text="projects", capture_key="f"
    )
    opened = await open_follow_up(item.id, answer, fakes.repo)
    reopened = await store_clarification(opened, answer, fakes.repo)
    assert reopened.status is Status.RECEIVED and reopened.open_interrupt is None
    filed = await classify_and_file(reopened, fakes.repo, fakes.classifier, fakes.outbox)
    assert (filed.filed_bucket, filed.title) == (Bucket.PROJECTS, "Think about the website")
    await fakes.drain()
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PROJECTS]


def test_a_which_bucket_question_takes_a_bucket_or_an_answer() -> None:
    schema = response_schema(InterruptKind.BUCKET)
    refs = sorted(option["$ref"] for option in schema["anyOf"])
    assert refs == ["#/$defs/AnswerPayload", "#/$defs/BucketPayload"]
    kind = InterruptKind.BUCKET
    assert parse_payload(kind, {"bucket": "People"}).bucket is Bucket.PEOPLE  # as before
    assert parse_payload(kind, {"answer": " projects "}).answer == "projects"
    for wrong in ({"bucket": "Work"}, {"answer": ""}, {"bucket": "People", "answer": "x"}, {}):
        assert parse_payload(kind, wrong) is None
    # "What did you mean?" still takes words only.
    assert parse_payload(InterruptKind.ANSWER, {"bucket": "People"}) is None


async def test_the_question_says_how_sure_in_words(fakes: Fakes) -> None:
    item = await asked(fakes, "think about the website", Bucket.IDEAS, 0.55)
    message = interrupt_for(item, item.open_interrupt).message
    assert message == "Filed under Ideas for now (not sure). Ideas or Projects?"
    assert "0.55" not in message


async def test_a_typed_answer_replayed_files_nothing_twice_and_another_is_refused(
    fakes: Fakes,
) -> None:
    item = await asked(fakes, "insurance", Bucket.IDEAS, 0.45)
    fakes.classifier.then(guess(Bucket.ADMIN, 0.9, "Renew the home insurance"))
    first = await answered(fakes, item, {"answer": "renew the home insurance"})
    again = await answered(fakes, item, {"answer": " renew the home insurance "})
    assert again[-1]["result"] == first[-1]["result"]
    assert len(fakes.classifier.texts) == 1  # the replay asked no model
    other = await answered(fakes, item, {"answer": "admin"})
    assert other[-1]["type"] == "RUN_ERROR" and other[-1]["code"] == "INTERRUPT_CLOSED"
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.ADMIN]
