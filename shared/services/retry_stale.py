"""Optimistic concurrency, one way: try a change on the version in hand and, when someone else
saved first (StaleItem), decide again on the version they left, up to ATTEMPTS times."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

from shared.domain.capture import InboxItem
from shared.domain.errors import StaleItem
from shared.domain.ports import CaptureRepository

# The one attempt policy. Each lost round means another writer finished in between, so a few
# are plenty; the most any writer needed before (a delete racing the classifier and a pick).
ATTEMPTS = 5

D = TypeVar("D")
T = TypeVar("T")


async def retry_stale(
    first: D,
    attempt: Callable[[D], Awaitable[T]],
    reread: Callable[[], Awaitable[D]],
    busy: Callable[[], T],
) -> T:
    """`attempt(first)`; each time it meets a newer version, `attempt` again on what `reread()`
    reads. `busy()` says what to do (raise, or return) when it kept changing for ATTEMPTS
    rounds."""
    version = first
    for _ in range(ATTEMPTS):
        try:
            return await attempt(version)
        except StaleItem:
            version = await reread()
    return busy()


async def on_latest(
    item: InboxItem,
    repo: CaptureRepository,
    attempt: Callable[[InboxItem], Awaitable[T]],
    gone: Callable[[], Exception],
    busy: Callable[[], Exception],
) -> T:
    """`retry_stale` for one inbox item: `gone()` is raised when the item disappeared
    meanwhile, `busy()` when it kept changing."""

    async def reread() -> InboxItem:
        current = await repo.get(item.user_id, item.id)
        if current is None:
            raise gone()
        return current

    def exhausted() -> NoReturn:
        raise busy()

    return await retry_stale(item, attempt, reread, exhausted)
