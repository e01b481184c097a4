"""shared/services/poison.py on the fakes: work that ran out of retries becomes a failed capture
with its reason, and only a capture still waiting for that work is failed."""

from __future__ import annotations

import json

import pytest

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.messages import ClassifyJob
from shared.domain.outcomes import FailureCode
from shared.services.poison import fail_poisoned_classify_job, settle_poisoned_voice_note
from shared.settings import VOICE_CONTAINER
from tests.fakes import USER, Fakes, guess, job_for, new_id, text_item, voice_item


def poisoned_job(item: InboxItem) -> bytes:
    """The job as it was sent, which is what the host moves to `captures-classify-poison`."""
    return job_for(item).model_dump_json(by_alias=True).encode()


def poisoned_blob(name: str, container: str = VOICE_CONTAINER, kind: str = "BlobTrigger") -> bytes:
    """The host's BlobTriggerMessage on `webjobs-blobtrigger-poison`."""
    return json.dumps(
        {
            "Type": kind,
            "FunctionId": "Host.Functions.voice_note_uploaded",
            "BlobType": "BlockBlob",
            "ContainerName": container,
            "BlobName": name,
            "ETag": '"0x8DC0FFEE"',
        }
    ).encode()


# -- classify jobs -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [Status.RECEIVED, Status.QUEUED])
async def test_a_poisoned_job_fails_its_waiting_capture(fakes: Fakes, status: Status) -> None:
    item = fakes.repo.seed(text_item(status=status))
    failed = await fail_poisoned_classify_job(poisoned_job(item), fakes.adapters)
    assert (failed.status, failed.error) == (Status.FAILED, FailureCode.CLASSIFY_FAILED)
    assert failed.text == item.text  # the words are kept: the user can still pick a bucket
    assert fakes.repo.stored(USER, item.id) == failed


async def test_a_failure_is_published_as_an_outcome_is(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item(status=Status.QUEUED))
    failed = await fail_poisoned_classify_job(poisoned_job(item), fakes.adapters)
    await fakes.drain()
    (published,) = fakes.queues.outcomes
    assert (published.capture_id, published.outcome) == (item.id, None)
    assert published.error is FailureCode.CLASSIFY_FAILED
    assert published.settled_at == failed.updated_at
    # Nothing is published again for a redelivered poison message: nothing was written.
    await fail_poisoned_classify_job(poisoned_job(item), fakes.adapters)
    await fakes.drain()
    assert len(fakes.queues.outcomes) == 1


@pytest.mark.parametrize(
    "status", [Status.FILED, Status.NEEDS_CLARIFICATION, Status.FAILED, Status.DELETING]
)
async def test_a_poisoned_job_leaves_a_capture_that_moved_on(fakes: Fakes, status: Status) -> None:
    item = fakes.repo.seed(text_item(status=status, filed_bucket=Bucket.IDEAS))
    assert await fail_poisoned_classify_job(poisoned_job(item), fakes.adapters) == item
    assert "save" not in fakes.repo.calls


async def test_a_capture_settled_just_before_the_failure_is_kept(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item(status=Status.QUEUED))

    def filed_meanwhile() -> None:
        fakes.repo.seed(item.classified(guess(Bucket.IDEAS, 0.9)))

    fakes.repo.before_next("save", filed_meanwhile)
    result = await fail_poisoned_classify_job(poisoned_job(item), fakes.adapters)
    assert result.status is Status.FILED and result.error is None
    assert fakes.repo.stored(USER, item.id).status is Status.FILED
    await fakes.drain()
    assert fakes.queues.outcomes == []  # the filing tells its own story, not this failure


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"captureId": ""}',
        ClassifyJob(capture_id=new_id(), user_id=USER).model_dump_json().encode(),
    ],
)
async def test_a_poisoned_message_naming_no_capture_is_ignored(fakes: Fakes, body: bytes) -> None:
    assert await fail_poisoned_classify_job(body, fakes.adapters) is None
    assert "save" not in fakes.repo.calls


# -- voice notes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [Status.AWAITING_UPLOAD, Status.TRANSCRIBING])
async def test_a_poisoned_voice_note_fails_with_transcription_failed(
    fakes: Fakes, status: Status
) -> None:
    item = fakes.repo.seed(voice_item(status=status))
    failed = await settle_poisoned_voice_note(poisoned_blob(item.audio_blob), fakes.adapters)
    assert (failed.status, failed.error) == (Status.FAILED, FailureCode.TRANSCRIPTION_FAILED)
    assert fakes.repo.stored(USER, item.id) == failed and fakes.queues.sent == []


async def test_a_poisoned_voice_note_with_its_transcript_stored_is_queued(fakes: Fakes) -> None:
    item = fakes.repo.seed(voice_item(status=Status.RECEIVED, text="Call Sarah"))
    result = await settle_poisoned_voice_note(poisoned_blob(item.audio_blob), fakes.adapters)
    assert result.status is Status.QUEUED and result.error is None
    assert [s.job for s in fakes.queues.sent] == [job_for(item, handed_over=True)]


@pytest.mark.parametrize("status", [Status.QUEUED, Status.FILED, Status.FAILED])
async def test_a_poisoned_voice_note_that_moved_on_is_left(fakes: Fakes, status: Status) -> None:
    item = fakes.repo.seed(voice_item(status=status, text="Call Sarah", error=None))
    assert await settle_poisoned_voice_note(poisoned_blob(item.audio_blob), fakes.adapters) == item
    assert "save" not in fakes.repo.calls and fakes.queues.sent == []


async def test_poison_of_other_blobs_and_triggers_is_not_ours(fakes: Fakes) -> None:
    item = fakes.repo.seed(voice_item(status=Status.TRANSCRIBING))
    text = fakes.repo.seed(text_item(status=Status.QUEUED))
    bodies = [
        poisoned_blob(item.audio_blob, container="other-container"),
        poisoned_blob(item.audio_blob, kind="QueueTrigger"),
        poisoned_blob(f"other/{item.id}.m4a"),  # another user's folder
        poisoned_blob(f"{USER}/{item.id}.wav"),  # not the blob the capture waits for
        poisoned_blob(f"{USER}/{text.id}.m4a"),  # a text capture
        poisoned_blob(f"{USER}/{new_id()}.m4a"),  # no such capture
        poisoned_blob("x"),
        b'{"Type": "BlobTrigger"}',
        b"[]",
    ]
    for body in bodies:
        assert await settle_poisoned_voice_note(body, fakes.adapters) is None
    assert "save" not in fakes.repo.calls
    assert fakes.repo.stored(USER, item.id) == item
