"""The outbox: what follows a write, with one owner (outbox-style, as the transactional outbox
and after-commit hooks are, over Storage queues). The delayed check each write of a capture
sends before it writes; the outcome it publishes after it, or, for a live run, holds for the
run's own stream; and, once a stream delivered an outcome to its client, taking back what it
published or marking it seen live. Each runs beside the write, on tasks this outbox keeps, best
effort: none fails or holds up the write, but for the check, which the write waits for up to
CHECK_FIRST_S.

The delayed check is the safety net: when it comes due, the classify worker
(worker.handle_classify_job) finishes whatever the writer's process did not: classifying,
filing, converging the buckets, removing a deleted capture, telling an outcome nobody saw.

Built once per process by the composition root (shared/bootstrap.py) over the capture queues
and repository, and handed to the services as `Adapters.outbox` (the `Outbox` port)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared.domain.capture import InboxItem
from shared.domain.errors import StorageUnavailable
from shared.domain.messages import ClassifyJob, OutcomeMessage, QueueReceipt
from shared.domain.ports import CaptureQueues, CaptureRepository, Sending
from shared.domain.push import silence_for
from shared.services.retry_stale import retry_stale

log = logging.getLogger(__name__)

# How long a write waits for its check to be sent: normally the job is out before the write,
# so no moment exists in which a process could die leaving work that nothing will come back
# to; a slow queue holds the write up no longer.
CHECK_FIRST_S = 1.0

# An outcome this process published is kept (to take back) until its message is due (the
# queues' outcome_delay_s), and this long after.
_KEPT_PAST_DUE_S = 30.0

_Version = tuple[str, datetime]  # a capture's id and the updatedAt of one of its versions


@dataclass
class _Held:
    """A live run's outcome, held for its stream (issue 32): the run's stream delivers it
    within milliseconds, and then nothing is sent at all but the deletion of the run's check.
    The check stands until the outcome is delivered or published: a process that dies holding
    it leaves the check, which publishes it (tell_unseen)."""

    check: Sending
    delivered: asyncio.Event = field(default_factory=asyncio.Event)


class QueueOutbox:
    """The `Outbox` port over the capture queues, with this process's registries of held and
    published outcomes and the tasks it runs beside the writes."""

    def __init__(self, queues: CaptureQueues, repo: CaptureRepository) -> None:
        self._queues = queues
        self._repo = repo
        self._tasks: set[asyncio.Task[Any]] = set()
        self._held: dict[_Version, _Held] = {}
        # The outcomes this process published and may still take back, by version. One taken
        # back, or delivered while held, stays listed (None): delivered again (a replayed run),
        # it has nothing left to take back and nothing to mark.
        self._published: dict[_Version, Sending | None] = {}

    # -- the delayed check ----------------------------------------------------------------

    async def send_check(self, job: ClassifyJob, delay_s: float) -> Sending:
        """Send the delayed job that settles the capture if its own process never does. Call it
        before the write; best effort, and never more than CHECK_FIRST_S in the way. The sending
        task, whose result is the job's receipt (for `hold` and `cancel_check`)."""
        sending = self._spawn(self._send_check(job, delay_s))
        await asyncio.wait({sending}, timeout=CHECK_FIRST_S)
        return sending

    async def _send_check(self, job: ClassifyJob, delay_s: float) -> QueueReceipt | None:
        try:
            return await self._queues.enqueue_classify(job, delay_s=delay_s)
        except Exception:
            log.warning("could not schedule the check of capture %s", job.capture_id, exc_info=True)
            return None

    def cancel_check(self, check: Sending) -> None:
        """Delete the check `check` sent, off the writer's path: another job stands in for it."""
        self._spawn(self._cancel(check))

    async def _cancel(self, sending: Sending) -> bool:
        """Delete the message `sending` sent, if it was sent; whether none is left to come due."""
        receipt = await sending
        if receipt is None:
            return True
        try:
            await self._queues.cancel(receipt)
            return True
        except Exception:
            log.warning("could not cancel a check (it will come due)", exc_info=True)
            return False

    # -- outcomes ---------------------------------------------------------------------------

    def publish(self, item: InboxItem) -> None:
        """Tell `captures-outcomes` about the settled (or failed) version `item`, off the
        writer's path. Its readers see it after the queues' outcome_delay_s, in which a client
        following the capture is delivered the outcome and the message is taken back."""
        self._publish_now_or_later(item, None)

    def _publish_now_or_later(self, item: InboxItem, delay_s: float | None) -> Sending:
        sending = self._spawn(self._publish(item, delay_s))
        self._remember(_version(item), sending)
        return sending

    def _remember(self, version: _Version, published: Sending | None) -> None:
        self._published[version] = published
        due_s = self._queues.outcome_delay_s + _KEPT_PAST_DUE_S
        asyncio.get_running_loop().call_later(due_s, self._published.pop, version, None)

    async def _publish(self, item: InboxItem, delay_s: float | None) -> QueueReceipt | None:
        try:
            return await self._queues.publish_outcome(outcome_message(item), delay_s)
        except Exception:
            # The capture is filed and the client has its answer; push is best effort.
            log.exception("could not publish the outcome of capture %s", item.id)
            return None

    def tell_unseen(self, item: InboxItem) -> None:
        """A live run's check found `item` settled: its run may have died holding the outcome,
        so publish it, visible at once, unless the user saw it or needs no telling
        (push.silence_for). A run that did publish it leaves its push worker a duplicate, sent
        once per device."""
        if item.has_ended and silence_for(outcome_message(item), item) is None:
            self._publish_now_or_later(item, 0)

    def hold(self, item: InboxItem, check: Sending) -> None:
        """The live run that sent `check` settled `item`: keep its outcome for the run's stream
        to deliver, and publish it, visible at once, if none did within the queues'
        outcome_delay_s (the client left). A run whose check was not sent has nothing to hold
        it under, and publishes it as any writer does."""
        if check.done() and check.result() is None:
            self.publish(item)
            return
        held = self._held[_version(item)] = _Held(check)
        self._spawn(self._held_until_delivered(item, held))

    async def _held_until_delivered(self, item: InboxItem, held: _Held) -> None:
        version = _version(item)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._queues.outcome_delay_s):
                    await held.delivered.wait()
        finally:
            self._held.pop(version, None)
        if held.delivered.is_set():
            # A replay of the run has nothing to take back or mark.
            self._remember(version, None)
            if not await self._cancel(held.check):
                await mark_seen_live(item, self._repo)  # the check will come: it must know
            return
        # Published first: a crash in between leaves the check, which publishes it again.
        if await self._publish_now_or_later(item, 0) is not None:
            await self._cancel(held.check)

    # -- delivered live ---------------------------------------------------------------------

    def delivered(self, item: InboxItem) -> None:
        """A client was sent `item`'s outcome live, off the stream's path: release the outcome
        held for that version, or take back the message published for it, so no push job runs
        (issue 32); else, or if that fails, mark it seen live, which the push worker checks."""
        held = self._held.get(_version(item))
        if held is not None:
            held.delivered.set()
            return
        self._spawn(self._take_back_or_mark(item))

    async def _take_back_or_mark(self, item: InboxItem) -> None:
        version = _version(item)
        if version in self._published and self._published[version] is None:
            return  # delivered again (a replayed run): nothing is left to push
        sending = self._published.get(version)
        if sending is not None:
            self._published[version] = None
            receipt = await sending
            if receipt is not None:
                try:
                    await self._queues.cancel(receipt)
                    return
                except Exception:
                    log.warning(
                        "capture %s: could not take back its outcome", item.id, exc_info=True
                    )
        await mark_seen_live(item, self._repo)

    # -- the tasks beside the writes -------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        # Referenced until done, so that none is collected half way.
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def drain(self) -> None:
        """Wait for the work started so far (shutdown, and tests that look at its effects)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def abandon(self) -> None:
        """Stop everything in flight (`drain` waits for it to stop) and forget what is held,
        as the death of the process does: for the tests of what a crash leaves to the check."""
        for task in self._tasks:
            task.cancel()
        self._held.clear()
        self._published.clear()


def _version(item: InboxItem) -> _Version:
    return (item.id, item.updated_at)


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


async def mark_seen_live(item: InboxItem, repo: CaptureRepository) -> None:
    """Save `item.shown_live()` ETag-guarded, so the push worker does not tell the user again
    what a stream delivered. Only that very version is marked: if the capture moved on
    meanwhile, its newer outcome was not delivered, and nothing is written."""

    async def mark(current: InboxItem | None) -> None:
        if current is None or current.updated_at != item.updated_at:
            return  # gone, or another version: not what the client was sent
        if current.was_shown_live or not current.has_ended:
            return
        # A stale save means only the ETag changed (another stream marked it, say): again.
        await repo.save(current.shown_live())

    def busy() -> None:
        log.warning("capture %s: its outcome could not be marked seen (kept changing)", item.id)

    try:
        first: InboxItem | None = item  # as a reread may find it: gone
        await retry_stale(first, mark, lambda: _read(item, repo), busy)
    except StorageUnavailable:
        # At worst the user gets a push for what they saw: not worth failing anything.
        log.warning("capture %s: could not mark its outcome seen", item.id)


async def _read(item: InboxItem, repo: CaptureRepository) -> InboxItem | None:
    try:
        return await repo.get(item.user_id, item.id)
    except StorageUnavailable:
        return None
