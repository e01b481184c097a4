"""A voice note's recording, kept beside its transcript: read back (a byte range at a time, for a
player that seeks), transcribed again on demand (a queued, idempotent job), deleted alone, and
let go when its owner's retention says so (the retention timer).

The inbox item says whether a recording is kept: `audioBlob` names it while it is (in the
container `audioContainer` names: the recordings' once transcribed; the uploads' before, and
for items stored before recordings were kept apart), and `audioDeletedAt` says when it went.
The item is saved first (ETag-guarded) and the blob deleted after, so nothing ever names a blob
that is gone; a blob left by a crash in between is swept by the retention timer."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

from pydantic import Field

from shared import tracing
from shared.domain.audio import StoredAudio, parse_blob_name
from shared.domain.capture import InboxItem
from shared.domain.documents import Document
from shared.domain.errors import (
    AudioGone,
    AudioTooLong,
    AudioUndecodable,
    Conflict,
    Invalid,
    NotFound,
)
from shared.domain.messages import ClassifyJob, TranscribeJob
from shared.domain.ports import Adapters, PreferencesStore, VoiceNoteStore
from shared.domain.preferences import Preferences
from shared.domain.transcript import TranscriptSegment
from shared.services.inbox import get_capture, not_found
from shared.services.placement import converge
from shared.services.retry_stale import on_latest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recording:
    """A capture's recording as stored: its blob (and container), its size in bytes and type."""

    capture_id: str
    name: str
    size: int
    content_type: str
    container: str | None = None

    @property
    def filename(self) -> str:
        return self.name.rsplit("/", 1)[-1]


def _no_audio(item: InboxItem) -> NotFound:
    if item.source != "voice":
        return NotFound("This capture is text: it has no recording.", "NO_AUDIO")
    if item.audio_deleted_at is not None:
        return NotFound("This capture's recording was deleted.", "AUDIO_DELETED")
    return NotFound("This voice note's recording has not arrived yet.", "AUDIO_NOT_UPLOADED")


async def recording_of(user_id: str, capture_id: str, adapters: Adapters) -> Recording:
    """The caller's capture's recording. NotFound for another user's capture (as for none),
    NO_AUDIO for a text capture, AUDIO_DELETED once it was deleted, AUDIO_NOT_UPLOADED before
    it came."""
    item = await get_capture(user_id, capture_id, adapters.repo)
    if item.audio_blob is None:
        raise _no_audio(item)
    stored = await adapters.voice.stat(item.audio_blob, item.audio_container)
    if stored is None:
        raise _no_audio(item) if item.awaits_audio else _deleted_meanwhile()
    content_type = item.audio_content_type or stored.content_type
    return Recording(item.id, item.audio_blob, stored.size, content_type, item.audio_container)


def _deleted_meanwhile() -> NotFound:
    return NotFound("This capture's recording was deleted.", "AUDIO_DELETED")


async def read_recording(
    recording: Recording, start: int, end: int, voice: VoiceNoteStore
) -> AsyncIterator[bytes]:
    """Bytes `start` to `end` (inclusive) of the recording, streamed as storage sends them.
    The first piece is read before this returns, so that a recording deleted meanwhile is a
    404 AUDIO_DELETED rather than an answer cut short."""
    pieces = aiter(voice.read(recording.name, start, end - start + 1, recording.container))
    try:
        first = await anext(pieces, b"")
    except AudioGone:
        raise _deleted_meanwhile() from None

    async def rest() -> AsyncIterator[bytes]:
        yield first
        async for piece in pieces:
            yield piece

    return rest()


async def delete_audio(user_id: str, capture_id: str, now: datetime, adapters: Adapters) -> None:
    """Delete the recording alone: the capture and its words stay, and it records when the audio
    went. Deleting a recording that is gone is fine (idempotent), and so is deleting that of a
    capture that is not the caller's, or not there (as DELETE of a capture: nothing is
    deleted, and nothing is told); a text capture has none (409 NO_AUDIO); a voice note still
    being transcribed keeps it until its transcript is stored (409 AUDIO_IN_USE)."""
    try:
        item = await get_capture(user_id, capture_id, adapters.repo)
    except NotFound:
        return
    if item.source != "voice":
        raise Conflict("This capture is text: it has no recording.", "NO_AUDIO")
    if item.awaits_audio:
        raise Conflict(
            "This voice note is still being transcribed; delete its recording once it is done.",
            "AUDIO_IN_USE",
        )
    await forget_audio(item, now, adapters)


