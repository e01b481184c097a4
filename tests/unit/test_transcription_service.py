"""shared/services/transcription.py (the blob trigger's use case) on the fakes: a voice note's
transcript stored and queued once however often the blob event comes, the limits, undecodable
audio and silence, and what happens to the audio."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.documents import utcnow
from shared.domain.errors import (
    AudioGone,
    AudioTooLong,
    AudioUndecodable,
    StorageUnavailable,
    TranscriberUnavailable,
)
from shared.domain.outcomes import SAY_AGAIN_QUESTION, FailureCode, Outcome
from shared.domain.preferences import Preferences
from shared.domain.transcript import Transcript, TranscriptSegment
from shared.services.transcription import transcribe_voice_note
from shared.services.worker import handle_classify_job
from testkit.support import SARAH  # plays for 3.06 s
from tests.fakes import USER, Fakes, guess, new_id, text_item, voice_item

AUDIO = b"\x00 not audio: the scripted transcriber does not decode"
LIMIT = 1_000_000


def heard(text: str) -> Transcript:
    return Transcript(text=text, language="en")


def uploaded(fakes: Fakes, data: bytes = AUDIO) -> InboxItem:
    """A voice note whose audio the phone has put in its blob."""
    item = fakes.repo.seed(voice_item())
    fakes.voice.put(item.audio_blob, data)
    return item


async def trigger(
    fakes: Fakes,
    name: str,
    data: bytes = AUDIO,
    *,
    size: int | None = None,
    read: Callable[[], bytes] | None = None,
    **options,
) -> InboxItem | None:
    """The trigger, for a user who keeps no recordings unless `keep_audio`."""
    keep = options.pop("keep_audio", False)
    prefs = Preferences.default(USER).model_copy(update={"keep_audio": keep})
    if await fakes.preferences.get(USER) is None:
        await fakes.preferences.replace(prefs)
    limits = {"max_bytes": LIMIT, "max_seconds": 60.0, **options}
    return await transcribe_voice_note(
        name,
        len(data) if size is None else size,
        read or (lambda: data),
        fakes.adapters,
        fakes.preferences,
        **limits,
    )


async def test_the_transcript_is_stored_and_queued_then_the_audio_goes(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard(" Call Sarah tomorrow. "))
    result = await trigger(fakes, item.audio_blob)

    assert (result.status, result.text) == (Status.QUEUED, "Call Sarah tomorrow.")
    assert fakes.repo.stored(USER, item.id) == result
    assert fakes.transcriber.heard == [(f"{item.id}.m4a", AUDIO)]
    assert [(s.job.capture_id, s.delay_s) for s in fakes.queues.sent] == [(item.id, 0)]
    assert fakes.voice.blobs == {}
    # The audio goes last: until the transcript is stored and queued, a retry needs it. The
    # capture says it went first, so nothing names a blob that is gone.
    assert fakes.voice.calls == ["delete"]
    # transcribing, text, queued, the audio gone
    assert fakes.repo.calls == ["get", "save", "save", "save", "save"]
    assert result.audio_blob is None and result.audio_deleted_at is not None


async def test_kept_by_default_tagged_with_its_owners_retention(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(
        Transcript(
            text="Call Sarah. About the budget.",
            language="en",
            segments=[
                TranscriptSegment(start=0.0, end=1.2, text="Call Sarah."),
                TranscriptSegment(start=1.2, end=3.0, text="About the budget."),
            ],
        )
    )
    result = await transcribe_voice_note(
        item.audio_blob,
        len(AUDIO),
        lambda: AUDIO,
        fakes.adapters,
        fakes.preferences,  # none saved: the defaults, kept 365 days
        max_bytes=LIMIT,
        max_seconds=60.0,
    )
    assert result.status is Status.QUEUED and result.audio_blob == item.audio_blob
    # Kept apart from the uploads: copied, the item saved naming the copy, the upload deleted.
    assert result.audio_container == "voice-recordings"
    kept = f"voice-recordings/{item.audio_blob}"
    assert fakes.voice.blobs == {kept: AUDIO}
    assert fakes.voice.tags == {kept: "365"}
    assert fakes.voice.calls == ["keep", "delete"]
    assert [(s.start, s.end, s.text) for s in result.transcript_segments] == [
        (0.0, 1.2, "Call Sarah."),
        (1.2, 3.0, "About the budget."),
    ]
    assert result.transcribed_at is not None


async def test_keep_audio_keeps_the_audio_for_ever_when_asked(fakes: Fakes) -> None:
    item = uploaded(fakes)
    forever = Preferences.default(USER).model_copy(update={"audio_retention_days": None})
    await fakes.preferences.replace(forever)
    fakes.transcriber.then(heard("Call Sarah"))
    result = await trigger(fakes, item.audio_blob, keep_audio=True)
    assert result.status is Status.QUEUED
    assert fakes.voice.blobs == {f"voice-recordings/{item.audio_blob}": AUDIO}
    assert fakes.voice.tags == {f"voice-recordings/{item.audio_blob}": "forever"}


KEPT = "voice-recordings"


async def test_a_crash_between_the_copy_and_the_uploads_delete_converges(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    fakes.voice.fail_next("delete", StorageUnavailable("Blob storage answered 503"))
    with pytest.raises(StorageUnavailable):
        await trigger(fakes, item.audio_blob, keep_audio=True)
    # The item names the copy before the upload goes: both are there, nothing names a gap.
    stored = fakes.repo.stored(USER, item.id)
    assert stored.audio_container == KEPT and stored.status is Status.QUEUED
    assert set(fakes.voice.blobs) == {item.audio_blob, f"{KEPT}/{item.audio_blob}"}

    fakes.voice.calls.clear()
    again = await trigger(fakes, item.audio_blob, keep_audio=True)  # the host retries the blob
    assert again == stored
    assert fakes.voice.calls == ["delete"]  # an upload whose copy is named: just deleted
    assert fakes.voice.blobs == {f"{KEPT}/{item.audio_blob}": AUDIO}
    assert len(fakes.transcriber.heard) == 1 and len(fakes.queues.sent) == 1


async def test_a_crash_between_the_copy_and_the_save_converges(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    down = StorageUnavailable("Cosmos answered 503")
    fakes.voice.before_next("keep", lambda: fakes.repo.fail_next("save", down))
    with pytest.raises(StorageUnavailable):
        await trigger(fakes, item.audio_blob, keep_audio=True)
    stored = fakes.repo.stored(USER, item.id)
    assert stored.audio_container is None and stored.status is Status.QUEUED
    assert set(fakes.voice.blobs) == {item.audio_blob, f"{KEPT}/{item.audio_blob}"}

    result = await trigger(fakes, item.audio_blob, keep_audio=True)
    assert result.audio_container == KEPT and result.audio_blob == item.audio_blob
    assert fakes.voice.blobs == {f"{KEPT}/{item.audio_blob}": AUDIO}
    assert fakes.voice.tags == {f"{KEPT}/{item.audio_blob}": "365"}
    assert len(fakes.transcriber.heard) == 1 and len(fakes.queues.sent) == 1


async def test_the_same_event_twice_at_once_keeps_one_copy(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"), heard("Call Sarah"))
    await asyncio.gather(
        trigger(fakes, item.audio_blob, keep_audio=True),
        trigger(fakes, item.audio_blob, keep_audio=True),
    )
    stored = fakes.repo.stored(USER, item.id)
    assert stored.audio_container == KEPT and stored.text == "Call Sarah"
    assert fakes.voice.blobs == {f"{KEPT}/{item.audio_blob}": AUDIO}


async def test_a_delivery_finding_its_upload_moved_by_another_keeps_the_copy(
    fakes: Fakes,
) -> None:
    """Storage tells a delivery the upload is gone because another delivery of the same event
    copied it, saved the item naming the copy and deleted it, all since this one looked for a
    copy: the recording stays kept (it was once let go here)."""
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    assert item.audio_blob is not None

    async def the_other_delivery() -> None:
        await trigger(fakes, item.audio_blob, keep_audio=True)
        assert fakes.repo.stored(USER, item.id).audio_container == KEPT

    fakes.voice.before_next("keep", the_other_delivery)
    fakes.voice.fail_next("keep", AudioGone(item.audio_blob))
    result = await trigger(fakes, item.audio_blob, keep_audio=True)
    assert result.audio_container == KEPT and result.audio_deleted_at is None
    assert fakes.repo.stored(USER, item.id) == result
    assert fakes.voice.blobs == {f"{KEPT}/{item.audio_blob}": AUDIO}


async def test_a_capture_deleted_during_the_move_leaves_no_copy(fakes: Fakes) -> None:
    from shared.services.inbox import delete_capture

    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    fakes.voice.before_next("keep", lambda: delete_capture(USER, item.id, fakes.adapters))
    await trigger(fakes, item.audio_blob, keep_audio=True)
    assert fakes.repo.stored(USER, item.id) is None
    assert fakes.voice.blobs == {}


async def test_audio_deleted_during_the_move_leaves_no_copy(fakes: Fakes) -> None:
    from shared.services.audio import delete_audio

    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    now = utcnow()
    fakes.voice.before_next("keep", lambda: delete_audio(USER, item.id, now, fakes.adapters))
    result = await trigger(fakes, item.audio_blob, keep_audio=True)
    assert result.audio_blob is None and result.audio_container is None
    assert fakes.voice.blobs == {}


async def test_the_same_blob_event_twice_transcribes_and_queues_once(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    first = await trigger(fakes, item.audio_blob)
    second = await trigger(fakes, item.audio_blob)
    assert second == first and second.status is Status.QUEUED
    assert len(fakes.transcriber.heard) == 1 and len(fakes.queues.sent) == 1

    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    (filed, again) = await fakes.queues.deliver(
        lambda job: handle_classify_job(job, fakes.adapters), twice=True
    )
    assert filed == again and filed.filed_bucket is Bucket.PEOPLE
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PEOPLE]


async def test_two_events_at_once_still_file_once(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"), heard("Call Sarah"))
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9))
    results = await asyncio.gather(trigger(fakes, item.audio_blob), trigger(fakes, item.audio_blob))
    assert {r.status for r in results} == {Status.QUEUED}
    # Racing events may both queue a job; the worker settles the capture once.
    assert fakes.queues.sent and {s.job.capture_id for s in fakes.queues.sent} == {item.id}
    await fakes.queues.deliver(lambda job: handle_classify_job(job, fakes.adapters))
    assert len(fakes.classifier.texts) == 1
    assert len(fakes.repo.inbox()) == 1
    assert fakes.repo.stored(USER, item.id).status is Status.FILED
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PEOPLE]


async def test_an_event_finding_the_work_done_meanwhile_transcribes_nothing(
    fakes: Fakes,
) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    first: list[InboxItem | None] = []

    async def the_other_event_runs() -> None:  # after this one read the capture
        first.append(await trigger(fakes, item.audio_blob))

    fakes.repo.before_next("save", the_other_event_runs)
    result = await trigger(fakes, item.audio_blob)
    assert first[0].status is Status.QUEUED and result == first[0]
    assert len(fakes.transcriber.heard) == 1 and len(fakes.queues.sent) == 1
    assert fakes.repo.stored(USER, item.id).status is Status.QUEUED


async def test_too_large_fails_without_reading_the_audio(fakes: Fakes) -> None:
    item = uploaded(fakes)

    def never_read() -> bytes:
        raise AssertionError("an oversize blob must not be read")

    result = await trigger(fakes, item.audio_blob, size=LIMIT + 1, read=never_read)
    assert (result.status, result.error) == (Status.FAILED, FailureCode.AUDIO_TOO_LARGE)
    assert fakes.transcriber.heard == [] and fakes.queues.sent == []
    assert fakes.voice.blobs == {}


async def test_too_long_fails_with_its_code_and_a_repeat_changes_nothing(
    fakes: Fakes,
) -> None:
    # The transcriber holds the limit while it decodes (whatever the container says; the
    # real decoder is in tests/integration/test_transcription.py): the service fails the
    # capture on its word, without a transcript.
    item = uploaded(fakes, SARAH)
    fakes.transcriber.then(AudioTooLong("plays longer than 2.5 s"))
    result = await trigger(fakes, item.audio_blob, SARAH, max_seconds=2.5)
    assert (result.status, result.error, result.text) == (
        Status.FAILED,
        FailureCode.AUDIO_TOO_LONG,
        None,
    )
    assert fakes.transcriber.limits == [2.5] and fakes.voice.blobs == {}

    again = await trigger(fakes, item.audio_blob, SARAH, max_seconds=2.5)
    assert again == result and len(fakes.transcriber.heard) == 1
    assert fakes.queues.sent == []


async def test_a_recording_is_transcribed_held_to_the_limit(fakes: Fakes) -> None:
    item = uploaded(fakes, SARAH)
    fakes.transcriber.then(heard("Call Sarah about the budget review"))
    result = await trigger(fakes, item.audio_blob, SARAH, max_seconds=3.5)
    assert result.status is Status.QUEUED and fakes.transcriber.limits == [3.5]


async def test_undecodable_audio_fails_once_with_its_code(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(AudioUndecodable("no audio stream"))
    result = await trigger(fakes, item.audio_blob)
    assert (result.status, result.error) == (Status.FAILED, FailureCode.AUDIO_UNDECODABLE)
    assert fakes.repo.stored(USER, item.id) == result
    assert fakes.queues.sent == [] and fakes.voice.blobs == {}
    assert await trigger(fakes, item.audio_blob) == result  # a repeated event
    assert len(fakes.transcriber.heard) == 1
    await fakes.drain()
    (published,) = fakes.queues.outcomes  # the user is told, once
    assert (published.error, published.settled_at) == (
        FailureCode.AUDIO_UNDECODABLE,
        result.updated_at,
    )


@pytest.mark.parametrize("silence", ["", "   \n"])
async def test_silence_asks_to_say_it_again_without_asking_a_model(
    fakes: Fakes, silence: str
) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard(silence))
    result = await trigger(fakes, item.audio_blob)
    assert (result.status, result.outcome) == (Status.NEEDS_CLARIFICATION, Outcome.MISUNDERSTOOD)
    assert result.question_text == SAY_AGAIN_QUESTION and result.text == ""
    assert fakes.classifier.texts == [] and fakes.queues.sent == []
    assert fakes.repo.filed_count() == 0 and fakes.voice.blobs == {}
    await fakes.drain()
    (published,) = fakes.queues.outcomes
    assert published.outcome is Outcome.MISUNDERSTOOD
    assert published.question_text == SAY_AGAIN_QUESTION


async def test_the_transcriber_down_is_retried_with_the_audio_kept(fakes: Fakes) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(TranscriberUnavailable("model loading"), heard("Call Sarah"))
    with pytest.raises(TranscriberUnavailable):
        await trigger(fakes, item.audio_blob)
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.status, stored.text) == (Status.TRANSCRIBING, None)
    assert fakes.voice.blobs == {item.audio_blob: AUDIO}  # kept for the host's retry

    result = await trigger(fakes, item.audio_blob)
    assert (result.status, result.text) == (Status.QUEUED, "Call Sarah")
    assert len(fakes.queues.sent) == 1 and fakes.voice.blobs == {}


async def test_a_retry_after_queueing_failed_queues_without_transcribing_again(
    fakes: Fakes,
) -> None:
    item = uploaded(fakes)
    fakes.transcriber.then(heard("Call Sarah"))
    fakes.queues.fail_next("enqueue_classify", StorageUnavailable("Queue storage answered 503"))
    with pytest.raises(StorageUnavailable):
        await trigger(fakes, item.audio_blob)
    stored = fakes.repo.stored(USER, item.id)
    assert (stored.status, stored.text) == (Status.RECEIVED, "Call Sarah")
    assert fakes.voice.blobs  # not yet deleted

    result = await trigger(fakes, item.audio_blob)
    assert result.status is Status.QUEUED and len(fakes.transcriber.heard) == 1
    assert len(fakes.queues.sent) == 1 and fakes.voice.blobs == {}


async def test_a_blob_no_capture_waits_for_is_ignored_and_left(fakes: Fakes) -> None:
    item = uploaded(fakes)
    text = fakes.repo.seed(text_item())
    strays = [
        f"other/{item.id}.m4a",  # another user's folder
        f"{USER}/{new_id()}.m4a",  # no such capture
        f"{USER}/{item.id}.wav",  # not the blob the capture waits for
        f"{USER}/{text.id}.m4a",  # a text capture
        f"{USER}/notes.txt",
        "x",
    ]
    for stray in strays:
        fakes.voice.put(stray, AUDIO)
        assert await trigger(fakes, stray) is None
    assert fakes.repo.stored(USER, item.id) == item
    assert fakes.transcriber.heard == [] and "save" not in fakes.repo.calls
    assert set(strays) < set(fakes.voice.blobs)  # left for an operator to look at


async def test_a_capture_deleted_while_transcribed_queues_nothing(fakes: Fakes) -> None:
    item = uploaded(fakes)

    async def deleted_meanwhile(audio: bytes, filename: str) -> Transcript:
        current = await fakes.repo.get(USER, item.id)
        await fakes.repo.save(current.tombstoned())
        return heard("Call Sarah")

    fakes.transcriber.then(deleted_meanwhile)
    await trigger(fakes, item.audio_blob)
    stored = fakes.repo.stored(USER, item.id)
    assert stored.is_deleted and stored.text is None  # the transcript was not stored
    assert fakes.queues.sent == []


async def test_a_silent_capture_deleted_before_it_is_settled_is_dropped(fakes: Fakes) -> None:
    item = uploaded(fakes)

    async def tombstone() -> None:
        current = await fakes.repo.get(USER, item.id)
        await fakes.repo.save(current.tombstoned())

    def silent_then_deleted(audio: bytes, filename: str) -> Transcript:
        fakes.repo.before_next("save", lambda: None)  # the empty text is stored
        fakes.repo.before_next("save", tombstone)  # then the DELETE lands
        return heard("")

    fakes.transcriber.then(silent_then_deleted)
    assert await trigger(fakes, item.audio_blob) is None
    assert fakes.repo.armed == [] and fakes.repo.stored(USER, item.id).is_deleted
    await fakes.drain()
    assert fakes.queues.outcomes == []
