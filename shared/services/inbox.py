"""One user's captures: read one, page through them newest first, delete one. Another user's
capture is "not found", exactly like a capture that does not exist, so ids reveal nothing."""

from __future__ import annotations

import base64
import binascii
import json
import uuid

from pydantic import BaseModel, Field, ValidationError

from shared.adapters.repository import CaptureRepository, StaleItem
from shared.bootstrap import Adapters
from shared.domain.classification import Bucket
from shared.domain.models import Document, InboxItem, Status, utc_text
from shared.http.problems import Problem

MAX_PAGE = 100
# What a client may filter by: every status but the delete's tombstone, which is never listed.
LISTED_STATUSES = [s.value for s in Status if s is not Status.DELETING]
_ATTEMPTS = 5


def not_found() -> Problem:
    return Problem(404, "There is no such capture.")


def is_capture_id(value: str) -> bool:
    """Canonical UUID text, the only form of id we make: anything else needs no database call."""
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


async def get_capture(user_id: str, capture_id: str, repo: CaptureRepository) -> InboxItem:
    if not is_capture_id(capture_id):
        raise not_found()
    item = await repo.get(user_id, capture_id)
    if item is None or item.is_deleted:
        raise not_found()
    return item


class _Cursor(BaseModel):
    """Where the next page starts: at `t` (createdAt), after the ids already sent at `t`."""

    t: str = Field(max_length=40)
    ids: list[str] = Field(max_length=MAX_PAGE)


class InboxPage(Document):
    items: list[dict]
    continuation_token: str | None


async def list_inbox(
    user_id: str,
    repo: CaptureRepository,
    *,
    limit: int = 20,
    status: Status | None = None,
    continuation_token: str | None = None,
) -> InboxPage:
    """Newest first, by keyset on createdAt (never OFFSET): each page is one indexed query,
    and captures arriving meanwhile neither shift nor repeat items across pages."""
    cursor = _decode(continuation_token) if continuation_token else None
    items: list[InboxItem] = []
    more = False
    async for item in repo.newest(
        user_id, at_or_before=cursor.t if cursor else None, status=status
    ):
        if cursor and utc_text(item.created_at) == cursor.t and item.id in cursor.ids:
            continue  # sent on the previous page (same instant, rare)
        if item.is_deleted:
            continue
        if len(items) == limit:
            more = True
            break
        items.append(item)
    token = None
    if more:
        last = utc_text(items[-1].created_at)
        seen = [i.id for i in items if utc_text(i.created_at) == last]
        if cursor and cursor.t == last:
            seen = [*cursor.ids, *seen]
        token = _encode(_Cursor(t=last, ids=seen[-MAX_PAGE:]))
    return InboxPage(items=[i.to_json() for i in items], continuation_token=token)


async def delete_capture(user_id: str, capture_id: str, adapters: Adapters) -> None:
    """Tombstone the inbox item, then remove the filed items, the audio, and the inbox item.

    The tombstone comes first and is ETag-guarded: a classifier or a bucket pick racing the
    delete then fails its own guarded save and takes back the filed item it wrote, and one
    that saved just before is swept below. A crash part way leaves the tombstone (no text),
    and deleting again finishes the job. Deleting what is gone is fine."""
    if not is_capture_id(capture_id):
        return
    repo = adapters.repo
    item = await repo.get(user_id, capture_id)
    for _ in range(_ATTEMPTS):
        if item is None:
            return
        if item.is_deleted:
            break
        try:
            item = await repo.save(item.tombstone())
            break
        except StaleItem:
            item = await repo.get(user_id, capture_id)
    else:
        raise Problem(409, "This capture keeps changing. Please try again.", code="CONFLICT")
    for bucket in Bucket:  # every bucket: a move interrupted earlier may have left one
        await repo.delete_filed(user_id, bucket, item.id)
    if item.audio_blob:
        await adapters.voice.delete(item.audio_blob)
    await repo.remove(user_id, item.id)


def parse_inbox_query(params: dict[str, str]) -> dict:
    """`?limit=1..100&status=<status>&continuationToken=...` (422 for anything else)."""
    query: dict = {"continuation_token": params.get("continuationToken") or None}
    limit = params.get("limit", "20")
    # ASCII digits only, and few: str.isdigit() also takes "²" and 5000-digit numbers, which
    # int() refuses with a ValueError.
    if (
        not (limit.isascii() and limit.isdigit() and len(limit) <= 3)
        or not 1 <= int(limit) <= MAX_PAGE
    ):
        raise Problem(422, f"limit must be a whole number from 1 to {MAX_PAGE}.")
    query["limit"] = int(limit)
    if "status" in params:
        if params["status"] not in LISTED_STATUSES:
            raise Problem(422, f"status must be one of: {', '.join(LISTED_STATUSES)}.")
        query["status"] = Status(params["status"])
    return query


def _encode(cursor: _Cursor) -> str:
    return base64.urlsafe_b64encode(cursor.model_dump_json().encode()).decode().rstrip("=")


def _decode(token: str) -> _Cursor:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        return _Cursor.model_validate(json.loads(raw))
    # RecursionError: a token that decodes to deeply nested JSON.
    except (binascii.Error, ValueError, ValidationError, UnicodeDecodeError, RecursionError) as exc:
        raise Problem(400, "The continuation token is not valid.", code="BAD_TOKEN") from exc
