"""shared/services/filing.py on the fakes: thresholds into statuses and filed items, idempotent
filing, moves, and the races its ETag-guarded save settles (a concurrent writer, a DELETE)."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime

import pytest

from shared.domain.capture import Clarification, InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.errors import (
    CaptureDeleted,
    ClassifierUnavailable,
    IllegalTransition,
    StaleItem,
    StorageUnavailable,
)
from shared.domain.outcomes import DEFAULT_QUESTION, FailureCode, Outcome
from shared.services.filing import classify_and_file, file_capture, record
from shared.services.inbox import delete_capture
from tests.fakes import USER, Fakes, guess, text_item


async def classify(fakes: Fakes, item):
    return await classify_and_file(item, fakes.repo, fakes.classifier, fakes.outbox)


@pytest.mark.parametrize(
    ("bucket", "confidence", "status", "outcome", "filed"),
    [
        (Bucket.PEOPLE, 0.9, Status.FILED, Outcome.CLASSIFIED, True),
        (Bucket.PEOPLE, 0.6, Status.FILED, Outcome.CLASSIFIED, True),
        (Bucket.IDEAS, 0.59, Status.NEEDS_REVIEW, Outcome.LOW_CONFIDENCE, True),
        (Bucket.IDEAS, 0.3, Status.NEEDS_REVIEW, Outcome.LOW_CONFIDENCE, True),
        (Bucket.IDEAS, 0.29, Status.NEEDS_CLARIFICATION, Outcome.MISUNDERSTOOD, False),
        (None, 0.95, Status.NEEDS_CLARIFICATION, Outcome.MISUNDERSTOOD, False),
    ],
)
async def test_the_thresholds_decide_the_status_and_what_is_filed(
    fakes: Fakes, bucket, confidence, status, outcome, filed
) -> None:
    item = fakes.repo.seed(text_item())
    fakes.classifier.then(guess(bucket, confidence, "Budget"))
    result = await classify(fakes, item)

    assert (result.status, result.outcome, result.confidence) == (status, outcome, confidence)
    assert result.filed_bucket == (bucket if filed else None)
    assert result.chosen_by == ("classifier" if filed else None)
    assert fakes.repo.stored(USER, item.id) == result  # what was returned is what is stored
    assert fakes.repo.filed_buckets(USER, item.id) == ([bucket] if filed else [])
    await fakes.drain()
    (published,) = fakes.queues.outcomes
    assert (published.capture_id, published.outcome) == (item.id, outcome)
    assert published.bucket == result.filed_bucket
    # Which version it is about, and who chose: the push worker's skip rules read both.
    assert published.settled_at == result.updated_at
    assert published.chosen_by == result.chosen_by and published.error is None


async def test_each_outcome_asks_its_own_question(fakes: Fakes) -> None:
    answers = [
        guess(Bucket.ADMIN, 0.9, "Rent"),
        guess(Bucket.IDEAS, 0.45, "Tiles"),
        guess(Bucket.IDEAS, 0.45, "Tiles", question="A project, maybe?"),
        guess(None, 0.1, "?"),
        guess(None, 0.1, "?", question="  Which   budget?  "),
    ]
    fakes.classifier.then(*answers)
    questions = [
        (await classify(fakes, fakes.repo.seed(text_item()))).question_text for _ in answers
    ]
    assert questions == [
        None,
        "I filed this under Ideas — is that right?",
        "A project, maybe?",
        DEFAULT_QUESTION,
        "Which budget?",
    ]


async def test_the_filed_item_points_back_to_its_capture(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item("Call Sarah about the budget"))
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    await classify(fakes, item)
    person = fakes.repo.filed(USER, item.id)[Bucket.PEOPLE]
    assert (person.id, person.inbox_item_id, person.user_id) == (item.id, item.id, USER)
    assert (person.title, person.text, person.confidence) == (
        "Call Sarah",
        "Call Sarah about the budget",
        0.9,
    )
    assert person.people == ["Sarah"]
    # Filed at the capture's own time, with where it came from.
    assert (person.created_at, person.source) == (item.created_at, "text")


async def test_what_a_model_read_stands_and_the_rules_fill_in_the_rest(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item("Lunch w/ Fatima and Sam on friday"))
    read = guess(Bucket.PROJECTS, 0.9, "Lunch").model_copy(update={"people": ["Fatima Z"]})
    fakes.classifier.then(read)
    await classify(fakes, item)
    project = fakes.repo.filed(USER, item.id)[Bucket.PROJECTS]
    assert project.people == ["Fatima Z"]  # the model's, though the rules read two
    assert project.due_date is not None and project.due_date.weekday() == 4  # the rules'
    # A user's move keeps what the model read.
    stored = fakes.repo.stored(USER, item.id)
    await file_capture(stored, stored.picked(Bucket.PEOPLE, "Lunch"), fakes.repo, fakes.outbox)
    assert fakes.repo.filed(USER, item.id)[Bucket.PEOPLE].people == ["Fatima Z"]


async def test_the_model_counts_relative_days_from_the_day_the_words_were_said(
    fakes: Fakes,
) -> None:
    # Classified days later (a retry, a queue that waited): the model is told the capture's day.
    monday = datetime(2026, 11, 16, 9, tzinfo=UTC)
    item = fakes.repo.seed(text_item("pay the plumber tomorrow", created_at=monday))
    fakes.classifier.then(guess(Bucket.ADMIN, 0.9, "Pay the plumber"))
    filed = await classify(fakes, item)
    assert fakes.classifier.said_on == [date(2026, 11, 16)]
    assert filed.due_date == date(2026, 11, 17)  # the rules count from the same day


async def test_the_filed_item_is_written_before_the_inbox_item(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9))
    await classify(fakes, item)
    # A crash between the two leaves a capture still to settle, never one settled on nothing.
    # (after the one read of the user's known people, made during the model's wait)
    assert fakes.repo.calls == ["known_people", "put_filed", "save"]


async def test_a_retry_after_a_failed_save_files_once(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9), guess(Bucket.PEOPLE, 0.95))
    fakes.repo.fail_next("save", StorageUnavailable("Cosmos answered 503"))
    with pytest.raises(StorageUnavailable):
        await classify(fakes, item)
    assert fakes.repo.stored(USER, item.id).status is Status.RECEIVED
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PEOPLE]

    result = await classify(fakes, fakes.repo.stored(USER, item.id))  # the host's retry
    assert result.status is Status.FILED and result.confidence == 0.95
    assert fakes.repo.filed_count() == 1


async def test_the_answer_alone_then_with_context_and_two_rounds_end_unresolved(
    fakes: Fakes,
) -> None:
    answers = [Clarification(run_id=f"f{n}", text=f"answer {n}") for n in (1, 2)]
    item = fakes.repo.seed(text_item("zzz", clarifications=answers))
    unclear = guess(None, 0.1, "?", question="Still unclear?")
    fakes.classifier.then(unclear, unclear)
    result = await classify(fakes, item)
    # The latest answer on its own, then the whole story with the latest answer first.
    assert fakes.classifier.texts == ["answer 2", "answer 2\nanswer 1\nzzz"]
    assert (result.status, result.outcome) == (Status.UNRESOLVED, Outcome.UNRESOLVED)
    assert result.question_text is None and result.filed_bucket is None
    assert fakes.repo.filed_count() == 0


@pytest.mark.parametrize(
    "status",
    [Status.FILED, Status.NEEDS_REVIEW, Status.NEEDS_CLARIFICATION, Status.UNRESOLVED],
)
async def test_a_settled_capture_is_returned_as_it_is(fakes: Fakes, status: Status) -> None:
    item = fakes.repo.seed(text_item(status=status, filed_bucket=Bucket.IDEAS, title="Kept"))
    result = await classify(fakes, item)
    assert result == item
    assert fakes.classifier.texts == [] and fakes.repo.calls == []
    await fakes.drain()
    assert fakes.queues.outcomes == []


async def test_a_duplicate_delivery_after_the_first_files_nothing_more(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9))
    first = await classify(fakes, item)
    again = await classify(fakes, await fakes.repo.get(USER, item.id))
    assert again == first and len(fakes.classifier.texts) == 1
    assert fakes.repo.filed_count() == 1
    await fakes.drain()
    assert len(fakes.queues.outcomes) == 1


@pytest.mark.parametrize("second", [Bucket.PROJECTS, Bucket.IDEAS])
async def test_two_deliveries_at_once_file_once(fakes: Fakes, second: Bucket) -> None:
    """Both read the capture and ask the model; one save wins, the other yields to it and
    takes back a filed item of its own (when the model answered it differently)."""
    item = fakes.repo.seed(text_item())
    both_asked = asyncio.Barrier(2)

    def answer(bucket: Bucket):
        async def when_both_asked(text: str):
            await asyncio.wait_for(both_asked.wait(), timeout=5)
            return guess(bucket, 0.9, "Launch")

        return when_both_asked

    fakes.classifier.then(answer(Bucket.PROJECTS), answer(second))
    results = await asyncio.gather(classify(fakes, item), classify(fakes, item))

    assert len(fakes.classifier.texts) == 2
    assert results[0] == results[1] == fakes.repo.stored(USER, item.id)
    assert fakes.repo.filed_buckets(USER, item.id) == [results[0].filed_bucket]
    await fakes.drain()
    assert [m.capture_id for m in fakes.queues.outcomes] == [item.id]  # the winner's only


async def test_a_deleted_capture_is_not_classified(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item().tombstoned())
    with pytest.raises(CaptureDeleted):
        await classify(fakes, item)
    assert fakes.classifier.texts == [] and fakes.repo.calls == []


async def test_a_capture_without_text_is_a_mistake(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item("  "))
    with pytest.raises(ValueError, match="no text"):
        await classify(fakes, item)
    assert fakes.classifier.texts == []


async def test_the_model_down_changes_nothing(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item(status=Status.QUEUED))
    fakes.classifier.then(ClassifierUnavailable("503"))
    with pytest.raises(ClassifierUnavailable):
        await classify(fakes, item)
    assert fakes.repo.stored(USER, item.id) == item
    # Only the read of the user's known people, made during the model's wait: nothing written.
    assert fakes.repo.calls == ["known_people"] and fakes.repo.filed_count() == 0


async def test_publishing_is_best_effort(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    fakes.classifier.then(guess(Bucket.ADMIN, 0.9))
    fakes.queues.fail_next("publish_outcome", StorageUnavailable("Queue storage answered 503"))
    result = await classify(fakes, item)
    assert result.status is Status.FILED
    await fakes.drain()
    assert fakes.queues.calls == ["publish_outcome"] and fakes.queues.outcomes == []
    assert fakes.repo.stored(USER, item.id).status is Status.FILED


# -- moves ---------------------------------------------------------------------------------------


async def low_confidence(fakes: Fakes, bucket: Bucket = Bucket.IDEAS):
    item = fakes.repo.seed(text_item("tiles for the kitchen"))
    low = item.classified(guess(bucket, 0.45, "Tiles"))
    filed = await file_capture(item, low, fakes.repo, fakes.outbox)
    fakes.repo.calls.clear()
    return filed


async def test_a_move_files_the_new_item_then_the_inbox_item_then_deletes_the_old(
    fakes: Fakes,
) -> None:
    item = await low_confidence(fakes)
    moved = await file_capture(
        item, item.picked(Bucket.PROJECTS, "Tiles"), fakes.repo, fakes.outbox
    )
    assert (moved.status, moved.filed_bucket, moved.chosen_by) == (
        Status.FILED,
        Bucket.PROJECTS,
        "user",
    )
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PROJECTS]
    # The user's choice converges every bucket (an interrupted move too), then reads the
    # inbox item once more to see that nobody wrote meanwhile.
    deleted, kept = "delete_filed", "get_filed"
    assert fakes.repo.calls == ["put_filed", "save", deleted, kept, deleted, deleted, "get"]


async def test_a_move_interrupted_before_deleting_the_old_item_converges(fakes: Fakes) -> None:
    item = await low_confidence(fakes)
    fakes.repo.fail_next("delete_filed", StorageUnavailable("Cosmos answered 503"))
    with pytest.raises(StorageUnavailable):
        await file_capture(item, item.picked(Bucket.PROJECTS, "Tiles"), fakes.repo, fakes.outbox)
    assert fakes.repo.stored(USER, item.id).filed_bucket is Bucket.PROJECTS
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PROJECTS, Bucket.IDEAS]

    current = fakes.repo.stored(USER, item.id)
    await file_capture(current, current.picked(Bucket.PROJECTS, "Tiles"), fakes.repo, fakes.outbox)
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PROJECTS]


async def test_the_classifier_moving_a_capture_deletes_its_old_filed_item(fakes: Fakes) -> None:
    item = await low_confidence(fakes)
    # A late delivery that still holds the capture from before it was settled.
    reopened = fakes.repo.seed(item.model_copy(update={"status": Status.QUEUED}))
    admin = reopened.classified(guess(Bucket.ADMIN, 0.9))
    moved = await file_capture(reopened, admin, fakes.repo, fakes.outbox)
    assert moved.filed_bucket is Bucket.ADMIN
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.ADMIN]


# -- races the ETag settles ----------------------------------------------------------------------


async def test_the_classifier_yields_to_a_capture_settled_first(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item(status=Status.QUEUED))
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Late"))

    async def user_picks_admin() -> None:
        current = await fakes.repo.get(USER, item.id)
        await file_capture(current, current.picked(Bucket.ADMIN, "Mine"), fakes.repo, fakes.outbox)

    fakes.repo.before_next("save", user_picks_admin)
    result = await classify(fakes, item)

    assert fakes.repo.armed == []  # the pick did land between the model's answer and the save
    assert (result.filed_bucket, result.chosen_by, result.title) == (Bucket.ADMIN, "user", "Mine")
    assert fakes.repo.stored(USER, item.id) == result
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.ADMIN]
    await fakes.drain()
    assert [m.bucket for m in fakes.queues.outcomes] == [Bucket.ADMIN]  # the user's only


async def test_the_classifier_losing_to_other_words_takes_back_its_filed_item(
    fakes: Fakes,
) -> None:
    item = fakes.repo.seed(text_item())

    async def other_words_meanwhile() -> None:
        current = await fakes.repo.get(USER, item.id)
        await fakes.repo.save(current.queued().model_copy(update={"text": "order tiles"}))

    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9))
    fakes.repo.before_next("save", other_words_meanwhile)
    with pytest.raises(StaleItem):  # its answer was to other words: the worker's job asks
        await classify(fakes, item)
    assert fakes.repo.stored(USER, item.id).status is Status.QUEUED
    assert fakes.repo.filed_count() == 0


async def test_the_classifier_losing_to_a_queued_mark_files_the_same_answer(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())

    async def queued_meanwhile() -> None:
        current = await fakes.repo.get(USER, item.id)
        await fakes.repo.save(current.queued())

    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9))
    fakes.repo.before_next("save", queued_meanwhile)
    filed = await classify(fakes, item)
    assert (filed.status, fakes.repo.filed_buckets(USER, item.id)) == (
        Status.FILED,
        [Bucket.PEOPLE],
    )
    assert len(fakes.classifier.texts) == 1


async def test_the_users_choice_does_not_yield(fakes: Fakes) -> None:
    item = await low_confidence(fakes)

    async def another_pick() -> None:
        current = await fakes.repo.get(USER, item.id)
        await file_capture(current, current.picked(Bucket.ADMIN, "Tiles"), fakes.repo, fakes.outbox)

    fakes.repo.before_next("save", another_pick)
    with pytest.raises(StaleItem):  # the caller reads again and retries
        await file_capture(item, item.picked(Bucket.PROJECTS, "Tiles"), fakes.repo, fakes.outbox)
    assert fakes.repo.stored(USER, item.id).filed_bucket is Bucket.ADMIN
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.ADMIN]


@pytest.mark.parametrize("how", ["tombstoned", "deleted"])
async def test_a_capture_deleted_meanwhile_raises_and_its_filed_item_is_taken_back(
    fakes: Fakes, how: str
) -> None:
    item = fakes.repo.seed(text_item())

    async def delete() -> None:
        if how == "tombstoned":  # the DELETE has only blanked it so far
            current = await fakes.repo.get(USER, item.id)
            await fakes.repo.save(current.tombstoned())
        else:
            await delete_capture(USER, item.id, fakes.adapters)

    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9))
    fakes.repo.before_next("save", delete)
    with pytest.raises(CaptureDeleted):
        await classify(fakes, item)
    assert fakes.repo.armed == []
    assert fakes.repo.filed_count() == 0
    stored = fakes.repo.stored(USER, item.id)
    assert stored is None if how == "deleted" else stored.is_deleted
    await fakes.drain()
    assert fakes.queues.outcomes == []


# -- progress that is not an outcome -------------------------------------------------------------


async def test_record_saves_a_transition(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    failed = await record(item, lambda i: i.failed(FailureCode.CLASSIFY_FAILED), fakes.repo)
    assert (failed.status, failed.error) == (Status.FAILED, FailureCode.CLASSIFY_FAILED)
    assert fakes.repo.stored(USER, item.id) == failed


@pytest.mark.parametrize("status", [Status.FILED, Status.DELETING])
async def test_record_keeps_what_is_settled_or_deleted(fakes: Fakes, status: Status) -> None:
    # The lifecycle refuses the change before anything is written.
    item = fakes.repo.seed(text_item(status=status))
    with pytest.raises(IllegalTransition):
        await record(item, InboxItem.queued, fakes.repo)
    assert fakes.repo.calls == [] and fakes.repo.stored(USER, item.id) == item


async def test_record_over_a_changed_item_returns_the_stored_one(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    settled = fakes.repo.seed(item.classified(guess(Bucket.IDEAS, 0.9)))
    assert await record(item, InboxItem.queued, fakes.repo) == settled
    assert fakes.repo.stored(USER, item.id).status is Status.FILED


async def test_a_name_the_user_said_with_a_cue_before_is_read_in_a_later_capture(
    fakes: Fakes,
) -> None:
    later = "harj board paper fri"
    first = fakes.repo.seed(text_item(later))
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9, "Board paper"))
    assert (await classify(fakes, first)).people == []  # no history yet: the rules see no one

    earlier = fakes.repo.seed(text_item("Harj says the board paper slips a week"))
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Harj"))
    assert (await classify(fakes, earlier)).people == ["Harj"]
    again = fakes.repo.seed(text_item(later))
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9, "Board paper"))
    result = await classify(fakes, again)
    assert result.people == ["Harj"]
    assert fakes.repo.filed(USER, again.id)[Bucket.PROJECTS].people == ["Harj"]


async def test_a_name_found_with_no_persons_cue_does_not_spread(fakes: Fakes) -> None:
    earlier = fakes.repo.seed(text_item("Currys rang: the part's in, engineer back mon"))
    fakes.classifier.then(guess(Bucket.ADMIN, 0.9, "Engineer"))
    await classify(fakes, earlier)
    assert await fakes.repo.known_people(USER) == frozenset()


async def test_filing_reads_without_known_people_when_the_store_cannot_say(
    fakes: Fakes,
) -> None:
    fakes.repo.seed(text_item("Harj says the board paper slips a week"))
    filed = fakes.repo.seed(text_item("ask Harj about the paper"))
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Harj"))
    await classify(fakes, filed)
    item = fakes.repo.seed(text_item("harj board paper fri"))
    fakes.repo.fail_next("known_people", StorageUnavailable("down"))
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9, "Board paper"))
    result = await classify(fakes, item)
    assert result.status is Status.FILED and result.people == []
