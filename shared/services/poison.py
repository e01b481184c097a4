"""Work that ran out of retries: messages on the host's poison queues become failed captures,
visible in the inbox with the reason, instead of captures that look busy forever."""

from __future__ import annotations

import logging

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.domain.audio import parse_blob_name
from shared.domain.capture import InboxItem, Status
from shared.domain.messages import ClassifyJob
from shared.domain.outcomes import FailureCode
from shared.domain.ports import Adapters
from shared.services.filing import fail
from shared.services.worker import queue_for_worker
from shared.settings import CLASSIFY_QUEUE, VOICE_CONTAINER

log = logging.getLogger(__name__)

# The host's names: `<queue>-poison` for a queue trigger, one queue for every blob trigger.
CLASSIFY_POISON_QUEUE = f"{CLASSIFY_QUEUE}-poison"
BLOB_POISON_QUEUE = "webjobs-blobtrigger-poison"


class BlobPoisonMessage(BaseModel):
    """What the host puts on `webjobs-blobtrigger-poison` (its BlobTriggerMessage), shared by
    every blob trigger of the app: {"Type", "FunctionId", "BlobType", "ContainerName",
    "BlobName", "ETag"}."""

    model_config = ConfigDict(extra="ignore")

    type: str = Field(alias="Type")
    function_id: str | None = Field(default=None, alias="FunctionId")
    container_name: str = Field(alias="ContainerName")
    blob_name: str = Field(alias="BlobName")
    etag: str | None = Field(default=None, alias="ETag")


async def fail_poisoned_classify_job(body: bytes, adapters: Adapters) -> InboxItem | None:
    """A `captures-classify` job that failed maxDequeueCount times (the poison message is the
    job as it was sent): its capture fails with CLASSIFY_FAILED. None when it names none."""
    try:
        job = ClassifyJob.model_validate_json(body)
    except ValidationError:
        log.warning("a poisoned classify message is not a job; ignored")
        return None
    item = await adapters.repo.get(job.user_id, job.capture_id)
    return await _fail(item, FailureCode.CLASSIFY_FAILED, adapters)


async def settle_poisoned_voice_note(body: bytes, adapters: Adapters) -> InboxItem | None:
    """A voice note whose blob trigger failed maxDequeueCount times: its capture fails with
    TRANSCRIPTION_FAILED, or, when the transcript was stored and only queueing it failed, is
    queued for the worker now. Blobs of other containers, and blobs no capture waits for,
    are ignored (None)."""
    repo = adapters.repo
    try:
        poisoned = BlobPoisonMessage.model_validate_json(body)
    except ValidationError:
        log.warning("a blob poison message is not the host's BlobTriggerMessage; ignored")
        return None
    if poisoned.type != "BlobTrigger" or poisoned.container_name != VOICE_CONTAINER:
        return None  # another blob trigger's poison: not ours to judge
    path = parse_blob_name(poisoned.blob_name)
    item = await repo.get(path.user_id, path.capture_id) if path else None
    if item is not None and (item.source != "voice" or item.audio_blob != poisoned.blob_name):
        item = None  # a stray blob that happens to share a capture's id
    if item is not None and item.status is Status.RECEIVED:
        # The transcript is stored: the words are there, so file them rather than fail.
        return await queue_for_worker(item, adapters)
    return await _fail(item, FailureCode.TRANSCRIPTION_FAILED, adapters)


async def _fail(item: InboxItem | None, code: FailureCode, adapters: Adapters) -> InboxItem | None:
    if item is None:
        log.warning("poisoned work (%s) matches no capture; ignored", code)
        return None
    if not item.may_fail_with(code):
        # Filed, answered, deleted or failed already: a redelivery, or the work got through
        # after all. A failure overwrites only a capture still waiting for that work.
        return item
    log.warning("capture %s failed: %s", item.id, code)
    # ETag-guarded: if the capture moved on since it was read, the stored one stands.
    return await fail(item, code, adapters.repo, adapters.outbox)
