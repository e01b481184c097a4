"""The user picks a capture's bucket: file a LOW_CONFIDENCE (or misunderstood) capture there,
or move a filed one. The user's choice wins over a classifier finishing at the same moment."""

from __future__ import annotations

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.errors import CaptureDeleted, Conflict
from shared.domain.outcomes import Outcome
from shared.domain.ports import Adapters
from shared.services.filing import file_capture
from shared.services.inbox import get_capture, not_found
from shared.services.retry_stale import on_latest


async def pick_bucket(
    user_id: str, capture_id: str, bucket: Bucket, adapters: Adapters
) -> InboxItem:
    item = await get_capture(user_id, capture_id, adapters.repo)

    async def attempt(item: InboxItem) -> InboxItem:
        # A failed capture with text (CLASSIFY_FAILED) can still be filed by hand.
        if not item.may_be_picked():
            raise Conflict("This capture has no text to file yet.", "NO_TEXT_YET")
        try:
            picked = item.picked(bucket, _title(item))
            return await file_capture(item, picked, adapters.repo, adapters.queues)
        except CaptureDeleted:
            raise not_found() from None

    return await on_latest(item, adapters.repo, attempt, gone=not_found, busy=_busy)


def _busy() -> Conflict:
    return Conflict("This capture keeps changing. Please try again.", "CONFLICT")


def _title(item: InboxItem) -> str:
    # A misunderstood capture's title says only that; the user's words name it better.
    if item.title and item.outcome not in (Outcome.MISUNDERSTOOD, Outcome.UNRESOLVED):
        return item.title
    words = item.text_to_classify().split()
    title = " ".join(words[:8])
    return title[:120] or "Capture"
