"""Reading one user's captures. Another user's capture is "not found", exactly like a capture
that does not exist, so ids reveal nothing."""

from __future__ import annotations

import uuid

from .models import InboxItem
from .problems import Problem
from .repository import CaptureRepository


def not_found() -> Problem:
    return Problem(404, "There is no such capture.")


async def get_capture(user_id: str, capture_id: str, repo: CaptureRepository) -> InboxItem:
    try:
        uuid.UUID(capture_id)
    except ValueError:
        raise not_found() from None  # not an id we ever made: no need to ask Cosmos
    item = await repo.get(user_id, capture_id)
    if item is None:
        raise not_found()
    return item
