"""Transcribe an uploaded voice note (the blob trigger's use case): check it belongs to a
capture waiting for it, store the transcript (its text and timed segments) as the capture's
words, queue classification, then keep the recording as its owner's preferences say, or let
it go. A kept recording moves out of the upload container (which then holds only notes in
flight): copied into the recordings' container with its retention tag, the item saved naming
the copy, and only then the upload deleted.

Idempotent and crash-safe: a second event for the same blob finds the transcript stored and
only makes sure the job was queued and the move (or the letting go) finished: an item that
names its copy already has its upload deleted, nothing more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from shared import tracing
from shared.domain.audio import parse_blob_name
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Classification
from shared.domain.documents import utcnow
from shared.domain.errors import (
    AudioGone,
    AudioTooLong,
    AudioUndecodable,
    CaptureDeleted,
    StorageUnavailable,
)
from shared.domain.outcomes import SAY_AGAIN_QUESTION, FailureCode
from shared.domain.ports import Adapters, PreferencesStore
from shared.domain.preferences import Preferences
from shared.services.audio import forget_audio
from shared.services.filing import fail, file_capture, record
from shared.services.retry_stale import on_latest
from shared.services.worker import queue_for_worker

log = logging.getLogger(__name__)


async def transcribe_voice_note(
    name: str,
    size: int | None,
    read: Callable[[], bytes],
    adapters: Adapters,
    preferences: PreferencesStore,
    *,
    max_bytes: int,
    max_seconds: float,
) -> InboxItem | None:
    """`name` is the blob's name inside the voice-notes container. TranscriberUnavailable and
    storage errors propagate, so the host retries the blob and, in the end, poisons it."""
    path = parse_blob_name(name)
    if path:
        tracing.annotate(capture_id=path.capture_id, user_id=path.user_id)
    item = await adapters.repo.get(path.user_id, path.capture_id) if path else None
    # Its recording let go already (not kept): a repeated event still finds its capture.
    let_go = item is not None and item.audio_blob is None and item.audio_deleted_at is not None
    if item is None or item.source != "voice" or (item.audio_blob != name and not let_go):
        # Not a capture of that user waiting for this blob: nothing to file, and no one's
        # capture is touched. The blob is left for an operator to look at.
        log.warning("voice note %s matches no capture; ignored", name)
        return None

    if item.awaits_audio:
        if size is not None and size > max_bytes:
            item = await _fail(item, FailureCode.AUDIO_TOO_LARGE, adapters)
        else:
            try:
                item = await _transcribe(item, read(), adapters, max_seconds)
            except CaptureDeleted:
                log.info("voice note %s: its capture was deleted meanwhile", name)
                return None
    if item.status is Status.RECEIVED:
        # Stored but not yet queued (now, or by an attempt that stopped halfway).
        item = await queue_for_worker(item, adapters)
    # After the job is queued: keeping the recording adds nothing to the note's way to its
    # outcome (the worker classifies meanwhile).
    prefs = await preferences.get(item.user_id) or Preferences.default(item.user_id)
    if not prefs.keep_audio and item.audio_container is None:
        return await forget_audio(item, utcnow(), adapters, name=name)  # the upload goes
    if not prefs.keep_audio:  # kept apart, then its owner chose to keep none: both go
        item = await forget_audio(item, utcnow(), adapters)
    elif item.audio_blob is not None and item.audio_container is None:
        item = await _keep(item, name, prefs.audio_retention_tag, adapters)
    # The upload, once the item names its kept copy (or none): a redelivery finds it gone.
    await adapters.voice.delete(name)
    return item


async def _keep(item: InboxItem, name: str, retention: str, adapters: Adapters) -> InboxItem:
    """Copy the upload to where recordings are kept and save the item naming the copy. The
    copy goes again if the item went (deleted) or let its recording go meanwhile."""
    try:
        container = await adapters.voice.keep(name, retention)
    except AudioGone:
        # Another delivery of the same event moved it meanwhile (the item now names its copy),
        # or the capture or its audio was deleted: only then is there nothing left to keep.
        latest = await adapters.repo.get(item.user_id, item.id)
        if latest is not None and latest.audio_blob == name and latest.audio_container:
            return latest
        return await forget_audio(item, utcnow(), adapters, name=name)

    async def attempt(current: InboxItem) -> InboxItem | None:
        if current.is_deleted or current.audio_blob != name:
            return None
        if current.audio_container == container:
            return current
        return await adapters.repo.save(current.audio_kept_in(container))

    try:
        saved = await on_latest(item, adapters.repo, attempt, gone=_Gone, busy=_Busy)
    except _Gone:
        saved = None
    if saved is None:
        await adapters.voice.delete(name, container)
        return item
    return saved


class _Gone(Exception):
    pass


class _Busy(StorageUnavailable):
    """The item kept changing: the host retries the blob (the move converges then)."""


async def _transcribe(
    item: InboxItem, audio: bytes, adapters: Adapters, max_seconds: float
) -> InboxItem:
    if item.status is Status.AWAITING_UPLOAD:
        item = await record(item, InboxItem.start_transcribing, adapters.repo)
    if item.status is not Status.TRANSCRIBING:
        return item  # another delivery got there first
    filename = (item.audio_blob or "").rsplit("/", 1)[-1]
    try:
        with tracing.span("transcribe"):
            # The transcriber holds the length limit while it decodes: no container is trusted
            # to tell it (a WebM tells none), and nothing longer is decoded or sent on.
            transcript = await adapters.transcriber.transcribe(
                audio, filename, max_seconds=max_seconds
            )
    except AudioTooLong as exc:
        log.warning("capture %s: %s", item.id, exc)
        return await _fail(item, FailureCode.AUDIO_TOO_LONG, adapters)
    except AudioUndecodable as exc:
        log.warning("capture %s: %s", item.id, exc)
        return await _fail(item, FailureCode.AUDIO_UNDECODABLE, adapters)
    text = transcript.text.strip()
    segments = transcript.segments
    item = await record(item, lambda i: i.transcribed(text, segments), adapters.repo)
    tracing.log_capture_text(log, "transcript", item.id, item.text or "")
    if item.status is Status.RECEIVED and not item.text:
        # Nothing was said: ask again, without asking a model about an empty string.
        silent = Classification(
            bucket=None, confidence=0.0, title="Empty voice note", question=SAY_AGAIN_QUESTION
        )
        return await file_capture(item, item.classified(silent), adapters.repo, adapters.outbox)
    return item


async def _fail(item: InboxItem, code: FailureCode, adapters: Adapters) -> InboxItem:
    return await fail(item, code, adapters.repo, adapters.outbox)
