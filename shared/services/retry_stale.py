"""Optimistic concurrency for one inbox item: try a change on the version in hand and, when
someone else saved first (StaleItem), decide again on the version they left."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from shared.domain.capture import InboxItem
from shared.domain.errors import StaleItem
from shared.domain.ports import CaptureRepository

# A few rounds are plenty: each lost round means another writer finished in between.
ATTEMPTS = 3

T = TypeVar("T")


async def on_latest(
    item: InboxItem,
    repo: CaptureRepository,
    attempt: Callable[[InboxItem], Awaitable[T]],
    gone: Callable[[], Exception],
    busy: Callable[[], Exception],
) -> T:
    """`attempt(item)` until it does not meet a newer version; `gone()` is raised when the item
    disappeared meanwhile, `busy()` when it kept changing for ATTEMPTS rounds."""
    for _ in range(ATTEMPTS):
        try:
            return await attempt(item)
        except StaleItem:
            current = await repo.get(item.user_id, item.id)
            if current is None:
                raise gone() from None
            item = current
    raise busy()
