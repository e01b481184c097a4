"""What follows a write, one way: the delayed check each write of a capture sends before it
writes, publishing an outcome after it (or, for a live run, holding it for the run's own
stream), and marking an outcome shown once a client was sent it. Each runs beside the write
(background.spawn), best effort: none fails or holds up the write, but for the check, which
the write waits for up to CHECK_FIRST_S.

The delayed check is the safety net: when it comes due, the classify worker
(worker.handle_classify_job) finishes whatever the writer's process did not: classifying,
filing, converging the buckets, removing a deleted capture."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from datetime import datetime

from shared.domain.capture import InboxItem
from shared.domain.messages import ClassifyJob, OutcomeMessage, QueueReceipt
from shared.domain.ports import Adapters, CaptureQueues, CaptureRepository
from shared.domain.push import silence_for
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
    task, whose result is the job's receipt (for `hold_outcome`)."""
    sending = spawn(_send_check(job, adapters, delay_s))
    await asyncio.wait({sending}, timeout=CHECK_FIRST_S)
    return sending


async def _send_check(job: ClassifyJob, adapters: Adapters, delay_s: float) -> QueueReceipt | None:
    try:
        return await adapters.queues.enqueue_classify(job, delay_s=delay_s)
    except Exception:
        log.warning("could not schedule the check of capture %s", job.capture_id, exc_info=True)
        return None


def cancel_check(sending: asyncio.Task[QueueReceipt | None], queues: CaptureQueues) -> None:
    """Delete the check `sending` sent, off the writer's path: another job stands in for it."""
    spawn(_cancel(sending, queues))


async def _cancel(sending: asyncio.Task[QueueReceipt | None], queues: CaptureQueues) -> bool:
    """Delete the check `sending` sent, if it was sent; whether none is left to come due."""
    receipt = await sending
    if receipt is None:
        return True
    try:
        await queues.cancel(receipt)
        return True
    except Exception:
        log.warning("could not cancel a check (it will come due)", exc_info=True)
        return False


# The outcomes this process published and may still take back, by capture and version: the
# sending task (its result the receipt) and the queues it went to. Kept until the message is
# due (the queues' outcome_delay_s) and a little after; a stream that showed the outcome takes
# it out.
# A version whose message was taken back stays listed (None) until then: shown again (a
# replayed run), it has nothing left to push and nothing to mark.
_Key = tuple[str, datetime]
_Published = tuple[asyncio.Task[QueueReceipt | None], CaptureQueues]
_published: dict[_Key, _Published | None] = {}
_KEPT_PAST_DUE_S = 30.0


def publish_outcome(
    item: InboxItem, queues: CaptureQueues, delay_s: float | None = None
) -> asyncio.Task[QueueReceipt | None]:
    """Tell `captures-outcomes` about the settled (or failed) version `item`, off the writer's
    path: the user's stream does not wait for it. Its readers see it after `delay_s` (None: the
    queues' outcome_delay_s, in which a client following the capture is sent the outcome and
    takes the message back). The sending task, whose result is the receipt."""
    sending = spawn(_publish(item, queues, delay_s))
    _remember((item.id, item.updated_at), (sending, queues), queues)
    return sending


def _remember(key: _Key, published: _Published | None, queues: CaptureQueues) -> None:
    _published[key] = published
    due_s = queues.outcome_delay_s + _KEPT_PAST_DUE_S
    asyncio.get_running_loop().call_later(due_s, _published.pop, key, None)


def outcome_message(item: InboxItem) -> OutcomeMessage:
    """The message that tells `item`'s outcome (or failure), as it is now."""
    assert item.has_ended
    return OutcomeMessage(
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


async def _publish(
    item: InboxItem, queues: CaptureQueues, delay_s: float | None
) -> QueueReceipt | None:
    try:
        return await queues.publish_outcome(outcome_message(item), delay_s)
    except Exception:
        # The capture is filed and the client has its answer; push is best effort.
        log.exception("could not publish the outcome of capture %s", item.id)
        return None


def tell_unshown(item: InboxItem, queues: CaptureQueues) -> None:
    """A live run's check found `item` settled: its run may have died holding the outcome, so
    publish it, visible at once, unless the user saw it or needs no telling (push.silence_for).
    A run that did publish it leaves its push worker a duplicate, sent once per device."""
    if item.has_ended and silence_for(outcome_message(item), item) is None:
        publish_outcome(item, queues, delay_s=0)


# A live run (a text capture, a follow-up) holds its outcome instead of publishing it (issue
# 32): its own stream shows it within milliseconds, and then nothing is sent at all but the
# deletion of the run's check. The run's check stands until the outcome is shown or published:
# a process that dies holding it leaves the check, which publishes it (tell_unshown).
@dataclass
class _Hold:
    check: asyncio.Task[QueueReceipt | None]
    seen: asyncio.Event = field(default_factory=asyncio.Event)
    repo: CaptureRepository | None = None  # the showing stream's, to mark it if need be


_held: dict[_Key, _Hold] = {}


def hold_outcome(
    item: InboxItem, queues: CaptureQueues, check: asyncio.Task[QueueReceipt | None]
) -> None:
    """The live run that sent `check` settled `item`: keep its outcome for the run's stream to
    show (`shown`), and publish it, visible at once, if none did within the queues'
    outcome_delay_s (the client left). A run whose check was not sent has nothing to hold it
    under, and publishes it as any writer does."""
    if check.done() and check.result() is None:
        publish_outcome(item, queues)
        return
    key = (item.id, item.updated_at)
    hold = _held[key] = _Hold(check)
    spawn(_held_until_shown(key, item, queues, hold))


async def _held_until_shown(key: _Key, item: InboxItem, queues: CaptureQueues, hold: _Hold) -> None:
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(queues.outcome_delay_s):
                await hold.seen.wait()
    finally:
        _held.pop(key, None)
    if hold.repo is not None:
        _remember(key, None, queues)  # a replay of the run has nothing to take back or mark
        if not await _cancel(hold.check, queues):
            await mark_shown(item, hold.repo)  # the check will come: it must find it shown
        return
    # Published first: a crash in between leaves the check, which publishes it again.
    if await publish_outcome(item, queues, delay_s=0) is not None:
        await _cancel(hold.check, queues)


def shown(item: InboxItem, repo: CaptureRepository) -> None:
    """A client was sent `item`'s outcome live, off the stream's path: release the outcome this
    process holds for that version, or take back the message it published, so no push job runs
    (issue 32); else, or if that fails, mark it shown (shown.mark_shown), which the push worker
    checks."""
    hold = _held.get((item.id, item.updated_at))
    if hold is not None:
        hold.repo = repo
        hold.seen.set()
        return
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
