"""Editing a filed item (PATCH /api/captures/{id}): a JSON merge patch of its title, due date,
next action and done, applied to the filed document under the ETag the client read, and the
new title carried to the inbox item so that the inbox shows it too."""

from __future__ import annotations

from pydantic import Field, StrictBool

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.documents import Day, RequestBody
from shared.domain.errors import (
    Conflict,
    Invalid,
    PreconditionFailed,
    PreconditionRequired,
    StaleItem,
)
from shared.domain.filed import FiledItem
from shared.domain.ports import CaptureRepository, FiledItems
from shared.services.inbox import get_capture, not_found
from shared.services.recall import FiledView
from shared.services.retry_stale import on_latest

TITLE_MAX = 120
NEXT_ACTION_MAX = 200


class FiledPatch(RequestBody):
    """RFC 7396: a field left out stays as it is; null clears dueDate or nextAction (title and
    done are never null: their types refuse it). Any other field is refused."""

    title: str = Field(default=None, min_length=1, max_length=TITLE_MAX)  # type: ignore[assignment]
    due_date: Day | None = None
    next_action: str | None = Field(default=None, min_length=1, max_length=NEXT_ACTION_MAX)
    done: StrictBool = Field(default=None)  # type: ignore[assignment]

    def changes(self, bucket: Bucket) -> dict:
        """The fields to set on the filed item, or Invalid saying what cannot be."""
        changes: dict = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if name == "title":
                value = " ".join(value.split())
                if not value:
                    raise Invalid("The title is empty.", "INVALID_PATCH")
            if name == "next_action" and bucket is not Bucket.PROJECTS:
                raise Invalid("Only Projects items have a next action.", "NOT_A_PROJECT")
            changes[name] = value
        return changes


def same_etag(a: str, b: str | None) -> bool:
    """An If-Match value against a stored ETag, with or without the quotes (and W/)."""
    return b is not None and _bare(a) == _bare(b)


def _bare(etag: str) -> str:
    etag = etag.strip()
    return etag.removeprefix("W/").strip('"')


async def edit_filed(
    user_id: str,
    capture_id: str,
    patch: FiledPatch,
    if_match: str | None,
    repo: CaptureRepository,
    filed: FiledItems,
) -> FiledView:
    """404 for no capture of the caller's, 409 NOT_FILED for one with no filed item, 428
    without If-Match, 412 when it names an older version; the updated view otherwise."""
    item = await get_capture(user_id, capture_id, repo)
    stored = await _filed_item(item, filed)
    if if_match is None or not if_match.strip():
        raise PreconditionRequired(
            "Send If-Match with the item's etag, so that an older copy cannot overwrite a "
            "newer one.",
            "PRECONDITION_REQUIRED",
        )
    if not same_etag(if_match, stored.etag):
        raise _stale()
    changes = patch.changes(stored.bucket)
    try:
        saved = await filed.replace(stored.model_copy(update=changes))
    except StaleItem:
        raise _stale() from None
    if "title" in changes and changes["title"] != item.title:
        await _retitle_inbox(item, saved.bucket, changes["title"], repo)
    return FiledView.of(saved)


async def _filed_item(item: InboxItem, filed: FiledItems) -> FiledItem:
    bucket = item.filed_bucket
    stored = await filed.get(item.user_id, bucket, item.id) if bucket is not None else None
    if stored is None:
        raise Conflict("This capture has no filed item to edit.", "NOT_FILED")
    return stored


async def _retitle_inbox(
    item: InboxItem, bucket: Bucket, title: str, repo: CaptureRepository
) -> None:
    async def attempt(current: InboxItem) -> InboxItem:
        if current.is_deleted or current.filed_bucket is not bucket or current.title == title:
            return current  # deleted or moved meanwhile: this filed item is on its way out
        return await repo.save(current.retitled(title))

    await on_latest(
        item,
        repo,
        attempt,
        gone=not_found,
        busy=lambda: Conflict("This capture keeps changing. Please try again.", "CONFLICT"),
    )


def _stale() -> PreconditionFailed:
    return PreconditionFailed(
        "The item changed since you read it: read it again, then edit.", "PRECONDITION_FAILED"
    )
