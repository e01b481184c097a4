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
from datetime import datetime

from shared.domain.capture import InboxItem
from shared.domain.messages import ClassifyJob, OutcomeMessage, QueueReceipt
from shared.domain.ports import Adapters, CaptureQueues, CaptureRepository
from shared.services.background import spawn
from shared.services.shown import mark_shown

log = logging.getLogger(__name__)

# How long a write waits for its check to be sent: normally the job is out before the write,
# so no moment exists in which a process could die leaving work that nothing will come back
# to; a slow queue holds the write up no longer.
CHECK_FIRST_S = 1.0


async def schedule_check(
    job: ClassifyJob, adapters: Adapters, delay_s: float
) -> asyncio.Task[QueueReceipt | None]:
    """Send the delayed job that settles the capture if its own process never does. Call it
    before the write; best effort, and never more than CHECK_FIRST_S in the way. The sending
    task, whose result is the job's receipt (for `cancel_check`)."""
    sending = spawn(_send_check(job, adapters, delay_s))
    await asyncio.wait({sending}, timeout=CHECK_FIRST_S)
    return sending


async def _send_check(job: ClassifyJob, adapters: Adapters, delay_s: float) -> QueueReceipt | None:
    try:
        return await adapters.queues.enqueue_classify(job, delay_s=delay_s)
    except Exception:
        log.warning("could not schedule the check of capture %s", job.capture_id, exc_info=True)
        return None


def cancel_check(sending: asyncio.Task[QueueReceipt | None], adapters: Adapters) -> None:
    """The capture settled in its own process: delete its check before it comes due, off the
    stream's path (issue 32: a capture settled live costs no second execution). Best effort: a
    crash before the delete leaves the check, which finds the capture settled and stops."""
    spawn(_cancel(sending, adapters))


async def _cancel(sending: asyncio.Task[QueueReceipt | None], adapters: Adapters) -> None:
    receipt = await sending
    if receipt is None:
        return
    try:
        await adapters.queues.cancel(receipt)
    except Exception:
        log.warning("could not cancel a check (it will find nothing to do)", exc_info=True)


# The outcomes this process published and may still take back, by capture and version: the
# sending task (its result the receipt) and the queues it went to. Kept until the message is
# due (the queues' outcome_delay_s) and a little after; a stream that showed the outcome takes
# it out.
# A version whose message was taken back stays listed (None) until then: shown again (a
# replayed run), it has nothing left to push and nothing to mark.
_Key = tuple[str, datetime]
_published: dict[_Key, tuple[asyncio.Task[QueueReceipt | None], CaptureQueues] | None] = {}
_KEPT_PAST_DUE_S = 30.0


def publish_outcome(item: InboxItem, queues: CaptureQueues) -> None:
    """Tell `captures-outcomes` about the settled (or failed) version `item`, off the writer's
    path: the user's stream does not wait for it."""
    key = (item.id, item.updated_at)
    _published[key] = (spawn(_publish(item, queues)), queues)
    due_s = queues.outcome_delay_s + _KEPT_PAST_DUE_S
    asyncio.get_running_loop().call_later(due_s, _published.pop, key, None)


async def _publish(item: InboxItem, queues: CaptureQueues) -> QueueReceipt | None:
    """Its readers see it after the queues' outcome_delay_s: a client following the capture
    is sent the outcome meanwhile, and the mark of that (outcome_shown_at) lands before the push
    worker looks."""
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
        return await queues.publish_outcome(message)
    except Exception:
        # The capture is filed and the client has its answer; push is best effort.
        log.exception("could not publish the outcome of capture %s", item.id)
        return None


def shown(item: InboxItem, repo: CaptureRepository) -> None:
    """A client was sent `item`'s outcome live, off the stream's path: take back the outcome
    message this process published for that version, so no push job runs (issue 32); else,
    or if that fails, mark it shown (shown.mark_shown), which the push worker checks."""
    spawn(_shown(item, repo))


async def _shown(item: InboxItem, repo: CaptureRepository) -> None:
    key = (item.id, item.updated_at)
    if key in _published and _published[key] is None:
        return  # shown again (a replayed run): nothing is left to push
    published = _published.get(key)
    if published is not None:
        sending, queues = published
        _published[key] = None
        receipt = await sending
        if receipt is not None:
            try:
                await queues.cancel(receipt)
                return
            except Exception:
                log.warning("capture %s: could not take back its outcome", item.id, exc_info=True)
    await mark_shown(item, repo)
