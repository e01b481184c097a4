"""Record that a client was shown a capture's outcome live, so the push worker does not tell the
user again what they already saw.

The streams call `mark_shown` (in the background) from just after the last `yield` of the
outcome's events: a generator runs past its final `yield` only when the response asks for the
next item, i.e. once the outcome's frames were handed to the client. A stream whose client left
before that never marks, and the user gets the push.
"""

from __future__ import annotations

import logging

from shared.domain.capture import InboxItem
from shared.domain.errors import StaleItem, StorageUnavailable
from shared.domain.ports import CaptureRepository
from shared.services.background import spawn

log = logging.getLogger(__name__)

_ATTEMPTS = 3


def shown(item: InboxItem, repo: CaptureRepository) -> None:
    """Mark `item`'s outcome shown, off the stream's path."""
    spawn(mark_shown(item, repo))


async def mark_shown(item: InboxItem, repo: CaptureRepository) -> None:
    """Save `item.shown_live()` ETag-guarded. Only that very version is marked: if the capture
    moved on meanwhile, its newer outcome was not shown, and nothing is written."""
    for _ in range(_ATTEMPTS):
        if item.was_shown_live or not item.has_ended:
            return
        try:
            await repo.save(item.shown_live())
            return
        except StaleItem:
            current = await _read(item, repo)
            if current is None or current.updated_at != item.updated_at:
                return  # gone, or another version: not what the client was shown
            item = current  # only the ETag changed (another stream marked it, say)
        except StorageUnavailable:
            # At worst the user gets a push for what they saw: not worth failing anything.
            log.warning("capture %s: could not mark its outcome shown", item.id)
            return
    log.warning("capture %s: its outcome could not be marked shown (kept changing)", item.id)


async def _read(item: InboxItem, repo: CaptureRepository) -> InboxItem | None:
    try:
        return await repo.get(item.user_id, item.id)
    except StorageUnavailable:
        return None
