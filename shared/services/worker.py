"""The classify worker's use cases: hand a stored capture to it, send it the delayed check that
every capture gets, and take a job from `captures-classify`: classified and filed once, or, for
a voice note whose audio never came, removed once its upload URL has expired."""

from __future__ import annotations

import logging
from datetime import timedelta

from shared import tracing
from shared.domain.capture import InboxItem, Status
from shared.domain.documents import utcnow
from shared.domain.errors import CaptureDeleted, StaleItem
from shared.domain.messages import ClassifyJob
from shared.domain.policy import Policy
from shared.domain.ports import Adapters
from shared.services.filing import classify_and_file, record
from shared.services.inbox import finish_delete
from shared.services.placement import converge

log = logging.getLogger(__name__)


async def queue_for_worker(item: InboxItem, adapters: Adapters) -> InboxItem:
    """Queue a stored capture's classification, then record it as queued. Queue first: a
    failure between the two leaves it `received`, and queueing again is harmless (the
    worker files once)."""
    job = ClassifyJob(capture_id=item.id, user_id=item.user_id, handed_over=True)
    await adapters.queues.enqueue_classify(job)
    if item.status is Status.QUEUED or not item.can("queued"):
        return item
    return await record(item, InboxItem.queued, adapters.repo)


def upload_deadline(policy: Policy) -> timedelta:
    """How long after it was created a voice note may still receive its audio."""
    return timedelta(seconds=policy.upload_url_ttl_s + policy.upload_grace_s)


async def handle_classify_job(
    job: ClassifyJob, adapters: Adapters, *, first_delivery: bool = False
) -> InboxItem | None:
    """Idempotent: a settled capture is left as it is, but for its buckets, which converge to
    it (a writer that died after its save left them for this check). ClassifierUnavailable
    propagates so that the host retries the message and, after maxDequeueCount, poisons it.
    `first_delivery`: the host has not handed this message out before."""
    tracing.annotate(capture_id=job.capture_id, user_id=job.user_id)
    repo = adapters.repo
    item = await repo.get(job.user_id, job.capture_id)
    if item is None or item.is_deleted:
        log.info("classify job for capture %s: deleted, or being deleted", job.capture_id)
        if item is None:
            await converge(job.user_id, job.capture_id, repo, known=None)
        else:
            await finish_delete(item, adapters)  # a removal cut short
        return None
    if item.status is Status.AWAITING_UPLOAD:
        return await _expire_upload(item, job, adapters)
    if item.may_be_classified():
        try:
            filed = await classify_and_file(
                item, repo, adapters.classifier, adapters.outbox, embedder=adapters.embedder
            )
        except CaptureDeleted:
            log.info("classify job for capture %s: deleted meanwhile", job.capture_id)
            return None
        if first_delivery and job.handed_over:
            # No earlier attempt of this job wrote a filed item that could be left elsewhere,
            # and any other writer's has that writer's own check to converge it; a move
            # converges in file_capture (issue 32: 5 storage calls a job fewer).
            return filed
        item = filed
    elif not item.is_settled:
        return item  # the blob trigger's retries own it, or it has nothing to classify
    elif job.tells_outcome or (job.handed_over and not first_delivery):
        # Its run may have died holding the outcome, or an earlier delivery of this job
        # between its save and its publish.
        adapters.outbox.tell_unseen(item)
    # A process that died between its filed item and its save may have left a copy elsewhere.
    return await converge(item.user_id, item.id, repo, known=item)


async def _expire_upload(item: InboxItem, job: ClassifyJob, adapters: Adapters) -> InboxItem | None:
    due = item.created_at + upload_deadline(adapters.policy)
    if utcnow() < due:  # early (settings changed since it was sent): look again then
        await adapters.queues.enqueue_classify(job, delay_s=(due - utcnow()).total_seconds())
        return item
    if item.audio_blob and await adapters.voice.exists(item.audio_blob, item.audio_container):
        return item  # it came after all: the blob trigger takes it
    try:
        # ETag-guarded: if the audio arrived since the read, the blob trigger's change stands.
        tombstone = await adapters.repo.save(item.tombstoned())
    except StaleItem:
        return await adapters.repo.get(item.user_id, item.id)
    log.info("voice note %s: no audio before its upload URL expired; removed", item.id)
    # No check of its own: if this is cut short, the host delivers this job again.
    await finish_delete(tombstone, adapters)
    return None
