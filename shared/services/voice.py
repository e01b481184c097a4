"""Start a voice capture: the inbox item first (awaiting its audio), then either an upload URL
for the phone or the upload itself, streamed to the voice-notes container."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

from pydantic import BaseModel

from shared import tracing
from shared.domain.audio import AudioType, blob_name
from shared.domain.capture import InboxItem, Status
from shared.domain.documents import Document, utcnow
from shared.domain.errors import Conflict, Invalid, TooLarge, VoiceNoteTooLarge
from shared.domain.ids import voice_capture_id
from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters
from shared.services.worker import upload_deadline

log = logging.getLogger(__name__)


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


def events_url(capture_id: str) -> str:
    # Relative on purpose: behind the Functions front end the worker cannot know the public host.
    return f"/api/captures/{capture_id}/events"


async def start_voice_note(new: NewVoiceCapture, ttl: timedelta, adapters: Adapters) -> VoiceUpload:
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
            **{f"x-ms-meta-{k}": v for k, v in tracing.trace_carrier().items()},
        },
    )


async def upload_voice_note(
    new: NewVoiceCapture, chunks: AsyncIterator[bytes], limit: int, adapters: Adapters
) -> InboxItem:
    """Store the capture, then stream the file into its blob; the blob trigger takes it on.

    An upload that fails (too large, cut off, storage down) removes the capture again: it was
    never accepted, and the client gets an error rather than a capture that waits forever."""
    # An empty file is refused before anything is stored (the SDK cannot upload zero chunks).
    first = await anext(chunks, None)
    if first is None:
        raise Invalid("The voice note is empty.", "EMPTY_AUDIO")
    item = await _store(new, adapters)
    assert item.audio_blob is not None
    if item.status is not Status.AWAITING_UPLOAD:
        return item  # a retried request whose first attempt got through
    try:
        all_chunks = _prepend(first, chunks)
        await adapters.voice.upload(item.audio_blob, all_chunks, new.audio.content_type, limit)
    except (Exception, asyncio.CancelledError) as exc:  # the client may hang up mid-upload
        try:
            await adapters.repo.remove(item.user_id, item.id)
        except Exception:
            log.exception("could not remove capture %s after a failed upload", item.id)
        if isinstance(exc, VoiceNoteTooLarge):
            raise TooLarge(f"Voice notes are limited to {limit} bytes.", "AUDIO_TOO_LARGE") from exc
        raise
    return item


async def _prepend(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk


async def _store(new: NewVoiceCapture, adapters: Adapters) -> InboxItem:
    capture_id = voice_capture_id(new.user_id, new.idempotency_key)
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
    tracing.annotate(capture_id=capture_id, user_id=new.user_id)
    # Sent with the store: once the upload URL has expired, the worker removes the capture
    # if its audio never came (or files it, if a process died after transcribing it).
    job = ClassifyJob(capture_id=capture_id, user_id=new.user_id)
    await adapters.outbox.send_check(job, upload_deadline(adapters.policy).total_seconds())
    with tracing.span("store capture"):
        stored, _created = await adapters.repo.add(item)
    if stored.is_deleted:
        raise Conflict("This capture is being deleted.", "CAPTURE_DELETED")
    if stored.audio_content_type != item.audio_content_type or stored.thread_id != item.thread_id:
        raise Conflict(
            "This Idempotency-Key was already used for a different voice note.",
            "IDEMPOTENCY_KEY_REUSED",
        )
    return stored