async def forget_audio(
    item: InboxItem, now: datetime, adapters: Adapters, *, name: str | None = None
) -> InboxItem:
    """Record on the item that its recording is gone, then delete the blob (`name`: the blob,
    when the item may have forgotten it already), where the item says it is."""
    name = name or item.audio_blob
    where = [item.audio_container]

    async def attempt(current: InboxItem) -> InboxItem:
        if current.is_deleted or current.audio_blob is None:
            return current
        where[0] = current.audio_container  # it may have been kept apart since `item` was read
        return await adapters.repo.save(current.audio_deleted(now))

    try:
        saved = await on_latest(item, adapters.repo, attempt, gone=_Gone, busy=_busy)
    except _Gone:
        saved = item  # deleted meanwhile: its DELETE removes the recording too
    if name is not None:
        await adapters.voice.delete(name, where[0])
    return saved


def _busy() -> Conflict:
    return Conflict("This capture keeps changing. Please try again.", "CONFLICT")


async def request_transcription(
    user_id: str, capture_id: str, now: datetime, adapters: Adapters
) -> InboxItem:
    """Ask for the kept recording to be transcribed again: recorded on the capture, and a job
    queued. Asked again while one is pending, the same job is sent again (the worker does it
    once). 404 as for any capture; 409 NO_AUDIO (text), AUDIO_DELETED, NOT_TRANSCRIBED (the
    first transcription is not done: it is on its way)."""
    item = await get_capture(user_id, capture_id, adapters.repo)
    if item.source != "voice":
        raise Conflict("This capture is text: it has no recording.", "NO_AUDIO")
    if item.audio_blob is None:
        raise Conflict("This capture's recording was deleted.", "AUDIO_DELETED")
    if item.awaits_audio or item.text is None:
        raise Conflict("This voice note is still being transcribed.", "NOT_TRANSCRIBED")
    if not await adapters.voice.exists(item.audio_blob, item.audio_container):
        await forget_audio(item, now, adapters)  # its retention ran out meanwhile
        raise Conflict("This capture's recording was deleted.", "AUDIO_DELETED")

    async def attempt(current: InboxItem) -> InboxItem:
        if current.is_deleted:
            raise not_found()
        if current.transcription_pending:
            return current
        return await adapters.repo.save(current.transcription_requested(now))

    saved = await on_latest(item, adapters.repo, attempt, gone=not_found, busy=_busy)
    assert saved.transcription_requested_at is not None
    job = TranscribeJob(
        capture_id=saved.id, user_id=user_id, requested_at=saved.transcription_requested_at
    )
    await adapters.queues.enqueue_transcribe(job)
    return saved


async def handle_transcribe_job(
    job: TranscribeJob, adapters: Adapters, *, max_seconds: float, now: datetime
) -> InboxItem | None:
    """Transcribe the kept recording again and put the new transcript in place of the old one.
    Idempotent: a capture transcribed at or after the request is left as it is. Its bucket, who
    chose it and the user's edits stay; the filed item converges to the new words. A pick or
    edit saved meanwhile is kept: the new words are laid on whatever version is latest.
    TranscriberUnavailable and storage errors propagate (the host retries the job)."""
    tracing.annotate(capture_id=job.capture_id, user_id=job.user_id)
    repo = adapters.repo
    item = await repo.get(job.user_id, job.capture_id)
    if item is None or item.is_deleted or not _wanted(item, job):
        log.info("transcribe job for capture %s: done already, or gone", job.capture_id)
        return None
    if item.audio_blob is None:
        log.info("transcribe job for capture %s: its recording was deleted", job.capture_id)
        return None
    audio = await adapters.voice.read_all(item.audio_blob, item.audio_container)
    if audio is None:
        return await forget_audio(item, now, adapters)
    filename = item.audio_blob.rsplit("/", 1)[-1]
    try:
        with tracing.span("transcribe"):
            transcript = await adapters.transcriber.transcribe(
                audio, filename, max_seconds=max_seconds
            )
        text, segments = transcript.text.strip(), transcript.segments
    except (AudioTooLong, AudioUndecodable) as exc:
        # It was transcribed once, so the words it has stay; the request is done.
        log.warning("capture %s: transcribing again failed: %s", item.id, exc)
        text, segments = "", []
    # A process dying between the save and the buckets leaves this check to converge them.
    check = ClassifyJob(capture_id=item.id, user_id=item.user_id)
    await adapters.outbox.send_check(check, adapters.policy.recovery_delay_s)

    async def attempt(current: InboxItem) -> InboxItem | None:
        if current.is_deleted or not _wanted(current, job) or current.text is None:
            return None
        return await repo.save(current.retranscribed(text, segments, now))

    try:
        saved = await on_latest(item, repo, attempt, gone=_Gone, busy=_Gone)
    except _Gone:
        return None
    if saved is not None:
        tracing.log_capture_text(log, "transcript again", saved.id, saved.text or "")
        saved = await converge(saved.user_id, saved.id, repo, known=saved) or saved
    return saved


