"""shared/services/worker.py on the fakes: a classify job by the status of its capture,
at-least-once delivery, the delayed check, and voice notes whose audio never came."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from shared.domain.capture import Status
from shared.domain.classification import Bucket
from shared.domain.documents import utcnow
from shared.domain.errors import ClassifierUnavailable, StorageUnavailable
from shared.domain.messages import ClassifyJob
from shared.services import background, outbox
from shared.services.placement import filed_item_for
from shared.services.worker import handle_classify_job, queue_for_worker, upload_deadline
from tests.fakes import USER, Fakes, guess, job_for, new_id, text_item, voice_item


def handler(fakes: Fakes, *, first_delivery: bool = False):
    return lambda job: handle_classify_job(job, fakes.adapters, first_delivery=first_delivery)


@pytest.mark.parametrize("status", [Status.RECEIVED, Status.QUEUED])
async def test_a_waiting_capture_is_classified_and_filed(fakes: Fakes, status: Status) -> None:
    item = fakes.repo.seed(text_item("order the kitchen tiles", status=status))
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.85, "Kitchen tiles"))
    result = await handle_classify_job(job_for(item), fakes.adapters)
    assert (result.status, result.filed_bucket) == (Status.FILED, Bucket.PROJECTS)
    assert fakes.classifier.texts == ["order the kitchen tiles"]
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PROJECTS]


async def test_queueing_sends_the_job_then_marks_the_capture_queued(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    queued = await queue_for_worker(item, fakes.adapters)
    assert queued.status is Status.QUEUED
    assert fakes.repo.stored(USER, item.id).status is Status.QUEUED
    (sent,) = fakes.queues.sent
    assert (sent.job.capture_id, sent.job.user_id, sent.delay_s) == (item.id, USER, 0)


async def test_a_job_that_could_not_be_sent_leaves_the_capture_received(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    fakes.queues.fail_next("enqueue_classify", StorageUnavailable("Queue storage answered 503"))
    with pytest.raises(StorageUnavailable):
        await queue_for_worker(item, fakes.adapters)
    assert fakes.repo.stored(USER, item.id).status is Status.RECEIVED
    assert fakes.repo.calls == []


async def test_a_job_delivered_twice_files_once(fakes: Fakes) -> None:
    item = await queue_for_worker(fakes.repo.seed(text_item()), fakes.adapters)
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    # The same job sent twice: each copy's first delivery.
    first, second = await fakes.queues.deliver(handler(fakes, first_delivery=True), twice=True)
    assert first == second and first.status is Status.FILED
    assert len(fakes.classifier.texts) == 1  # the second found it settled
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PEOPLE]
    await fakes.drain()
    assert len(fakes.queues.outcomes) == 1


async def test_a_job_delivered_twice_at_once_files_once(fakes: Fakes) -> None:
    item = await queue_for_worker(fakes.repo.seed(text_item()), fakes.adapters)
    both_asked = asyncio.Barrier(2)

    async def when_both_asked(text: str):
        await asyncio.wait_for(both_asked.wait(), timeout=5)
        return guess(Bucket.PEOPLE, 0.9, "Call Sarah")

    fakes.classifier.then(when_both_asked, when_both_asked)
    results = await fakes.queues.deliver(handler(fakes), twice=True, concurrently=True)
    assert len(fakes.classifier.texts) == 2
    assert [r.status for r in results] == [Status.FILED] * 2
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PEOPLE]
    await fakes.drain()
    assert len(fakes.queues.outcomes) == 1


async def test_a_handed_over_job_files_with_no_sweep_on_its_first_delivery(fakes: Fakes) -> None:
    """Issue 32: nothing of an earlier attempt can be in a bucket, so the job skips the sweep of
    the other buckets (five storage calls); a redelivery sweeps what a dead attempt left."""
    item = await queue_for_worker(fakes.repo.seed(text_item()), fakes.adapters)
    (sent,) = fakes.queues.sent
    assert sent.job.handed_over and sent.job.capture_id == item.id
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    fakes.repo.calls.clear()
    await handle_classify_job(sent.job, fakes.adapters, first_delivery=True)
    assert fakes.repo.calls == ["get", "known_people", "put_filed", "save"]

    # An attempt that died after its filed item (Ideas) and before its save; then the host
    # hands the job out again and the model answers otherwise.
    other = fakes.repo.seed(text_item("tiles", status=Status.QUEUED))
    dead = other.classified(guess(Bucket.IDEAS, 0.9, "Tiles"))
    await fakes.repo.put_filed(filed_item_for(dead))
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9, "Tiles"))
    job = ClassifyJob(capture_id=other.id, user_id=USER, handed_over=True)
    await handle_classify_job(job, fakes.adapters, first_delivery=False)
    assert fakes.repo.filed_buckets(USER, other.id) == [Bucket.PROJECTS]


async def test_the_model_down_leaves_the_job_for_the_hosts_retry(fakes: Fakes) -> None:
    item = await queue_for_worker(fakes.repo.seed(text_item()), fakes.adapters)
    fakes.classifier.then(ClassifierUnavailable("timeout"), guess(Bucket.IDEAS, 0.9))
    with pytest.raises(ClassifierUnavailable):
        await fakes.queues.deliver(handler(fakes))
    assert fakes.repo.stored(USER, item.id).status is Status.QUEUED
    assert len(fakes.queues.pending) == 1

    (result,) = await fakes.queues.deliver(handler(fakes))  # the model is back
    assert result.status is Status.FILED and not fakes.queues.pending


async def test_a_job_for_no_capture_or_a_deleted_one_does_nothing(fakes: Fakes) -> None:
    gone = ClassifyJob(capture_id=new_id(), user_id=USER)
    deleted = fakes.repo.seed(text_item().tombstoned())
    assert await handle_classify_job(gone, fakes.adapters) is None
    assert await handle_classify_job(job_for(deleted), fakes.adapters) is None
    assert fakes.classifier.texts == [] and "save" not in fakes.repo.calls


async def test_a_job_for_another_users_capture_does_nothing(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    job = ClassifyJob(capture_id=item.id, user_id="other")
    assert await handle_classify_job(job, fakes.adapters) is None
    assert fakes.classifier.texts == []


async def test_a_capture_deleted_while_classified_ends_the_job(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item(status=Status.QUEUED))

    async def tombstone() -> None:
        current = await fakes.repo.get(USER, item.id)
        await fakes.repo.save(current.tombstoned())

    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9))
    fakes.repo.before_next("save", tombstone)
    assert await handle_classify_job(job_for(item), fakes.adapters) is None
    assert fakes.repo.filed_count() == 0


async def test_a_capture_being_transcribed_is_left_to_the_blob_trigger(fakes: Fakes) -> None:
    # Even with text (an earlier attempt's): while it is transcribing, the blob trigger owns it.
    item = fakes.repo.seed(voice_item(status=Status.TRANSCRIBING, text="Call Sa"))
    assert await handle_classify_job(job_for(item), fakes.adapters) == item
    assert fakes.classifier.texts == [] and fakes.repo.calls == ["get"]


async def test_a_capture_with_no_text_is_left_as_it_is(fakes: Fakes) -> None:
    item = fakes.repo.seed(voice_item(status=Status.RECEIVED, text=""))
    assert await handle_classify_job(job_for(item), fakes.adapters) == item
    assert fakes.classifier.texts == [] and fakes.repo.calls == ["get"]


# -- the delayed check ---------------------------------------------------------------------------


async def test_the_check_is_sent_with_its_delay(fakes: Fakes) -> None:
    job = ClassifyJob(capture_id=new_id(), user_id=USER)
    await fakes.outbox.send_check(job, 120)
    (sent,) = fakes.queues.sent
    assert sent.job == job and sent.delay_s == 120


async def test_a_check_that_cannot_be_sent_does_not_stop_the_capture(fakes: Fakes) -> None:
    job = ClassifyJob(capture_id=new_id(), user_id=USER)
    fakes.queues.fail_next("enqueue_classify", StorageUnavailable("Queue storage answered 503"))
    await fakes.outbox.send_check(job, 120)  # logged, not raised
    assert fakes.queues.calls == ["enqueue_classify"] and fakes.queues.sent == []


async def test_a_slow_queue_holds_the_capture_up_no_longer_than_check_first_s(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outbox, "CHECK_FIRST_S", 0.05)
    answered = asyncio.Event()
    fakes.queues.before_next("enqueue_classify", answered.wait)  # a queue that hangs
    job = ClassifyJob(capture_id=new_id(), user_id=USER)
    await fakes.outbox.send_check(job, 120)
    assert fakes.queues.sent == []  # it went on without waiting for the answer

    answered.set()
    await fakes.drain()
    assert [s.job for s in fakes.queues.sent] == [job]  # and the check still went out


# -- voice notes whose audio never came ----------------------------------------------------------


def created_ago(seconds: float):
    return utcnow() - timedelta(seconds=seconds)


async def test_a_voice_note_without_audio_past_its_deadline_is_removed(fakes: Fakes) -> None:
    late = upload_deadline(fakes.adapters.policy).total_seconds() + 1
    item = fakes.repo.seed(voice_item(created_at=created_ago(late)))
    assert await handle_classify_job(job_for(item), fakes.adapters) is None
    assert fakes.repo.stored(USER, item.id) is None
    assert fakes.repo.calls[:3] == ["get", "save", "delete_filed"]  # tombstoned, then removed
    assert fakes.voice.calls == ["exists", "delete"]
    # This job is the safety net: it sends no other check (a failure redelivers it).
    assert [s for s in fakes.queues.sent if s.job.capture_id == item.id] == []


async def test_a_voice_note_whose_audio_came_is_left_to_the_blob_trigger(fakes: Fakes) -> None:
    late = upload_deadline(fakes.adapters.policy).total_seconds() + 1
    item = fakes.repo.seed(voice_item(created_at=created_ago(late)))
    fakes.voice.put(item.audio_blob, b"audio")
    assert await handle_classify_job(job_for(item), fakes.adapters) == item
    assert fakes.repo.stored(USER, item.id) == item and fakes.voice.blobs


async def test_audio_arriving_as_the_voice_note_expires_wins(fakes: Fakes) -> None:
    late = upload_deadline(fakes.adapters.policy).total_seconds() + 1
    item = fakes.repo.seed(voice_item(created_at=created_ago(late)))

    async def blob_trigger_starts() -> None:
        current = await fakes.repo.get(USER, item.id)
        await fakes.repo.save(current.start_transcribing())

    fakes.repo.before_next("save", blob_trigger_starts)
    result = await handle_classify_job(job_for(item), fakes.adapters)
    assert result.status is Status.TRANSCRIBING
    assert fakes.repo.stored(USER, item.id).status is Status.TRANSCRIBING
    assert "remove" not in fakes.repo.calls


async def test_an_early_check_of_a_voice_note_comes_back_when_due(fakes: Fakes) -> None:
    item = fakes.repo.seed(voice_item(created_at=created_ago(100)))
    assert await handle_classify_job(job_for(item), fakes.adapters) == item
    (again,) = fakes.queues.sent
    remaining = upload_deadline(fakes.adapters.policy).total_seconds() - 100
    assert again.job == job_for(item) and remaining - 5 < again.delay_s <= remaining
    assert fakes.repo.stored(USER, item.id) == item


async def test_the_deadline_is_the_upload_urls_life_and_the_grace(
    fakes: Fakes, unit_settings
) -> None:
    unit_settings(UPLOAD_URL_TTL_S="60", UPLOAD_GRACE_S="30")
    assert upload_deadline(fakes.adapters.policy) == timedelta(seconds=90)
    item = fakes.repo.seed(voice_item(created_at=created_ago(91)))
    assert await handle_classify_job(job_for(item), fakes.adapters) is None
    assert fakes.repo.stored(USER, item.id) is None


async def test_a_redelivered_job_tells_the_outcome_its_dead_attempt_did_not(fakes: Fakes) -> None:
    """An attempt that died between its save and its publish: the host hands the job out
    again, and the worker, finding the capture settled, publishes the outcome."""
    item = await queue_for_worker(fakes.repo.seed(text_item()), fakes.adapters)
    (sent,) = fakes.queues.sent
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    filed = await handle_classify_job(sent.job, fakes.adapters, first_delivery=True)
    for task in list(background._tasks):  # the process dies before its publish went out
        task.cancel()
    fakes.outbox.abandon()
    await asyncio.gather(*background._tasks, fakes.outbox.drain(), return_exceptions=True)
    assert not fakes.queues.outcomes

    await handle_classify_job(sent.job, fakes.adapters, first_delivery=False)
    await fakes.drain()
    (told,) = fakes.queues.outcomes
    assert (told.capture_id, told.settled_at) == (item.id, filed.updated_at)
    assert len(fakes.classifier.texts) == 1
