"""The classify worker's use cases: hand a stored capture to it, and take a job from
`captures-classify`, classified and filed once."""

from __future__ import annotations

import logging

from . import telemetry
from .filing import classify_and_file, mark
from .models import ClassifyJob, InboxItem, Status
from .wiring import Adapters

log = logging.getLogger(__name__)


async def queue_for_worker(item: InboxItem, adapters: Adapters) -> InboxItem:
    """Queue a stored capture's classification, then record it as queued. Queue first: a
    failure between the two leaves it `received`, and queueing again is harmless (the
    worker files once)."""
    await adapters.queues.enqueue_classify(ClassifyJob(capture_id=item.id, user_id=item.user_id))
    return await mark(item, Status.QUEUED, adapters.repo)


async def handle_classify_job(job: ClassifyJob, adapters: Adapters) -> InboxItem | None:
    """Idempotent: a settled capture is left as it is. ClassifierUnavailable propagates so
    that the host retries the message and, after maxDequeueCount, poisons it."""
    telemetry.annotate(capture_id=job.capture_id, user_id=job.user_id)
    item = await adapters.repo.get(job.user_id, job.capture_id)
    if item is None:
        log.warning("classify job for capture %s: no such capture (deleted?)", job.capture_id)
        return None
    return await classify_and_file(item, adapters.repo, adapters.classifier, adapters.queues)