class _Gone(Exception):
    pass


def _wanted(item: InboxItem, job: TranscribeJob) -> bool:
    return item.transcribed_at is None or item.transcribed_at < job.requested_at


async def expire_audio(
    now: datetime, adapters: Adapters, preferences: PreferencesStore
) -> tuple[int, int]:
    """The retention rule, applied to every recording (kept apart, or in the uploads from
    before they were): one past its owner's
    retention (or whose owner keeps none) is deleted and its capture says so; one whose
    `retention` tag is not its owner's retention class is tagged anew, so that storage's
    lifecycle policy (infra/storage.bicep) deletes by the owner's current choice. A blob that
    no capture names (its capture deleted, or its audio forgotten by a process that died before
    deleting it) goes once past its owner's retention; an upload whose capture names its kept
    copy (a move cut short before the upload's delete) goes at once. Returns (deleted, tagged)."""
    prefs: dict[str, Preferences] = {}
    deleted = tagged = 0
    async for stored in adapters.voice.every():
        path = parse_blob_name(stored.name)
        if path is None:
            continue  # not a voice note's name: left for an operator
        owner = prefs.get(path.user_id)
        if owner is None:
            owner = await preferences.get(path.user_id) or Preferences.default(path.user_id)
            prefs[path.user_id] = owner
        if stored.container is None and await _moved(
            stored, path.user_id, path.capture_id, adapters
        ):
            deleted += 1
        elif owner.audio_expired(stored.created_at, now):
            if await _expire_one(stored, path.user_id, path.capture_id, now, adapters):
                deleted += 1
        elif stored.retention != owner.audio_retention_tag:
            await adapters.voice.tag_retention(
                stored.name, owner.audio_retention_tag, stored.container
            )
            tagged += 1
    return deleted, tagged


async def _expire_one(
    stored: StoredAudio, user_id: str, capture_id: str, now: datetime, adapters: Adapters
) -> bool:
    item = await adapters.repo.get(user_id, capture_id)
    if item is not None and _names(item, stored):
        if item.awaits_audio:
            return False  # its transcription is under way: the next run takes it
        await forget_audio(item, now, adapters)
    else:
        await adapters.voice.delete(stored.name, stored.container)
    return True


def _names(item: InboxItem, stored: StoredAudio) -> bool:
    return item.audio_blob == stored.name and item.audio_container == stored.container


async def _moved(stored: StoredAudio, user_id: str, capture_id: str, adapters: Adapters) -> bool:
    """Delete an upload whose capture names the kept copy of it (a move cut short)."""
    item = await adapters.repo.get(user_id, capture_id)
    if item is None or item.audio_blob != stored.name or item.audio_container is None:
        return False
    await adapters.voice.delete(stored.name)
    return True


class Heard(Document):
    """POST /api/captures/{id}/spoken-answer: what the recording says, to send as the answer."""

    text: str = Field(description="The words heard (empty: nothing was said).")
    segments: list[TranscriptSegment] = Field(description="The words with their times.")


async def hear_answer(
    user_id: str,
    capture_id: str,
    audio: bytes,
    filename: str,
    max_seconds: float,
    adapters: Adapters,
) -> Heard:
    """A spoken answer to the capture's open question, in words: the client sends them as its
    answer (a resume, or a follow-up), as if typed, so a silent or unclear voice note can be
    answered by recording again. Nothing is stored. 409 NOT_AWAITING_CLARIFICATION when the
    capture asks nothing; 422 AUDIO_UNDECODABLE, AUDIO_TOO_LONG, EMPTY_AUDIO."""
    item = await get_capture(user_id, capture_id, adapters.repo)
    if item.open_interrupt is None:
        raise Conflict(
            "This capture is not waiting for an answer.",
            "NOT_AWAITING_CLARIFICATION",
            captureStatus=item.status.value,
        )
    if not audio:
        raise Invalid("The recording is empty.", "EMPTY_AUDIO")
    try:
        with tracing.span("transcribe answer"):
            heard = await adapters.transcriber.transcribe(audio, filename, max_seconds=max_seconds)
    except AudioTooLong as exc:
        raise Invalid(f"An answer plays at most {max_seconds:g} s.", "AUDIO_TOO_LONG") from exc
    except AudioUndecodable as exc:
        raise Invalid("The recording could not be decoded.", "AUDIO_UNDECODABLE") from exc
    return Heard(text=heard.text.strip(), segments=heard.segments)
