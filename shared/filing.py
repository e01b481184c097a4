"""Classify and file a stored capture: the one place the thresholds become documents.

Idempotent by construction: ids come from the capture, a settled capture is returned as
it is, and a move writes the new filed item, then the inbox item, then deletes the old.
"""

from __future__ import annotations

import logging

from .classifier.protocol import Bucket, Classification, Classifier
from .details import details_for
from .models import (
    FILED_MODELS,
    STATUS_OF_OUTCOME,
    InboxItem,
    Outcome,
    OutcomeMessage,
    Status,
    utcnow,
)
from .outcomes import decide, question_for
from .queues import CaptureQueues
from .repository import CaptureRepository, StaleItem

log = logging.getLogger(__name__)


async def classify_and_file(
    item: InboxItem,
    repo: CaptureRepository,
    classifier: Classifier,
    queues: CaptureQueues,
) -> InboxItem:
    """One model call, then file. Raises ClassifierUnavailable when the model cannot answer."""
    if item.status.is_settled:
        return item  # a retry or a duplicate delivery: it was filed once already
    if not item.text:
        raise ValueError(f"capture {item.id} has no text to classify")
    classification = await classifier.classify(item.text)
    return await file_capture(item, classification, repo, queues)


async def file_capture(
    item: InboxItem,
    classification: Classification,
    repo: CaptureRepository,
    queues: CaptureQueues,
    chosen_by: str = "classifier",
) -> InboxItem:
    outcome = decide(classification)
    bucket = classification.bucket if outcome is not Outcome.MISUNDERSTOOD else None
    if bucket is not None:
        await repo.put_filed(_filed_item(item, bucket, classification))
    previous = item.filed_bucket
    updated = item.model_copy(
        update={
            "status": STATUS_OF_OUTCOME[outcome],
            "outcome": outcome,
            "filed_bucket": bucket,
            "chosen_by": chosen_by if bucket else None,
            "confidence": classification.confidence,
            "title": classification.title,
            "question_text": question_for(outcome, classification),
            "error": None,
            "updated_at": utcnow(),
        }
    )
    try:
        saved = await repo.save(updated)
    except StaleItem:
        # Someone else (a duplicate delivery, a retried request) settled it first: theirs
        # stands, and a filed item only we wrote is removed so that one remains.
        current = await repo.get(item.user_id, item.id)
        if current is None or not current.status.is_settled:
            raise
        if bucket is not None and bucket != current.filed_bucket:
            await repo.delete_filed(item.user_id, bucket, item.id)
        return current
    if previous is not None and previous != bucket:
        await repo.delete_filed(item.user_id, previous, item.id)
    await _publish(saved, queues)
    return saved


async def mark(item: InboxItem, status: Status, repo: CaptureRepository, **changes) -> InboxItem:
    """Record progress that is not an outcome (transcribing, queued, failed), keeping what is
    settled. If the item changed since it was read, the stored one stands and is returned."""
    if item.status.is_settled or (item.status == status and not changes):
        return item
    try:
        return await repo.save(
            item.model_copy(update={**changes, "status": status, "updated_at": utcnow()})
        )
    except StaleItem:
        return await repo.get(item.user_id, item.id) or item


def _filed_item(item: InboxItem, bucket: Bucket, c: Classification):
    details = details_for(bucket, item.text or "", c.title, utcnow().date())
    return FILED_MODELS[bucket](
        id=item.id,
        user_id=item.user_id,
        inbox_item_id=item.id,
        title=c.title,
        text=item.text or "",
        confidence=c.confidence,
        **details,
    )


async def _publish(item: InboxItem, queues: CaptureQueues) -> None:
    assert item.outcome is not None
    message = OutcomeMessage(
        capture_id=item.id,
        user_id=item.user_id,
        outcome=item.outcome,
        bucket=item.filed_bucket,
        confidence=item.confidence,
        title=item.title,
        question_text=item.question_text,
    )
    try:
        await queues.publish_outcome(message)
    except Exception:
        # The capture is filed and the client has its answer; push is best effort.
        log.exception("could not publish the outcome of capture %s", item.id)
