"""What follows a write, one way: the delayed check each write of a capture sends before it
writes, publishing an outcome after it, and marking an outcome shown once a client was sent
it. Each runs beside the write (background.spawn), best effort: none fails or holds up the
write, but for the check, which the write waits for up to CHECK_FIRST_S.

The delayed check is the safety net: when it comes due, the classify worker
(worker.handle_classify_job) finishes whatever the writer's process did not: classifying,
filing, converging the buckets, removing a deleted capture."""

from __future__ import annotations

import asyncio
import logging

from shared.domain.capture import InboxItem
from shared.domain.messages import ClassifyJob, OutcomeMessage
from shared.domain.ports import Adapters, CaptureQueues, CaptureRepository
from shared.services.background import spawn
from shared.services.shown import mark_shown
from shared.settings import get_settings

log = logging.getLogger(__name__)

# How long a write waits for its check to be sent: normally the job is out before the write,
# so no moment exists in which a process could die leaving work that nothing will come back
# to; a slow queue holds the write up no longer.
CHECK_FIRST_S = 1.0


async def schedule_check(job: ClassifyJob, adapters: Adapters, delay_s: float) -> None:
    """Send the delayed job that settles the capture if its own process never does. Call it
    before the write; best effort, and never more than CHECK_FIRST_S in the way."""
    await asyncio.wait({spawn(_send_check(job, adapters, delay_s))}, timeout=CHECK_FIRST_S)


async def _send_check(job: ClassifyJob, adapters: Adapters, delay_s: float) -> None:
    try:
        await adapters.queues.enqueue_classify(job, delay_s=delay_s)
    except Exception:
        log.warning("could not schedule the check of capture %s", job.capture_id, exc_info=True)


def publish_outcome(item: InboxItem, queues: CaptureQueues) -> None:
    """Tell `captures-outcomes` about the settled (or failed) version `item`, off the writer's
    path: the user's stream does not wait for it."""
    spawn(_publish(item, queues))


async def _publish(item: InboxItem, queues: CaptureQueues) -> None:
    """Its readers see it after PUSH_DELAY_S: a client following the capture is sent the
    outcome meanwhile, and the mark of that (outcome_shown_at) lands before the push worker
    looks."""
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
        # The one setting a service still reads itself: filing's callers (42 of them, tests
        # included) pass no policy down to here.
        await queues.publish_outcome(message, delay_s=get_settings().push_delay_s)
    except Exception:
        # The capture is filed and the client has its answer; push is best effort.
        log.exception("could not publish the outcome of capture %s", item.id)


def shown(item: InboxItem, repo: CaptureRepository) -> None:
    """Mark `item`'s outcome shown (shown.mark_shown), off the stream's path."""
    spawn(mark_shown(item, repo))
