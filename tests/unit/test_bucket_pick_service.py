"""shared/services/bucket_pick.py on the fakes: the user files a capture by hand or moves it,
asking no model, and the user's choice wins over a classifier finishing at the same moment."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.errors import Conflict, NotFound
from shared.domain.outcomes import FailureCode, Outcome
from shared.services.bucket_pick import pick_bucket
from shared.services.filing import file_capture
from shared.services.retry_stale import ATTEMPTS
from tests.fakes import USER, Fakes, guess, new_id, text_item, voice_item

NOT_FOUND = (None, "There is no such capture.")


async def settled(fakes: Fakes, text: str, bucket: Bucket | None, confidence: float, title: str):
    item = fakes.repo.seed(text_item(text))
    classified = item.classified(guess(bucket, confidence, title))
    result = await file_capture(item, classified, fakes.repo, fakes.outbox)
    fakes.repo.calls.clear()
    return result


async def pick(fakes: Fakes, item: InboxItem, bucket: Bucket, user: str = USER) -> InboxItem:
    return await pick_bucket(user, item.id, bucket, fakes.adapters)


async def test_picking_a_bucket_for_a_low_confidence_capture_moves_it(fakes: Fakes) -> None:
    low = await settled(fakes, "tiles?", Bucket.IDEAS, 0.45, "Tiles")
    assert fakes.repo.filed_buckets(USER, low.id) == [Bucket.IDEAS]
    picked = await pick(fakes, low, Bucket.PROJECTS)
    assert (picked.status, picked.outcome, picked.filed_bucket, picked.chosen_by) == (
        Status.FILED,
        Outcome.CLASSIFIED,
        Bucket.PROJECTS,
        "user",
    )
    assert picked.confidence == 1.0 and picked.question_text is None
    project = fakes.repo.filed(USER, low.id)[Bucket.PROJECTS]
    assert project.title == "Tiles" and project.inbox_item_id == low.id  # the title is kept
    assert fakes.repo.filed_buckets(USER, low.id) == [Bucket.PROJECTS]
    assert fakes.classifier.texts == []  # picking asks no model


async def test_a_capture_picked_days_later_keeps_the_day_its_words_meant(fakes: Fakes) -> None:
    # Captured on a Monday, asked about, answered on the Thursday: "tomorrow" is the Tuesday.
    monday = datetime(2026, 11, 16, 9, tzinfo=UTC)
    item = fakes.repo.seed(text_item("ring the garage tomorrow", created_at=monday))
    asked = item.classified(guess(None, 0.1, "Garage"))
    low = await file_capture(item, asked, fakes.repo, fakes.outbox)
    assert low.due_date is None and low.filed_bucket is None
    picked = await pick(fakes, low, Bucket.ADMIN)
    assert picked.settled_at is not None and picked.settled_at.date() > date(2026, 11, 17)
    assert picked.due_date == date(2026, 11, 17)
    assert fakes.repo.filed(USER, low.id)[Bucket.ADMIN].due_date == date(2026, 11, 17)


async def test_picking_the_same_bucket_again_changes_nothing_more(fakes: Fakes) -> None:
    low = await settled(fakes, "tiles?", Bucket.IDEAS, 0.45, "Tiles")
    first = await pick(fakes, low, Bucket.PROJECTS)
    again = await pick(fakes, low, Bucket.PROJECTS)
    assert (again.filed_bucket, again.chosen_by) == (first.filed_bucket, first.chosen_by)
    assert fakes.repo.filed_buckets(USER, low.id) == [Bucket.PROJECTS]


@pytest.mark.parametrize("confidence", [0.1, 0.0])
async def test_a_misunderstood_capture_is_titled_by_the_users_words(
    fakes: Fakes, confidence: float
) -> None:
    unclear = await settled(fakes, "renew passport asap", None, confidence, "Unclear")
    picked = await pick(fakes, unclear, Bucket.ADMIN)
    assert picked.title == "renew passport asap"  # not "Unclear"
    assert fakes.repo.filed(USER, unclear.id)[Bucket.ADMIN].title == "renew passport asap"


async def test_a_long_capture_is_titled_by_its_first_eight_words(fakes: Fakes) -> None:
    words = "one two three four five six seven eight nine ten"
    unclear = await settled(fakes, words, None, 0.1, "Unclear")
    picked = await pick(fakes, unclear, Bucket.IDEAS)
    assert picked.title == "one two three four five six seven eight"


@pytest.mark.parametrize("status", [Status.AWAITING_UPLOAD, Status.TRANSCRIBING])
async def test_a_voice_note_without_its_transcript_cannot_be_filed_yet(
    fakes: Fakes, status: Status
) -> None:
    item = fakes.repo.seed(voice_item(status=status))
    with pytest.raises(Conflict) as conflict:
        await pick(fakes, item, Bucket.IDEAS)
    assert (conflict.value.code, conflict.value.message) == (
        "NO_TEXT_YET",
        "This capture has no text to file yet.",
    )
    assert fakes.repo.filed_count() == 0 and fakes.repo.stored(USER, item.id) == item


async def test_a_failed_capture_with_text_can_be_filed_by_hand(fakes: Fakes) -> None:
    failed = text_item("pay rent", status=Status.FAILED, error=FailureCode.CLASSIFY_FAILED)
    item = fakes.repo.seed(failed)
    picked = await pick(fakes, item, Bucket.ADMIN)
    assert (picked.status, picked.error) == (Status.FILED, None)
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.ADMIN]


async def test_an_unknown_or_anothers_capture_is_not_found(fakes: Fakes) -> None:
    low = await settled(fakes, "tiles?", Bucket.IDEAS, 0.45, "Tiles")
    for user, capture_id in [(USER, new_id()), ("other", low.id)]:
        with pytest.raises(NotFound) as missing:
            await pick_bucket(user, capture_id, Bucket.PEOPLE, fakes.adapters)
        assert (missing.value.code, missing.value.message) == NOT_FOUND
    assert fakes.repo.stored(USER, low.id) == low
    assert fakes.repo.filed_buckets(USER, low.id) == [Bucket.IDEAS]


async def test_the_users_choice_wins_over_a_classifier_finishing_meanwhile(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item("call Sarah", status=Status.QUEUED))

    async def classifier_files_it() -> None:
        current = await fakes.repo.get(USER, item.id)
        classified = current.classified(guess(Bucket.PEOPLE, 0.9, "Sarah"))
        await file_capture(current, classified, fakes.repo, fakes.outbox)

    fakes.repo.before_next("save", classifier_files_it)
    picked = await pick(fakes, item, Bucket.ADMIN)
    assert fakes.repo.armed == []
    assert (picked.filed_bucket, picked.chosen_by) == (Bucket.ADMIN, "user")
    assert fakes.repo.stored(USER, item.id) == picked
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.ADMIN]


async def test_a_capture_deleted_during_the_pick_is_not_found_and_keeps_nothing(
    fakes: Fakes,
) -> None:
    low = await settled(fakes, "tiles?", Bucket.IDEAS, 0.45, "Tiles")

    async def delete_starts() -> None:  # the tombstone only: the DELETE's sweep comes later
        current = await fakes.repo.get(USER, low.id)
        await fakes.repo.save(current.tombstoned())
        await fakes.repo.delete_filed(USER, Bucket.IDEAS, low.id)

    fakes.repo.before_next("save", delete_starts)
    with pytest.raises(NotFound) as missing:
        await pick(fakes, low, Bucket.PROJECTS)
    assert (missing.value.code, missing.value.message) == NOT_FOUND
    assert fakes.repo.filed_count() == 0  # the pick took back the item it had filed


async def test_a_capture_that_keeps_changing_is_a_conflict(fakes: Fakes) -> None:
    low = await settled(fakes, "tiles?", Bucket.IDEAS, 0.45, "Tiles")
    for _ in range(ATTEMPTS):
        fakes.repo.before_next("save", lambda: fakes.repo.seed(fakes.repo.stored(USER, low.id)))
    with pytest.raises(Conflict) as conflict:
        await pick(fakes, low, Bucket.PROJECTS)
    assert (conflict.value.code, conflict.value.message) == (
        "CONFLICT",
        "This capture keeps changing. Please try again.",
    )
    assert fakes.repo.stored(USER, low.id).filed_bucket is Bucket.IDEAS
    assert fakes.repo.filed_buckets(USER, low.id) == [Bucket.IDEAS]  # each try took its own back


async def test_two_picks_racing_leave_the_capture_filed_where_the_last_save_says(
    fakes: Fakes,
) -> None:
    """The probe's case: the first pick saved, the second saved after it, and then the first
    swept every bucket but its own, taking the second's filed item with it."""
    low = await settled(fakes, "tiles?", Bucket.IDEAS, 0.45, "Tiles")

    async def second_pick() -> None:
        await pick(fakes, low, Bucket.ADMIN)

    # The first pick has saved; its sweep of the other buckets is about to start.
    fakes.repo.before_next("delete_filed", second_pick)
    await pick(fakes, low, Bucket.PEOPLE)
    stored = fakes.repo.stored(USER, low.id)
    assert stored.filed_bucket is Bucket.ADMIN
    assert fakes.repo.filed_buckets(USER, low.id) == [Bucket.ADMIN]
