"""Classify and file a stored capture: the one place a settled capture becomes documents.

Idempotent by construction: ids come from the capture, a settled capture is returned as
it is, and a move writes the new filed item, then the inbox item, then deletes the old.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from shared import tracing
from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.details import details_for
from shared.domain.documents import utcnow
from shared.domain.errors import CaptureDeleted, StaleItem
from shared.domain.filed import FILED_MODELS, FiledItem
from shared.domain.messages import OutcomeMessage
from shared.domain.outcomes import FailureCode
from shared.domain.ports import CaptureQueues, CaptureRepository, Classifier
from shared.services.background import spawn
from shared.settings import get_settings

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
    if item.is_settled:
        return item  # a retry or a duplicate delivery: it was filed once already
    text = item.text_to_classify()
    if not text:
        raise ValueError(f"capture {item.id} has no text to classify")
    with tracing.span("classify"):
        classification = await classifier.classify(text)
    return await file_capture(item, item.classified(classification), repo, queues)


async def file_capture(
    item: InboxItem, settled: InboxItem, repo: CaptureRepository, queues: CaptureQueues
) -> InboxItem:
    """Store `settled` (`item` after `classified` or `picked`): the filed item, then the inbox
    item (ETag-guarded), then remove filed items the capture no longer has. The classifier
    yields to whoever settled the capture first; the user's choice does not (StaleItem
    propagates, and the caller reads again and retries)."""
    with tracing.span("file capture"):
        saved = await _file(item, settled, repo, queues)
        assert saved.outcome is not None
        outcome = saved.outcome.value
        tracing.annotate(capture_id=saved.id, user_id=saved.user_id, outcome=outcome)
    # Ids, outcome and bucket only: the title is the model's summary of what was said.
    log.info("capture %s: %s, bucket %s", saved.id, outcome, saved.filed_bucket or "none")
    return saved


async def _file(
    item: InboxItem, settled: InboxItem, repo: CaptureRepository, queues: CaptureQueues
) -> InboxItem:
    bucket = settled.filed_bucket
    by_user = settled.chosen_by == "user"
    if bucket is not None:
        await repo.put_filed(filed_item_for(settled))
    try:
        saved = await repo.save(settled)
    except StaleItem:
        current = await repo.get(item.user_id, item.id)
        gone = current is None or current.is_deleted
        # A filed item only we wrote goes, so that exactly one remains (or none, if deleted).
        if bucket is not None and (gone or bucket != current.filed_bucket):
            await repo.delete_filed(item.user_id, bucket, item.id)
        if gone:
            raise CaptureDeleted(item.id) from None
        if by_user or not current.is_settled:
            raise
        # A duplicate delivery or a retried request settled it first: theirs stands.
        return current
    # A move: the old filed item goes last, so a crash before this point loses nothing. The
    # user's choice sweeps every other bucket, so re-running a move interrupted anywhere
    # converges even though the inbox item no longer names the old bucket.
    stale = set(Bucket) if by_user else {item.filed_bucket}
    for old in stale - {bucket, None}:
        await repo.delete_filed(item.user_id, old, item.id)
    # Best effort, and never in the way: the user's stream does not wait for it.
    spawn(_publish(saved, queues))
    return saved


async def fail(
    item: InboxItem, code: FailureCode, repo: CaptureRepository, queues: CaptureQueues
) -> InboxItem:
    """Save `item` failed with `code` and publish the failure, as an outcome is published, so
    that a user who left is told. If the item changed since it was read, the stored one stands
    (and nothing is published: whoever changed it tells its own story)."""
    try:
        saved = await repo.save(item.failed(code))
    except StaleItem:
        return await repo.get(item.user_id, item.id) or item
    spawn(_publish(saved, queues))
    return saved


async def record(
    item: InboxItem, change: Callable[[InboxItem], InboxItem], repo: CaptureRepository
) -> InboxItem:
    """Save `change(item)`, a lifecycle transition that is not an outcome (transcribing,
    queued, failed). If the item changed since it was read, the stored one stands and is
    returned."""
    try:
        return await repo.save(change(item))
    except StaleItem:
        return await repo.get(item.user_id, item.id) or item


def filed_item_for(settled: InboxItem) -> FiledItem:
    assert settled.filed_bucket is not None and settled.title is not None
    text = settled.text_to_classify()
    details = details_for(settled.filed_bucket, text, settled.title, utcnow().date())
    # What a model read stands; the rules fill in what it left empty.
    if settled.people:
        details["people"] = settled.people
    if settled.due_date is not None:
        details["due_date"] = settled.due_date
    return FILED_MODELS[settled.filed_bucket](
        id=settled.id,
        user_id=settled.user_id,
        inbox_item_id=settled.id,
        title=settled.title,
        text=text,
        confidence=settled.confidence or 0.0,
        source=settled.source,
        # The capture's own time: a bucket lists what was said newest first, not when filed.
        created_at=settled.created_at,
        **details,
    )


async def _publish(item: InboxItem, queues: CaptureQueues) -> None:
    """Tell `captures-outcomes` about the settled (or failed) version `item`. Its readers see it
    after PUSH_DELAY_S: a client following the capture is sent the outcome meanwhile, and the
    mark of that (outcome_shown_at) lands before the push worker looks."""
    assert item.has_ended
    message = OutcomeMessage(
        capture_id=item.id,
        user_id=item.user_id,
        outcome=item.outcome,
        error=item.error,
        bucket=item.filed_bucket,
        confidence=item.confidence,
        title=item.title,
        question_text=item.question_text,
        settled_at=item.updated_at,
        chosen_by=item.chosen_by,
    )
    try:
        await queues.publish_outcome(message, delay_s=get_settings().push_delay_s)
    except Exception:
        # The capture is filed and the client has its answer; push is best effort.
        log.exception("could not publish the outcome of capture %s", item.id)
