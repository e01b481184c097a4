"""shared/services/follow_up.py on the fakes: an answer to a MISUNDERSTOOD or LOW_CONFIDENCE
capture goes on the same inbox item once, however often the run is retried, and never on a
capture that moved on."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from shared.domain.capture import Clarification, Status
from shared.domain.classification import Bucket
from shared.domain.errors import Conflict, NotFound, Refused
from shared.domain.outcomes import Outcome
from shared.services.capture import TextCapture
from shared.services.filing import classify_and_file, file_capture
from shared.services.follow_up import open_follow_up, store_clarification
from shared.services.retry_stale import ATTEMPTS
from tests.fakes import USER, Fakes, guess, new_id, text_item


def answer(text: str = "Call Sarah about the budget", run_id: str = "f-1") -> TextCapture:
    return TextCapture(user_id=USER, thread_id="t", run_id=run_id, text=text, capture_key=run_id)


async def misunderstood(fakes: Fakes, text: str = "budget thing w/ S"):
    item = fakes.repo.seed(text_item(text))
    unclear = guess(None, 0.1, "Unclear", question="What did you mean?")
    settled = await file_capture(item, item.classified(unclear), fakes.repo, fakes.outbox)
    fakes.repo.calls.clear()
    return settled


async def test_the_answer_is_added_and_the_capture_reopened(fakes: Fakes) -> None:
    item = await misunderstood(fakes)
    reopened = await store_clarification(item, answer(), fakes.repo)
    assert [(c.run_id, c.text) for c in reopened.clarifications] == [
        ("f-1", "Call Sarah about the budget")
    ]
    assert (reopened.status, reopened.outcome, reopened.question_text) == (
        Status.RECEIVED,
        None,
        None,
    )
    assert reopened.run_id == "f-1" and reopened.text == "budget thing w/ S"  # original kept
    assert fakes.repo.stored(USER, item.id) == reopened


async def test_the_reopened_capture_is_classified_on_the_answer(fakes: Fakes) -> None:
    item = await misunderstood(fakes)
    reopened = await store_clarification(item, answer(), fakes.repo)
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    filed = await classify_and_file(reopened, fakes.repo, fakes.classifier, fakes.outbox)
    # Confident on its own: the words before it are not asked about.
    assert fakes.classifier.texts == ["Call Sarah about the budget"]
    assert (filed.outcome, filed.filed_bucket) == (Outcome.CLASSIFIED, Bucket.PEOPLE)
    assert len(fakes.repo.inbox()) == 1  # the same inbox item, never a second one
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PEOPLE]


async def test_an_answers_relative_day_counts_from_the_day_it_was_given(fakes: Fakes) -> None:
    # Captured on the Monday, the answer given on the Thursday: its "tomorrow" is the Friday.
    monday, thursday = datetime(2026, 11, 16, 9, tzinfo=UTC), datetime(2026, 11, 19, 9, tzinfo=UTC)
    said = Clarification(run_id="f-1", text="book the dentist tomorrow", at=thursday)
    item = fakes.repo.seed(text_item("dentist", created_at=monday, clarifications=[said]))
    fakes.classifier.then(guess(Bucket.ADMIN, 0.9, "Book the dentist"))
    filed = await classify_and_file(item, fakes.repo, fakes.classifier, fakes.outbox)
    assert (filed.filed_bucket, filed.due_date) == (Bucket.ADMIN, date(2026, 11, 20))


async def test_a_retried_run_finds_its_answer_stored(fakes: Fakes) -> None:
    item = await misunderstood(fakes)
    first = await store_clarification(item, answer(), fakes.repo)
    again = await store_clarification(first, answer(), fakes.repo)
    assert again == first and fakes.repo.calls == ["save"]
    # A retry holding the capture as it was before the first stored the answer.
    stale = await store_clarification(item, answer(), fakes.repo)
    assert stale == first and len(stale.clarifications) == 1
    assert len(fakes.repo.stored(USER, item.id).clarifications) == 1


async def test_a_retry_after_the_capture_was_filed_still_answers(fakes: Fakes) -> None:
    item = await misunderstood(fakes)
    reopened = await store_clarification(item, answer(), fakes.repo)
    fakes.classifier.then(guess(Bucket.ADMIN, 0.8, "Pay the rent"))
    await classify_and_file(reopened, fakes.repo, fakes.classifier, fakes.outbox)
    stored = fakes.repo.stored(USER, item.id)
    assert await open_follow_up(item.id, answer(), fakes.repo) == stored
    assert await store_clarification(stored, answer(), fakes.repo) == stored


async def test_two_rounds_that_still_cannot_be_classified_end_unresolved(fakes: Fakes) -> None:
    item = await misunderstood(fakes, "zzz")
    for n in (1, 2):
        item = await store_clarification(item, answer(f"round {n}", f"f-{n}"), fakes.repo)
        # The answer alone, under the capture's words when they are a heading (the first
        # answer to "zzz"), then with the capture.
        fakes.classifier.then(*[guess(None, 0.1, "?")] * (3 if n == 1 else 2))
        item = await classify_and_file(item, fakes.repo, fakes.classifier, fakes.outbox)
    assert [c.text for c in item.clarifications] == ["round 1", "round 2"]
    assert (item.status, item.outcome) == (Status.UNRESOLVED, Outcome.UNRESOLVED)
    with pytest.raises(Refused) as refused:
        await store_clarification(item, answer("round 3", "f-3"), fakes.repo)
    assert refused.value.code == "CONFLICT"


@pytest.mark.parametrize("status", [Status.FILED, Status.UNRESOLVED, Status.QUEUED])
async def test_a_capture_not_awaiting_an_answer_refuses_it(fakes: Fakes, status: Status) -> None:
    item = fakes.repo.seed(text_item(status=status))
    with pytest.raises(Refused) as refused:
        await store_clarification(item, answer(), fakes.repo)
    assert refused.value.code == "CONFLICT"
    assert fakes.repo.calls == [] and fakes.repo.stored(USER, item.id) == item


async def test_a_deleted_capture_refuses_the_answer(fakes: Fakes) -> None:
    item = fakes.repo.seed((await misunderstood(fakes)).tombstoned())
    with pytest.raises(Refused) as refused:
        await store_clarification(item, answer(), fakes.repo)
    assert refused.value.code == "NOT_FOUND"


@pytest.mark.parametrize(
    ("meanwhile", "code"),
    [("tombstoned", "NOT_FOUND"), ("removed", "NOT_FOUND"), ("picked", "CONFLICT")],
)
async def test_a_capture_that_changed_before_the_save_refuses_the_answer(
    fakes: Fakes, meanwhile: str, code: str
) -> None:
    item = await misunderstood(fakes)

    async def change() -> None:
        current = await fakes.repo.get(USER, item.id)
        if meanwhile == "tombstoned":
            await fakes.repo.save(current.tombstoned())
        elif meanwhile == "removed":
            await fakes.repo.remove(USER, item.id)
        else:  # the user filed it by hand
            mine = current.picked(Bucket.ADMIN, "Mine")
            await file_capture(current, mine, fakes.repo, fakes.outbox)

    fakes.repo.before_next("save", change)
    with pytest.raises(Refused) as refused:
        await store_clarification(item, answer(), fakes.repo)
    assert refused.value.code == code and fakes.repo.armed == []
    stored = fakes.repo.stored(USER, item.id)
    assert stored is None or stored.clarifications == []


async def test_a_capture_that_keeps_changing_refuses_the_answer(fakes: Fakes) -> None:
    item = await misunderstood(fakes)

    async def touched() -> None:  # another writer saves it again each time, unsettled
        fakes.repo.seed(fakes.repo.stored(USER, item.id))

    for _ in range(ATTEMPTS):
        fakes.repo.before_next("save", touched)
    with pytest.raises(Refused) as refused:
        await store_clarification(item, answer(), fakes.repo)
    assert refused.value.code == "CONFLICT"
    assert fakes.repo.calls.count("save") == ATTEMPTS
    assert fakes.repo.stored(USER, item.id).clarifications == []


async def test_a_follow_up_opens_only_on_ones_own_capture_that_asks(fakes: Fakes) -> None:
    item = await misunderstood(fakes)
    assert await open_follow_up(item.id, answer(), fakes.repo) == item
    review = fakes.repo.seed(text_item(status=Status.NEEDS_REVIEW, filed_bucket=Bucket.IDEAS))
    assert await open_follow_up(review.id, answer(), fakes.repo) == review
    filed = fakes.repo.seed(text_item(status=Status.FILED))
    with pytest.raises(Conflict) as conflict:
        await open_follow_up(filed.id, answer(), fakes.repo)
    assert conflict.value.code == "NOT_AWAITING_CLARIFICATION"
    assert conflict.value.message == (
        "Only a capture waiting for an answer to its question takes a follow-up."
    )
    assert conflict.value.details == {"captureStatus": "filed"}
    theirs = answer().model_copy(update={"user_id": "other"})
    for capture_id, who in [(new_id(), answer()), (item.id, theirs), ("not-a-uuid", answer())]:
        with pytest.raises(NotFound) as missing:
            await open_follow_up(capture_id, who, fakes.repo)
        assert (missing.value.code, missing.value.message) == (None, "There is no such capture.")
