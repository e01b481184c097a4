"""One user's captures: read one, page through them newest first, delete one. Another user's
capture is "not found", exactly like a capture that does not exist, so ids reveal nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from shared.domain.capture import InboxItem, Status
from shared.domain.documents import Document
from shared.domain.errors import Conflict, NotFound
from shared.domain.ids import is_capture_id
from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters, CaptureRepository
from shared.services import keyset
from shared.services.placement import converge
from shared.services.retry_stale import retry_stale

MAX_PAGE = 100


def not_found() -> NotFound:
    return NotFound("There is no such capture.")


async def get_capture(user_id: str, capture_id: str, repo: CaptureRepository) -> InboxItem:
    if not is_capture_id(capture_id):
        raise not_found()
    item = await repo.get(user_id, capture_id)
    if item is None or item.is_deleted:
        raise not_found()
    return item


@dataclass(frozen=True)
class InboxQuery:
    """Which page of the inbox: up to `limit` (1..MAX_PAGE) captures of one status (or any),
    from where `continuation_token` says the last page ended."""

    limit: int = 20
    status: Status | None = None
    continuation_token: str | None = None


class InboxPage(Document):
    """The answer to GET /api/inbox: one page of captures, newest first."""

    items: list[InboxItem]
    continuation_token: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "items": [item.to_json() for item in self.items],
            "continuationToken": self.continuation_token,
        }


async def list_inbox(user_id: str, query: InboxQuery, repo: CaptureRepository) -> InboxPage:
    """Newest first, by keyset on createdAt (never OFFSET): each page is one indexed query,
    and captures arriving meanwhile neither shift nor repeat items across pages."""
    limit = query.limit
    cursor = keyset.decode(query.continuation_token) if query.continuation_token else None
    items: list[InboxItem] = []
    more = False
    async for item in repo.newest(
        user_id,
        at_or_before=cursor.t if cursor else None,
        status=query.status,
        page_items=limit + 1,
    ):
        if cursor and cursor.sent(item):
            continue  # on the previous page (same instant, rare)
        if item.is_deleted:
            continue
        if len(items) == limit:
            more = True
            break
        items.append(item)
    token = keyset.encode(keyset.cursor_after(items, cursor)) if more else None
    return InboxPage(items=items, continuation_token=token)


async def delete_capture(user_id: str, capture_id: str, adapters: Adapters) -> None:
    """Tombstone the inbox item, then remove the filed items, the audio, and the inbox item.

    The delayed check goes out first, so that a removal cut short (a crash, a storage timeout)
    is finished when it comes due. The tombstone is ETag-guarded: a classifier or a bucket pick
    racing the delete then fails its own guarded save and converges to the tombstone, and one
    that saved just before is swept below. Deleting what is gone is fine."""
    if not is_capture_id(capture_id):
        return
    repo = adapters.repo
    item = await repo.get(user_id, capture_id)
    if item is None:
        return
    job = ClassifyJob(capture_id=capture_id, user_id=user_id)
    await adapters.outbox.send_check(job, adapters.policy.recovery_delay_s)

    async def tombstone(current: InboxItem | None) -> InboxItem | None:
        if current is None or current.is_deleted:
            return current
        return await repo.save(current.tombstoned())

    def busy() -> NoReturn:
        raise Conflict("This capture keeps changing. Please try again.", "CONFLICT")

    first: InboxItem | None = item  # as a reread may find it: gone
    tombstoned = await retry_stale(first, tombstone, lambda: repo.get(user_id, capture_id), busy)
    if tombstoned is not None:
        await finish_delete(tombstoned, adapters)


async def finish_delete(tombstone: InboxItem, adapters: Adapters) -> None:
    """Remove what a tombstoned capture leaves: every filed copy, its audio, then the tombstone
    itself, last, so that a removal cut short can be found and finished."""
    await converge(tombstone.user_id, tombstone.id, adapters.repo, known=tombstone)
    if tombstone.audio_blob:
        await adapters.voice.delete(tombstone.audio_blob, tombstone.audio_container)
        if tombstone.audio_container is not None:
            # Its upload too, should a move have been cut short before deleting it.
            await adapters.voice.delete(tombstone.audio_blob)
    await adapters.repo.remove(tombstone.user_id, tombstone.id)
