"""Classify and file a stored capture: the one place the thresholds become documents.

Idempotent by construction: ids come from the capture, a settled capture is returned as
it is, and a move writes the new filed item, then the inbox item, then deletes the old.
"""

from __future__ import annotations

import logging
from typing import Literal

from shared import tracing
from shared.domain.classification import Bucket, Classification
from shared.domain.details import details_for
from shared.domain.errors import CaptureDeleted, StaleItem
from shared.domain.models import (
    FILED_MODELS,
    STATUS_OF_OUTCOME,
    InboxItem,
    OutcomeMessage,
    Status,
    utcnow,
)
from shared.domain.outcomes import FILED_OUTCOMES, decide, question_for
from shared.domain.ports import CaptureQueues, CaptureRepository, Classifier
from shared.services.background import spawn

log = logging.getLogger(__name__)


async def classify_and_file(
    item: InboxItem,
    repo: CaptureRepository,
    classifier: Classifier,
    queues: CaptureQueues,
) -> InboxItem:
    """One model call, then file. Raises ClassifierUnavailable when the model cannot answer."""
    if item.is_deleted:
        raise CaptureDeleted(item.id)
    if item.status.is_settled:
        return item  # a retry or a duplicate delivery: it was filed once already
    text = item.text_to_classify()
    if not text:
        raise ValueError(f"capture {item.id} has no text to classify")
    with tracing.span("classify"):
        classification = await classifier.classify(text)
    return await file_capture(item, classification, repo, queues)


async def file_capture(
    item: InboxItem,
    classification: Classification,
    repo: CaptureRepository,
    queues: CaptureQueues,
    *,
    chosen_by: Literal["classifier", "user"] = "classifier",
) -> InboxItem:
    """Write the filed item, then the inbox item (ETag-guarded), then remove filed items the
    capture no longer has. The classifier yields to whoever settled the capture first; the
    user's choice does not (StaleItem propagates, and the caller reads again and retries)."""
    with tracing.span("file capture"):
        saved = await _file(item, classification, repo, queues, chosen_by)
        assert saved.outcome is not None
        outcome = saved.outcome.value
        tracing.annotate(capture_id=saved.id, user_id=saved.user_id, outcome=outcome)
    # Ids, outcome and bucket only: the title is the model's summary of what was said.
    log.info("capture %s: %s, bucket %s", saved.id, outcome, saved.filed_bucket or "none")
    return saved


async def _file(
    item: InboxItem,
    classification: Classification,
    repo: CaptureRepository,
    queues: CaptureQueues,
    chosen_by: Literal["classifier", "user"],
) -> InboxItem:
    outcome = decide(classification, rounds=len(item.clarifications))
    bucket = classification.bucket if outcome in FILED_OUTCOMES else None
    if bucket is not None:
        await repo.put_filed(filed_item_for(item, bucket, classification))
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
        current = await repo.get(item.user_id, item.id)
        gone = current is None or current.is_deleted
        # A filed item only we wrote goes, so that exactly one remains (or none, if deleted).
        if bucket is not None and (gone or bucket != current.filed_bucket):
            await repo.delete_filed(item.user_id, bucket, item.id)
        if gone:
            raise CaptureDeleted(item.id) from None
        if chosen_by == "user" or not current.status.is_settled:
            raise
        # A duplicate delivery or a retried request settled it first: theirs stands.
        return current
    # A move: the old filed item goes last, so a crash before this point loses nothing. The
    # user's choice sweeps every other bucket, so re-running a move interrupted anywhere
    # converges even though the inbox item no longer names the old bucket.
    stale = set(Bucket) if chosen_by == "user" else {item.filed_bucket}
    for old in stale - {bucket, None}:
        await repo.delete_filed(item.user_id, old, item.id)
    # Best effort, and never in the way: the user's stream does not wait for it.
    spawn(_publish(saved, queues))
    return saved


async def mark(item: InboxItem, status: Status, repo: CaptureRepository, **changes) -> InboxItem:
    """Record progress that is not an outcome (transcribing, queued, failed), keeping what is
    settled. If the item changed since it was read, the stored one stands and is returned."""
    if item.is_deleted or item.status.is_settled or (item.status == status and not changes):
        return item
    try:
        return await repo.save(
            item.model_copy(update={**changes, "status": status, "updated_at": utcnow()})
        )
    except StaleItem:
        return await repo.get(item.user_id, item.id) or item


def filed_item_for(item: InboxItem, bucket: Bucket, c: Classification):
    text = item.text_to_classify()
    details = details_for(bucket, text, c.title, utcnow().date())
    return FILED_MODELS[bucket](
        id=item.id,
        user_id=item.user_id,
        inbox_item_id=item.id,
        title=c.title,
        text=text,
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
