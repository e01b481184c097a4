"""Editing a filed item (PATCH /api/captures/{id}): a JSON merge patch of its title, due date,
next action and done, conditional on the filed document's ETag the client read. The edit is
saved on the inbox item, which holds the filed item's details (the truth: its `filedBucket`
and what is filed there), and the filed item converges to it like any other write
(placement.py)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from shared.domain.capture import InboxItem
from shared.domain.classification import TITLE_MAX, Bucket
from shared.domain.documents import Day, RequestBody
from shared.domain.errors import (
    Conflict,
    Invalid,
    PreconditionFailed,
    PreconditionRequired,
)
from shared.domain.filed import FiledItem
from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters, CaptureRepository
from shared.services.embedding import with_embedding
from shared.services.inbox import get_capture, not_found
from shared.services.placement import agrees, converge
from shared.services.recall import FiledView
from shared.services.retry_stale import ATTEMPTS, on_latest

NEXT_ACTION_MAX = 200


class FiledPatch(RequestBody):
    """RFC 7396: a field left out stays as it is; null clears dueDate or nextAction (title and
    done are never null: their types refuse it). Any other field is refused."""

    title: str = Field(default=None, min_length=1, max_length=TITLE_MAX)  # type: ignore[assignment]  # None: left out; never null
    due_date: Day | None = None
    next_action: str | None = Field(default=None, min_length=1, max_length=NEXT_ACTION_MAX)
    done: StrictBool = Field(default=None)  # type: ignore[assignment]  # None: left out; never null

    def changes(self, bucket: Bucket) -> dict[str, Any]:
        """The fields to set on the filed item, or Invalid saying what cannot be."""
        changes: dict[str, Any] = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if name == "title":
                value = " ".join(value.split())
                if not value:
                    raise Invalid("title: cannot be empty.", "INVALID_PATCH")
            if name == "next_action" and bucket is not Bucket.PROJECTS:
                raise Invalid(
                    "nextAction: only Projects items have a next action.", "NOT_A_PROJECT"
                )
            changes[name] = value
        return changes


def same_etag(a: str, b: str | None) -> bool:
    """An If-Match value against a stored ETag, with or without the quotes (and W/)."""
    return b is not None and _bare(a) == _bare(b)


def _bare(etag: str) -> str:
    etag = etag.strip()
    return etag.removeprefix("W/").strip('"')


async def edit_filed(
    user_id: str, capture_id: str, patch: FiledPatch, if_match: str | None, adapters: Adapters
) -> FiledView:
    """404 for no capture of the caller's, 409 NOT_FILED for one with no filed item, 428
    without If-Match, 412 when it names an older version; the updated view otherwise.

    The edit is saved on the inbox item (the truth, ETag-guarded), then the filed item
    converges to it (placement.py): a move at the same moment carries the edit, and a crash
    between the two is finished by the delayed check sent first. The 200 comes once both are
    written."""
    repo = adapters.repo
    item = await get_capture(user_id, capture_id, repo)
    stored = await _filed_item(item, repo)
    if if_match is None or not if_match.strip():
        raise PreconditionRequired(
            "Send If-Match with the item's etag, so that an older copy cannot overwrite a "
            "newer one.",
            "PRECONDITION_REQUIRED",
        )
    patch.changes(stored.bucket)  # refused before anything is sent or written
    checked: list[bool] = []

    async def attempt(current: InboxItem) -> InboxItem:
        if current.is_deleted:
            raise not_found()
        filed = await _filed_item(current, repo)
        if not agrees(filed, current):
            # Its filed item is behind the inbox item (someone's edit or move not yet
            # converged, or cut short): the etag the client read cannot be the latest one.
            await converge(user_id, capture_id, repo, known=current)
            raise _stale()
        if not same_etag(if_match, filed.etag):
            raise _stale()
        changes = patch.changes(filed.bucket)
        holding = current if current.holds_details else current.holding(filed)
        if not checked:
            # If this process dies between the inbox item and the filed item, the check
            # converges the filed item to the edit.
            job = ClassifyJob(capture_id=capture_id, user_id=user_id)
            await adapters.outbox.send_check(job, adapters.policy.recovery_delay_s)
            checked.append(True)
        edited = holding.edited(changes)
        if "title" in changes:  # the title is embedded with the words: its vector follows
            edited = await with_embedding(edited, adapters.embedder)
        return await repo.save(edited)

    saved = await on_latest(item, repo, attempt, gone=not_found, busy=_busy)
    return await _as_filed(saved, repo)


async def _as_filed(saved: InboxItem, repo: CaptureRepository) -> FiledView:
    """The filed item once the buckets agree with the edit (or with a version saved after it:
    a move carries the edit, so the view is of wherever the capture went)."""
    known: InboxItem | None = saved
    for _ in range(ATTEMPTS):
        latest = await converge(saved.user_id, saved.id, repo, known=known)
        if latest is None or latest.is_deleted:
            raise not_found()
        if latest.filed_bucket is None:  # settled again since, with nothing filed
            raise Conflict("This capture has no filed item to edit.", "NOT_FILED")
        filed = await repo.get_filed(latest.user_id, latest.filed_bucket, latest.id)
        if filed is not None:
            return FiledView.of(filed)
        known = None  # moved again since the buckets agreed: they converge to where it went
    raise _busy()


async def _filed_item(item: InboxItem, repo: CaptureRepository) -> FiledItem:
    bucket = item.filed_bucket
    stored = await repo.get_filed(item.user_id, bucket, item.id) if bucket is not None else None
    if stored is None:
        raise Conflict("This capture has no filed item to edit.", "NOT_FILED")
    return stored


def _busy() -> Conflict:
    return Conflict("This capture keeps changing. Please try again.", "CONFLICT")


def _stale() -> PreconditionFailed:
    return PreconditionFailed(
        "The item changed since you read it: read it again, then edit.", "PRECONDITION_FAILED"
    )
