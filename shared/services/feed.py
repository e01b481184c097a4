"""Follow a capture: where it is now, then each stage it reaches, by polling its inbox item
until the outcome (shared/agui/ tells it as the capture's AG-UI run, replayed and followed).

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

from shared.domain.capture import InboxItem
from shared.domain.errors import LimitReached, StorageUnavailable
from shared.domain.policy import Policy
from shared.domain.ports import Adapters, CaptureRepository
from shared.domain.progress import Stage, StageReached, Stopped, stage_of

log = logging.getLogger(__name__)


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

    def __init__(self, user_id: str, policy: Policy) -> None:
        if _open_feeds[user_id] >= policy.max_feeds_per_user:
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
    item: InboxItem, adapters: Adapters, *, slot: FeedSlot | None = None
) -> AsyncIterator[StageReached | Stopped]:
    """`follow_capture`, holding a feed slot (taken here unless the caller took it first)
    until the feed ends."""
    held = slot or FeedSlot(item.user_id, adapters.policy)

    async def feed() -> AsyncIterator[StageReached | Stopped]:
        try:
            async for reached in follow_capture(item, adapters.policy, adapters.repo):
                yield reached
        finally:
            held.release()

    stages = feed()
    # A feed never read (the client left first) never runs `finally`: the slot is given back
    # when the feed is collected.
    weakref.finalize(stages, held.release)
    return stages


async def follow_capture(
    item: InboxItem, policy: Policy, repo: CaptureRepository
) -> AsyncIterator[StageReached | Stopped]:
    """The capture where it is, then at each further stage, up to its end (SETTLED or FAILED);
    or Stopped: deleted, or TIMEOUT after EVENTS_TIMEOUT_S (the capture goes on regardless;
    following it again resumes)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + policy.events_timeout_s
    stage = Stage.WAITING
    moved_at, wait_s = loop.time(), policy.events_poll_s
    while True:
        # Never step back: a poll may read a replica a moment behind the last one.
        reached = max(stage, stage_of(item))
        if reached > stage:
            yield StageReached(item, reached)
        if reached in (Stage.SETTLED, Stage.FAILED):
            return
        now = loop.time()
        if reached > stage:
            moved_at = now
        stage = reached
        if now >= deadline:
            yield Stopped(
                "TIMEOUT", "Still working on this capture. Reconnect to keep following it."
            )
            return
        wait_s = next_poll_s(wait_s, now - moved_at, policy.events_poll_s)
        await asyncio.sleep(min(wait_s, deadline - now))
        try:
            latest = await repo.get(item.user_id, item.id)
        except StorageUnavailable:
            log.warning("events feed of capture %s: storage unavailable, polling on", item.id)
            continue
        if latest is None or latest.is_deleted:
            yield Stopped("CAPTURE_DELETED", "This capture was deleted.")
            return
        item = latest
