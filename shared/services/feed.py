"""A capture's events feed: its AG-UI run told from its inbox item, replayed at once up to
where the capture is, then followed by polling the item until the outcome.

The inbox item is the only state: polling it works whichever instance does the work, and a
client that reconnects gets the same run replayed and followed on from there. Every poll is a
billed read, so a feed that sees nothing move for a while polls less and less often.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from enum import IntEnum
from typing import TYPE_CHECKING

from shared.domain.capture import InboxItem, Status
from shared.domain.errors import LimitReached, StorageUnavailable
from shared.domain.outcomes import failure_message
from shared.domain.ports import CaptureRepository
from shared.services import agui
from shared.services.shown import shown
from shared.settings import get_settings

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

log = logging.getLogger(__name__)


class Stage(IntEnum):
    WAITING = 0  # for the audio
    TRANSCRIBING = 1
    CLASSIFYING = 2  # text stored, the classifier's turn
    SETTLED = 3
    FAILED = 4


def stage_of(item: InboxItem) -> Stage:
    if item.status is Status.FAILED:
        return Stage.FAILED
    if item.is_settled:
        return Stage.SETTLED
    if item.status is Status.AWAITING_UPLOAD:
        return Stage.WAITING
    if item.status is Status.TRANSCRIBING:
        return Stage.TRANSCRIBING
    return Stage.CLASSIFYING


def events_between(
    item: InboxItem, before: Stage, after: Stage, interrupts: bool = False
) -> list[BaseEvent]:
    """The events that take a run from `before` to `after` (replay passes WAITING)."""
    voice = item.source == "voice"
    if after is Stage.FAILED:
        # A step the feed opened is closed before the run ends.
        open_step = {Stage.CLASSIFYING: agui.CLASSIFIER_STEP}
        if voice:
            open_step[Stage.TRANSCRIBING] = agui.TRANSCRIPTION_STEP
        closing = [agui.step_finished(open_step[before])] if before in open_step else []
        return [*closing, agui.run_error(failure_message(item.error), item.error or "FAILED")]
    events: list[BaseEvent] = []
    if voice and before < Stage.TRANSCRIBING <= after:
        events.append(agui.step_started(agui.TRANSCRIPTION_STEP))
    if before < Stage.CLASSIFYING <= after:
        if voice:
            events.append(agui.step_finished(agui.TRANSCRIPTION_STEP))
        events.append(agui.step_started(agui.CLASSIFIER_STEP))
    if before < Stage.SETTLED <= after:
        events.append(agui.step_finished(agui.CLASSIFIER_STEP))
        told = agui.Conversation(interrupts=interrupts, messages=agui.capture_messages(item))
        events.extend(agui.outcome_events(item, item.run_id, told))
    return events


# Polls stay at EVENTS_POLL_S for this long after the feed opens and after every step, when an
# outcome is most likely to land; then each wait is BACKOFF times the last, up to SLOWEST_POLL_S.
# An idle feed (audio that never comes) then reads about 80 times in 120 s, not 600, and an
# outcome after a long quiet step is seen at most SLOWEST_POLL_S late (BENCHMARKS.md).
FAST_FOR_S = 5.0
BACKOFF = 1.5
SLOWEST_POLL_S = 2.0


def next_poll_s(last_s: float, quiet_s: float, fastest_s: float) -> float:
    """The wait before the next poll, after `last_s`, when nothing moved for `quiet_s`."""
    if quiet_s < FAST_FOR_S:
        return fastest_s
    return min(max(last_s * BACKOFF, fastest_s), max(SLOWEST_POLL_S, fastest_s))


# Feeds open on this instance, per user (like the rate limit, each instance counts its own).
_open_feeds: Counter[str] = Counter()


class FeedSlot:
    """One of a user's MAX_FEEDS_PER_USER feeds on this instance; a 429 when none is left."""

    def __init__(self, user_id: str) -> None:
        if _open_feeds[user_id] >= get_settings().max_feeds_per_user:
            raise LimitReached(
                "Too many events feeds are open. Close one, or try again shortly.",
                "TOO_MANY_FEEDS",
                retry_after_s=10,
            )
        _open_feeds[user_id] += 1
        self.user_id = user_id
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            _open_feeds[self.user_id] -= 1
            if not _open_feeds[self.user_id]:
                del _open_feeds[self.user_id]


def open_feed(
    item: InboxItem,
    repo: CaptureRepository,
    slot: FeedSlot | None = None,
    *,
    interrupts: bool = False,
) -> AsyncIterator[BaseEvent]:
    """`follow_capture`, holding a feed slot (taken here unless the caller took it first)
    until the feed ends."""
    held = slot or FeedSlot(item.user_id)

    async def feed() -> AsyncIterator[BaseEvent]:
        try:
            async for event in follow_capture(item, repo, interrupts=interrupts):
                yield event
        finally:
            held.release()

    events = feed()
    # A response never streamed (the client left first) never runs `finally`: the slot is
    # given back when the feed is collected.
    weakref.finalize(events, held.release)
    return events


async def follow_capture(
    item: InboxItem, repo: CaptureRepository, *, interrupts: bool = False
) -> AsyncIterator[BaseEvent]:
    """The run of `item` to its end, or RUN_ERROR TIMEOUT after EVENTS_TIMEOUT_S (the capture
    goes on regardless; reconnecting resumes)."""
    settings = get_settings()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.events_timeout_s
    yield agui.run_started(item.thread_id, item.run_id)
    stage = Stage.WAITING
    moved_at, wait_s = loop.time(), settings.events_poll_s
    while True:
        # Never step back: a poll may read a replica a moment behind the last one.
        reached = max(stage, stage_of(item))
        for event in events_between(item, stage, reached, interrupts):
            yield event
        if reached in (Stage.SETTLED, Stage.FAILED):
            # Past the last yield: the outcome's (or failure's) frames were sent.
            if item.has_ended:
                shown(item, repo)
            return
        now = loop.time()
        if reached > stage:
            moved_at = now
        stage = reached
        if now >= deadline:
            yield agui.run_error(
                "Still working on this capture. Reconnect to keep following it.", "TIMEOUT"
            )
            return
        wait_s = next_poll_s(wait_s, now - moved_at, settings.events_poll_s)
        await asyncio.sleep(min(wait_s, deadline - now))
        try:
            latest = await repo.get(item.user_id, item.id)
        except StorageUnavailable:
            log.warning("events feed of capture %s: storage unavailable, polling on", item.id)
            continue
        if latest is None or latest.is_deleted:
            yield agui.run_error("This capture was deleted.", "CAPTURE_DELETED")
            return
        item = latest
