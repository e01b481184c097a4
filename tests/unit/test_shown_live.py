"""A capture's outcome counts as shown live once a stream handed its last frame to the client
(shared/services/outbox.py): the run of a text capture, a capture's events feed and a resume mark
the version they told (outcome_shown_at = its updatedAt); a client that left before the end, a
run that ended queued, and a resume's quiet steps do not."""

from __future__ import annotations

from collections.abc import AsyncIterator

from shared.agui.events import Conversation
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.errors import ClassifierUnavailable, StorageUnavailable
from shared.domain.outcomes import FailureCode
from shared.services.capture import TextCapture
from shared.services.filing import file_capture
from shared.services.outbox import mark_seen_live
from shared.services.resume import ResumeAnswer, ResumeRequest
from tests.fakes import USER, Fakes, guess, new_id, text_item
from tests.runs import feed_run, resume_run, text_capture_run


def a_capture(text: str = "Call Sarah about the budget") -> TextCapture:
    run_id = f"r-{new_id()}"
    return TextCapture(user_id=USER, thread_id="t", run_id=run_id, text=text, capture_key=run_id)


async def read_to_the_end(fakes: Fakes, events: AsyncIterator) -> list[str]:
    types = [event.type.value async for event in events]
    await fakes.drain()
    return types


async def read_until(fakes: Fakes, events: AsyncIterator, last: str) -> None:
    """A client that leaves once it has read the event `last`."""
    async for event in events:
        if event.type.value == last:
            break
    await events.aclose()  # the response is gone: nothing asks for more
    await fakes.drain()


def was_shown(fakes: Fakes, item: InboxItem) -> bool:
    """Shown live (issue 32: no push job runs): the outcome its live run held went out as no
    message at all, its check deleted; or the message this process published for that version
    was taken back; or, where there was neither, the version marked."""

    def told(outcomes: list) -> bool:
        return any(o.capture_id == item.id and o.settled_at == item.updated_at for o in outcomes)

    released = not told(fakes.queues.outcomes) and any(
        job.capture_id == item.id and job.tells_outcome for job in fakes.queues.cancelled
    )
    return released or told(fakes.queues.cancelled_outcomes) or item.was_shown_live


def stored(fakes: Fakes, capture: TextCapture) -> InboxItem:
    item = fakes.repo.stored(USER, capture.capture_id)
    assert item is not None
    return item


