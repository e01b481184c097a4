"""shared/services/pipeline.py on the fakes: capturing text reports what happened as domain
progress (no events), and the plain door's wait returns the capture as it stands."""

from __future__ import annotations

import asyncio

import pytest

from shared.domain.capture import Status
from shared.domain.classification import Bucket, Classification
from shared.domain.errors import ClassifierUnavailable, Refused, StorageUnavailable
from shared.domain.progress import Deferred, Settled, Stored
from shared.services import background
from shared.services.capture import TextCapture
from shared.services.pipeline import capture_text, capture_text_within
from shared.services.worker import handle_classify_job
from tests.fakes import USER, Fakes, guess, new_id


def a_capture(text: str = "Call Sarah about the budget", key: str | None = None) -> TextCapture:
    key = key or f"k-{new_id()}"
    return TextCapture(user_id=USER, thread_id="t", run_id=key, text=text, capture_key=key)


async def test_a_capture_is_stored_then_settled(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    capture = a_capture()
    progress = [p async for p in capture_text(capture, fakes.adapters)]
    assert [type(p) for p in progress] == [Stored, Settled]
    stored, settled = progress
    assert stored.item.id == settled.item.id == capture.capture_id
    assert stored.item.status is Status.RECEIVED
    assert settled.item.status is Status.FILED and settled.item.filed_bucket is Bucket.PEOPLE


async def test_a_capture_whose_model_is_down_is_deferred_to_the_worker(fakes: Fakes) -> None:
    fakes.classifier.then(ClassifierUnavailable("down"))
    progress = [p async for p in capture_text(a_capture(), fakes.adapters)]
    assert [type(p) for p in progress] == [Stored, Deferred]
    assert progress[-1].item.status is Status.QUEUED


async def test_a_reused_key_is_not_stored(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    [_ async for _ in capture_text(a_capture("one", key="k"), fakes.adapters)]
    (refused,) = [p async for p in capture_text(a_capture("two", key="k"), fakes.adapters)]
    assert isinstance(refused, Refused) and refused.code == "IDEMPOTENCY_KEY_REUSED"


async def test_waiting_returns_the_settled_capture(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.IDEAS, 0.9, "Podcast"))
    item = await capture_text_within(a_capture(), 5, fakes.adapters)
    assert item.status is Status.FILED


async def test_a_wait_that_runs_out_returns_the_stored_capture_and_the_work_goes_on(
    fakes: Fakes,
) -> None:
    release = asyncio.Event()

    async def slow(_text: str) -> Classification:
        await release.wait()
        return guess(Bucket.IDEAS, 0.9, "Podcast")

    fakes.classifier.then(slow)
    capture = a_capture()
    item = await capture_text_within(capture, 0, fakes.adapters)
    assert item.status is Status.RECEIVED
    release.set()
    for _ in range(100):
        if fakes.repo.stored(USER, capture.capture_id).status is Status.FILED:
            break
        await asyncio.sleep(0)
    assert fakes.repo.stored(USER, capture.capture_id).status is Status.FILED


async def test_waiting_raises_what_kept_the_capture_from_being_stored(fakes: Fakes) -> None:
    fakes.repo.fail_next("add", StorageUnavailable("down"))
    with pytest.raises(Refused) as refused:
        await capture_text_within(a_capture(), 1, fakes.adapters)
    assert refused.value.code == "STORAGE_UNAVAILABLE"


async def test_a_capture_settled_in_its_run_cancels_its_check(fakes: Fakes) -> None:
    """Issue 32: the check is sent before the write, and deleted once the run settled the
    capture, so no second execution follows a capture the run filed."""
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    capture = a_capture()
    [_ async for _ in capture_text(capture, fakes.adapters)]
    await fakes.drain()
    assert [s.job.capture_id for s in fakes.queues.sent] == [capture.capture_id]
    assert [j.capture_id for j in fakes.queues.cancelled] == [capture.capture_id]
    assert not fakes.queues.pending


async def test_a_deferred_capture_trades_its_check_for_the_workers_job(fakes: Fakes) -> None:
    fakes.classifier.then(ClassifierUnavailable("down"))
    capture = a_capture()
    [_ async for _ in capture_text(capture, fakes.adapters)]
    await fakes.drain()
    (check,) = fakes.queues.cancelled
    assert check.tells_outcome
    (job,) = [s.job for s in fakes.queues.pending if s.job.capture_id == capture.capture_id]
    assert not job.tells_outcome  # the worker publishes the outcome it files


async def test_a_check_that_could_not_be_cancelled_comes_due_and_finds_nothing_to_do(
    fakes: Fakes,
) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    fakes.queues.fail_next("cancel", StorageUnavailable("down"))
    capture = a_capture()
    [_ async for _ in capture_text(capture, fakes.adapters)]
    await fakes.drain()
    assert not fakes.queues.cancelled
    (check,) = [s for s in fakes.queues.pending if s.job.capture_id == capture.capture_id]
    before = await fakes.repo.get(USER, capture.capture_id)
    await handle_classify_job(check.job, fakes.adapters)
    after = await fakes.repo.get(USER, capture.capture_id)
    assert after == before and len(fakes.classifier.texts) == 1


# The outcome a live run holds for its stream (issue 32): no message when it was shown, one when
# it was not, and the run's check publishes it when the process died holding it.


async def test_a_process_that_died_holding_its_outcome_leaves_it_to_the_check(
    fakes: Fakes,
) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    capture = a_capture()
    progress = [p async for p in capture_text(capture, fakes.adapters)]
    settled = progress[-1].item
    for task in list(background._tasks):  # the process dies: its hold with it
        task.cancel()
    fakes.outbox.abandon()
    await asyncio.gather(*background._tasks, fakes.outbox.drain(), return_exceptions=True)
    assert not fakes.queues.outcomes and not fakes.queues.cancelled

    (check,) = [s.job for s in fakes.queues.pending if s.job.capture_id == settled.id]
    assert check.tells_outcome
    await fakes.queues.deliver(lambda job: handle_classify_job(job, fakes.adapters))
    await fakes.drain()
    (told,) = fakes.queues.outcomes
    assert (told.capture_id, told.settled_at, told.bucket) == (
        settled.id,
        settled.updated_at,
        Bucket.PEOPLE,
    )
    assert len(fakes.classifier.texts) == 1  # filed once


async def test_an_outcome_no_stream_showed_is_published_and_its_check_deleted(
    fakes: Fakes,
) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    capture = a_capture()
    [_ async for _ in capture_text(capture, fakes.adapters)]  # nobody shows it
    assert not fakes.queues.outcomes  # held, for the outcome delay
    await fakes.drain()
    assert [o.capture_id for o in fakes.queues.outcomes] == [capture.capture_id]
    assert [j.capture_id for j in fakes.queues.cancelled] == [capture.capture_id]
    assert not fakes.queues.pending


async def test_a_shown_outcome_whose_check_stays_is_marked_so_the_check_tells_nothing(
    fakes: Fakes,
) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    fakes.queues.fail_next("cancel", StorageUnavailable("down"))
    capture = a_capture()
    settled = [p async for p in capture_text(capture, fakes.adapters)][-1].item
    fakes.outbox.delivered(settled)
    await fakes.drain()
    assert fakes.repo.stored(USER, settled.id).was_shown_live
    await fakes.queues.deliver(lambda job: handle_classify_job(job, fakes.adapters))
    await fakes.drain()
    assert not fakes.queues.outcomes


# A new capture's words go to the model while the capture is stored (issue 32); nothing is filed
# on the answer before the capture is, and an answer nobody needs is not waited for.


@pytest.fixture
def storage_up() -> None:
    """As after a capture this process stored (an earlier test may have left it down)."""
    from shared.services import pipeline

    pipeline._storage.up = True


async def test_the_model_is_asked_while_the_capture_is_stored(fakes: Fakes, storage_up) -> None:
    asked = asyncio.Event()

    async def answer(_text: str) -> Classification:
        asked.set()
        return guess(Bucket.PEOPLE, 0.9, "Call Sarah")

    async def store_once_asked() -> None:
        # The create finishes only after the model was asked: it fails if they run in turn.
        await asyncio.wait_for(asked.wait(), timeout=5)
        assert fakes.repo.calls == ["add"]  # and nothing was written on the answer before it

    fakes.classifier.then(answer)
    fakes.repo.before_next("add", store_once_asked)
    capture = a_capture()
    progress = [p async for p in capture_text(capture, fakes.adapters)]
    assert [type(p) for p in progress] == [Stored, Settled]
    assert progress[-1].item.filed_bucket is Bucket.PEOPLE
    assert fakes.classifier.texts == ["Call Sarah about the budget"]
    assert fakes.repo.calls[:3] == ["add", "known_people", "put_filed"]


async def test_a_capture_that_is_not_stored_stops_its_model_call(fakes: Fakes, storage_up) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def answer(_text: str) -> Classification:
        started.set()
        try:
            await asyncio.Event().wait()  # a model that takes its time
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async def store_once_asked() -> None:
        await asyncio.wait_for(started.wait(), timeout=5)

    fakes.classifier.then(answer)
    fakes.repo.before_next("add", store_once_asked)
    fakes.repo.fail_next("add", StorageUnavailable("down"))
    (refused,) = [p async for p in capture_text(a_capture(), fakes.adapters)]
    assert isinstance(refused, Refused) and refused.code == "STORAGE_UNAVAILABLE"
    await asyncio.wait_for(cancelled.wait(), timeout=5)
    await fakes.drain()
    assert fakes.repo.calls == ["add"]


async def test_a_replayed_capture_already_filed_is_not_filed_again(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    capture = a_capture()
    first = [p async for p in capture_text(capture, fakes.adapters)][-1].item
    await fakes.drain()
    # The replay's early call gets another answer: it must not be what the capture says.
    fakes.classifier.then(guess(Bucket.IDEAS, 0.9, "Something else"))
    fakes.repo.calls.clear()
    again = [p async for p in capture_text(capture, fakes.adapters)][-1].item
    await fakes.drain()
    assert again == first and again.filed_bucket is Bucket.PEOPLE
    assert "put_filed" not in fakes.repo.calls and "save" not in fakes.repo.calls


async def test_asked_about_other_words_the_model_is_asked_again(fakes: Fakes) -> None:
    """A replayed capture that has answers since is classified on what it holds now."""
    from shared.services.pipeline import _AskedAhead

    def titled(text: str) -> Classification:
        return guess(Bucket.PEOPLE, 0.9, text)

    fakes.classifier.then(titled, titled)
    ahead = _AskedAhead(fakes.classifier, "Call Sarah")
    answer = await ahead.classify("my sister\nCall Sarah")
    ahead.close()
    assert answer.title == "my sister\nCall Sarah"
    assert sorted(fakes.classifier.texts) == ["Call Sarah", "my sister\nCall Sarah"]


async def test_while_storage_is_down_the_model_waits_for_the_store(
    fakes: Fakes, storage_up
) -> None:
    fakes.repo.fail_next("add", StorageUnavailable("down"), times=2)
    for _ in range(2):
        (refused,) = [p async for p in capture_text(a_capture(), fakes.adapters)]
        assert refused.code == "STORAGE_UNAVAILABLE"
    await fakes.drain()
    # The first went to the model beside its store; once that failed, the next one waited.
    assert len(fakes.classifier.texts) == 1

    def nobody_asked_yet() -> None:
        assert len(fakes.classifier.texts) == 1

    fakes.repo.before_next("add", nobody_asked_yet)
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    settled = [p async for p in capture_text(a_capture(), fakes.adapters)][-1]
    assert settled.item.filed_bucket is Bucket.PEOPLE and not fakes.repo.armed
