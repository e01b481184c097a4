"""Record that a client was shown a capture's outcome live, so the push worker does not tell the
user again what they already saw.

The narrator's streams have it run (after_write.shown, in the background) from just after the
last `yield` of the outcome's events: a generator runs past its final `yield` only when the
response asks for the next item, i.e. once the outcome's frames were handed to the client. A
stream whose client left before that never marks, and the user gets the push.
"""

from __future__ import annotations

import logging

from shared.domain.capture import InboxItem
from shared.domain.errors import StorageUnavailable
from shared.domain.ports import CaptureRepository
from shared.services.retry_stale import retry_stale

log = logging.getLogger(__name__)


async def mark_shown(item: InboxItem, repo: CaptureRepository) -> None:
    """Save `item.shown_live()` ETag-guarded. Only that very version is marked: if the capture
    moved on meanwhile, its newer outcome was not shown, and nothing is written."""

    async def mark(current: InboxItem | None) -> None:
        if current is None or current.updated_at != item.updated_at:
            return  # gone, or another version: not what the client was shown
        if current.was_shown_live or not current.has_ended:
            return
        # A stale save means only the ETag changed (another stream marked it, say): again.
        await repo.save(current.shown_live())

    def busy() -> None:
        log.warning("capture %s: its outcome could not be marked shown (kept changing)", item.id)

    try:
        first: InboxItem | None = item  # as a reread may find it: gone
        await retry_stale(first, mark, lambda: _read(item, repo), busy)
    except StorageUnavailable:
        # At worst the user gets a push for what they saw: not worth failing anything.
        log.warning("capture %s: could not mark its outcome shown", item.id)


async def _read(item: InboxItem, repo: CaptureRepository) -> InboxItem | None:
    try:
        return await repo.get(item.user_id, item.id)
    except StorageUnavailable:
        return None