async def test_a_run_read_to_its_end_marks_the_outcome_it_told(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    capture = a_capture()
    types = await read_to_the_end(fakes, text_capture_run(capture, fakes.adapters))
    assert types[-1] == "RUN_FINISHED"
    item = stored(fakes, capture)
    assert item.status is Status.FILED and was_shown(fakes, item)
    # Held until shown, so nothing is written to mark it and no push job is left.
    assert item.outcome_shown_at is None
    assert not [o for o in fakes.queues.outcomes if o.capture_id == item.id]


async def test_a_client_that_left_before_the_last_frame_was_not_shown_it(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    capture = a_capture()
    await read_until(fakes, text_capture_run(capture, fakes.adapters), "CUSTOM")
    item = stored(fakes, capture)
    assert item.status is Status.FILED  # the work goes on without the client
    assert item.outcome_shown_at is None


async def test_a_run_that_ended_queued_showed_no_outcome(fakes: Fakes) -> None:
    fakes.classifier.then(ClassifierUnavailable("down"))
    capture = a_capture()
    await read_to_the_end(fakes, text_capture_run(capture, fakes.adapters))
    item = stored(fakes, capture)
    assert item.status is Status.QUEUED and item.outcome_shown_at is None


async def test_an_events_feed_marks_the_outcome_or_failure_it_replayed(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    settled = await file_capture(
        item, item.classified(guess(Bucket.IDEAS, 0.45, "Tiles")), fakes.repo, fakes.outbox
    )
    await read_to_the_end(fakes, feed_run(settled, fakes.repo, fakes.outbox.delivered))
    assert was_shown(fakes, fakes.repo.stored(USER, item.id))

    failed = fakes.repo.seed(text_item(status=Status.QUEUED).failed(FailureCode.CLASSIFY_FAILED))
    types = await read_to_the_end(fakes, feed_run(failed, fakes.repo, fakes.outbox.delivered))
    assert types[-1] == "RUN_ERROR"
    assert fakes.repo.stored(USER, failed.id).was_shown_live


async def test_a_feed_closed_before_its_end_marks_nothing(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    settled = await file_capture(
        item, item.classified(guess(Bucket.IDEAS, 0.9, "Tiles")), fakes.repo, fakes.outbox
    )
    await read_until(
        fakes, feed_run(settled, fakes.repo, fakes.outbox.delivered), "TEXT_MESSAGE_CONTENT"
    )
    assert not was_shown(fakes, fakes.repo.stored(USER, item.id))


async def test_a_resume_marks_the_answer_it_told_not_its_quiet_ones(fakes: Fakes) -> None:
    asked = []
    for _ in range(2):
        item = fakes.repo.seed(text_item("tiles", thread_id="t-2"))
        question = item.classified(guess(Bucket.PROJECTS, 0.45, "Tiles"))
        asked.append(await file_capture(item, question, fakes.repo, fakes.outbox))
    answers = [
        ResumeAnswer(interrupt_id=f"{i.id}:1", status="resolved", payload={"bucket": "Ideas"})
        for i in asked
    ]
    request = ResumeRequest(
        user_id=USER,
        thread_id="t-2",
        run_id="r-3",
        answers=answers,
    )
    await read_to_the_end(fakes, resume_run(request, fakes.adapters, Conversation(interrupts=True)))
    quiet, told = (fakes.repo.stored(USER, i.id) for i in asked)
    assert quiet.status is told.status is Status.FILED
    assert not was_shown(fakes, quiet) and was_shown(fakes, told)


# mark_seen_live itself: only the version that was delivered, ETag-guarded.


async def settled_item(fakes: Fakes) -> InboxItem:
    item = fakes.repo.seed(text_item())
    return await file_capture(
        item, item.classified(guess(Bucket.IDEAS, 0.9, "Tiles")), fakes.repo, fakes.outbox
    )


async def test_a_capture_that_moved_on_is_not_marked(fakes: Fakes) -> None:
    shown = await settled_item(fakes)
    moved = fakes.repo.seed(shown.picked(Bucket.ADMIN, "Tiles"))
    await mark_seen_live(shown, fakes.repo)
    assert fakes.repo.stored(USER, shown.id) == moved  # untouched


async def test_a_capture_whose_etag_alone_changed_is_marked_on_the_next_try(fakes: Fakes) -> None:
    shown = await settled_item(fakes)
    fakes.repo.seed(shown)  # the same version written again: a new ETag, the same updatedAt
    await mark_seen_live(shown, fakes.repo)
    assert fakes.repo.stored(USER, shown.id).was_shown_live
    calls = len(fakes.repo.calls)
    await mark_seen_live(fakes.repo.stored(USER, shown.id), fakes.repo)  # marked already
    assert len(fakes.repo.calls) == calls


async def test_a_capture_gone_or_storage_down_is_left_alone(fakes: Fakes) -> None:
    shown = await settled_item(fakes)
    fakes.repo.fail_next("save", StorageUnavailable("down"))
    await mark_seen_live(shown, fakes.repo)  # logged, not raised
    assert fakes.repo.stored(USER, shown.id).outcome_shown_at is None
    await fakes.repo.remove(USER, shown.id)
    await mark_seen_live(shown, fakes.repo)
    assert fakes.repo.stored(USER, shown.id) is None


async def test_an_outcome_that_cannot_be_taken_back_is_marked_instead(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    # Both cancels fail: the check's, then the outcome's.
    fakes.queues.fail_next("cancel", StorageUnavailable("down"), times=2)
    capture = a_capture()
    await read_to_the_end(fakes, text_capture_run(capture, fakes.adapters))
    item = stored(fakes, capture)
    assert item.outcome_shown_at == item.updated_at  # the push worker will see it was shown
