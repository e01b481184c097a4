"""Start a voice capture: the inbox item first (awaiting its audio), then either an upload URL
for the phone or the upload itself, streamed to the voice-notes container."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from shared import telemetry
from shared.adapters.voice_blobs import VoiceNoteTooLarge
from shared.bootstrap import Adapters
from shared.domain.audio import ACCEPTED_TYPES, AudioType, audio_type, blob_name
from shared.domain.models import ClassifyJob, Document, InboxItem, RequestBody, Status, utcnow
from shared.http.input import parse_json
from shared.http.multipart import FilePart
from shared.http.problems import Problem
from shared.services.worker import schedule_check, upload_deadline

log = logging.getLogger(__name__)

_VOICE_NAMESPACE = uuid.UUID("0b3f9a5e-2f1d-4a8c-b6d7-54e1c9a0f3b2")


class VoiceNoteRequest(RequestBody):
    """The body of POST /api/voice-notes."""

    content_type: str = Field(min_length=1, max_length=100)
    thread_id: str | None = Field(default=None, max_length=200)


class VoiceUpload(Document):
    """The answer to POST /api/voice-notes."""

    capture_id: str
    upload_url: str
    expires_at: datetime
    events_url: str
    # What the PUT must carry: Blob Storage needs the blob type; the type names the audio.
    upload_headers: dict[str, str]


class NewVoiceCapture(BaseModel):
    user_id: str
    audio: AudioType
    thread_id: str | None = None
    idempotency_key: str | None = None


def unsupported_type(declared: str | None) -> Problem:
    return Problem(
        415,
        f"Voice notes must be audio ({', '.join(ACCEPTED_TYPES)}); got {declared or 'none'}.",
        code="UNSUPPORTED_AUDIO_TYPE",
    )


def parse_voice_note_request(
    body: bytes, content_type: str | None, user_id: str, idempotency_key: str | None
) -> NewVoiceCapture:
    """The body of POST /api/voice-notes, or a Problem saying what is wrong with it."""
    request = parse_json(body, content_type, VoiceNoteRequest, "{contentType, threadId?}")
    audio = audio_type(request.content_type)
    if audio is None:
        raise unsupported_type(request.content_type)
    return NewVoiceCapture(
        user_id=user_id,
        audio=audio,
        thread_id=request.thread_id,
        idempotency_key=idempotency_key,
    )


def new_voice_capture_for_file(
    part: FilePart, user_id: str, idempotency_key: str | None
) -> NewVoiceCapture:
    """A multipart upload's file part, if it is audio we take (its type, else its name)."""
    audio = audio_type(part.content_type, part.filename)
    if audio is None:
        raise unsupported_type(part.content_type)
    return NewVoiceCapture(user_id=user_id, audio=audio, idempotency_key=idempotency_key)


def events_url(capture_id: str) -> str:
    # Relative on purpose: behind the Functions front end the worker cannot know the public host.
    return f"/api/captures/{capture_id}/events"


async def start_voice_note(new: NewVoiceCapture, adapters: Adapters, ttl: timedelta) -> VoiceUpload:
    """Store the capture, then sign an upload URL for exactly its blob."""
    item = await _store(new, adapters)
    assert item.audio_blob is not None
    expires_at = utcnow() + ttl
    return VoiceUpload(
        capture_id=item.id,
        upload_url=await adapters.voice.upload_url(item.audio_blob, expires_at),
        expires_at=expires_at,
        events_url=events_url(item.id),
        upload_headers={
            "x-ms-blob-type": "BlockBlob",
            "Content-Type": item.audio_content_type or new.audio.content_type,
            # The blob trigger continues this trace from the blob's metadata.
            **{f"x-ms-meta-{k}": v for k, v in telemetry.trace_carrier().items()},
        },
    )


async def upload_voice_note(
    new: NewVoiceCapture, part: FilePart, adapters: Adapters, limit: int
) -> InboxItem:
    """Store the capture, then stream the file into its blob; the blob trigger takes it on.

    An upload that fails (too large, cut off, storage down) removes the capture again: it was
    never accepted, and the client gets an error rather than a capture that waits forever."""
    # An empty file is refused before anything is stored (the SDK cannot upload zero chunks).
    first = await anext(part.chunks, None)
    if first is None:
        raise Problem(422, "The voice note is empty.", code="EMPTY_AUDIO")
    item = await _store(new, adapters)
    assert item.audio_blob is not None
    if item.status is not Status.AWAITING_UPLOAD:
        return item  # a retried request whose first attempt got through
    try:
        chunks = _prepend(first, part.chunks)
        await adapters.voice.upload(item.audio_blob, chunks, new.audio.content_type, limit)
    except (Exception, asyncio.CancelledError) as exc:  # the client may hang up mid-upload
        try:
            await adapters.repo.remove(item.user_id, item.id)
        except Exception:
            log.exception("could not remove capture %s after a failed upload", item.id)
        if isinstance(exc, VoiceNoteTooLarge):
            raise Problem(413, f"Voice notes are limited to {limit} bytes.") from exc
        raise
    return item


async def _prepend(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk


async def _store(new: NewVoiceCapture, adapters: Adapters) -> InboxItem:
    key = new.idempotency_key or ""
    # With an Idempotency-Key a retried request lands on the same capture; without, a new one.
    named = uuid.uuid5(_VOICE_NAMESPACE, f"voice\n{new.user_id}\n{key}") if key else None
    capture_id = str(named or uuid.uuid4())
    item = InboxItem(
        id=capture_id,
        user_id=new.user_id,
        source="voice",
        thread_id=new.thread_id or capture_id,
        run_id=capture_id,
        status=Status.AWAITING_UPLOAD,
        audio_blob=blob_name(new.user_id, capture_id, new.audio.extension),
        audio_content_type=new.audio.content_type,
    )
    telemetry.annotate(capture_id=capture_id, user_id=new.user_id)
    # Sent with the store: once the upload URL has expired, the worker removes the capture
    # if its audio never came (or files it, if a process died after transcribing it).
    job = ClassifyJob(capture_id=capture_id, user_id=new.user_id)
    await schedule_check(job, adapters, upload_deadline().total_seconds())
    with telemetry.span("store capture"):
        stored, _created = await adapters.repo.add(item)
    if stored.is_deleted:
        raise Problem(409, "This capture is being deleted.", code="CAPTURE_DELETED")
    if stored.audio_content_type != item.audio_content_type or stored.thread_id != item.thread_id:
        raise Problem(
            409,
            "This Idempotency-Key was already used for a different voice note.",
            code="IDEMPOTENCY_KEY_REUSED",
        )
    return stored
