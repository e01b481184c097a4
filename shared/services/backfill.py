"""The embeddings backfill: a user's captures stored before they had vectors (or while the
model was down, or by an older model) embedded a page at a time, each page one queue message
that sends the next. Started by running the `embeddings_backfill` queue function with
`{"userId": …}` (the host's admin endpoint, docs/deploy.md).

A message delivered twice acts once: a page's captures already current are skipped (no model
call, no write), so a second delivery embeds nothing again; it may send the next page's
message again, whose pages are then found current in turn (reads only). Resumable: the
continuation is in the message, so a crash mid-page redelivers it, and what the first attempt
saved is skipped."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from shared.domain.capture import InboxItem
from shared.domain.documents import utc_text
from shared.domain.errors import StaleItem
from shared.domain.messages import BackfillJob
from shared.domain.ports import BackfillQueue, CaptureRepository, Embedder
from shared.services.embedding import embed_all, with_embedding

log = logging.getLogger(__name__)

# Captures a message: one model call (Azure OpenAI takes 2048 inputs; MiniLM batches of 32)
# and as many writes, well inside a queue message's visibility timeout.
PAGE = 100


@dataclass(frozen=True)
class BackfillPage:
    """What one message did: captures embedded and saved, those already current, and the next
    page's job (None: the user's captures are done)."""

    embedded: int
    current: int
    next: BackfillJob | None


async def backfill_page(
    job: BackfillJob,
    repo: CaptureRepository,
    embedder: Embedder,
    queue: BackfillQueue,
    *,
    page_size: int = PAGE,
) -> BackfillPage:
    """Embed one page of `job`'s user's captures (newest first, from its continuation) and send
    the next page's job. EmbedderUnavailable and StorageUnavailable propagate: the queue
    delivers the message again later, and its poison queue keeps it after its last try."""
    page, more = await _page(job, repo, page_size)
    live = [i for i in page if not i.is_deleted]
    done = await embed_all(live, embedder)
    saved = 0
    for item in done:
        saved += await _save(item, repo, embedder)
    following = None
    if more:
        following = _next(job, page)
        await queue.enqueue_backfill(following)
    log.info(
        "embeddings backfill for a user: %d embedded, %d current, %s",
        saved, len(live) - len(done), "more to come" if more else "done",
    )  # fmt: skip
    return BackfillPage(embedded=saved, current=len(live) - len(done), next=following)


async def _page(
    job: BackfillJob, repo: CaptureRepository, page_size: int
) -> tuple[list[InboxItem], bool]:
    """Up to `page_size` captures from the continuation on (those of its instant already done
    left out), and whether there are more."""
    found: list[InboxItem] = []
    pages = repo.newest(
        job.user_id,
        at_or_before=job.continuation,
        status=None,
        page_items=page_size + len(job.seen) + 1,
    )
    async for item in pages:
        if utc_text(item.created_at) == job.continuation and item.id in job.seen:
            continue
        found.append(item)
        if len(found) > page_size:
            break
    return found[:page_size], len(found) > page_size


def _next(job: BackfillJob, page: list[InboxItem]) -> BackfillJob:
    """The job of the page after `page`: from its last instant, with the ids of that instant
    done (those of earlier pages at the same instant too)."""
    edge = utc_text(page[-1].created_at)
    seen = [i.id for i in page if utc_text(i.created_at) == edge]
    if edge == job.continuation:
        seen = [*job.seen, *seen]
    return BackfillJob(user_id=job.user_id, continuation=edge, seen=seen)


async def _save(item: InboxItem, repo: CaptureRepository, embedder: Embedder) -> int:
    """Save `item` with its new vector, ETag-guarded: if someone saved it meanwhile, their
    version is embedded instead (once; a writer changing it still embeds its own words)."""
    try:
        await repo.save(item)
        return 1
    except StaleItem:
        current = await repo.get(item.user_id, item.id)
    if current is None or current.is_deleted:
        return 0
    renewed = await with_embedding(current, embedder)
    if renewed is current:
        return 0
    try:
        await repo.save(renewed)
        return 1
    except StaleItem:
        return 0
