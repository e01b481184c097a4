"""The capture repository: the inbox and the four bucket containers in Cosmos DB.

Services see `CaptureRepository` and domain models only; Cosmos and its errors stay here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator

from pydantic import ValidationError

from shared.adapters.cosmos_documents import CosmosStore
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.filed import FILED_MODELS, FiledItem
from shared.domain.ports import KNOWN_FROM_LATEST
from shared.settings import INBOX

log = logging.getLogger(__name__)


class CosmosCaptureRepository(CosmosStore):
    async def add(self, item: InboxItem) -> tuple[InboxItem, bool]:
        saved, created = await self._add(INBOX, item.stored_json(), item.user_id, echo=False)
        if created:
            # What was sent is what is stored: only its ETag is new.
            return item.model_copy(update={"etag": saved["_etag"]}), True
        return InboxItem.model_validate(saved), False

    async def get(self, user_id: str, capture_id: str) -> InboxItem | None:
        doc = await self._read(INBOX, user_id, capture_id)
        return InboxItem.model_validate(doc) if doc else None

    async def save(self, item: InboxItem) -> InboxItem:
        # StaleItem: changed, or deleted, since it was read. What is stored is what was sent:
        # only its new ETag is read, and the document is not echoed back (validating the whole
        # document again, with its vector, cost a capture 0.2 ms on its way to RUN_FINISHED).
        stored = await self._replace(INBOX, item.stored_json(), item.etag, echo=False)
        return item.model_copy(update={"etag": stored["_etag"]})

    async def newest(
        self,
        user_id: str,
        *,
        at_or_before: str | None,
        status: Status | None,
        page_items: int = 100,
    ) -> AsyncIterator[InboxItem]:
        # One partition, one ORDER BY on a single path: served by the default index, with
        # no OFFSET (the caller pages by keyset on createdAt).
        where = ["c.userId = @user"]
        parameters: list[dict[str, object]] = [{"name": "@user", "value": user_id}]
        if at_or_before is not None:
            where.append("c.createdAt <= @before")
            parameters.append({"name": "@before", "value": at_or_before})
        if status is not None:
            where.append("c.status = @status")
            parameters.append({"name": "@status", "value": status.value})
        query = f"SELECT * FROM c WHERE {' AND '.join(where)} ORDER BY c.createdAt DESC"
        # Pages of a bounded size: a caller reading the whole inbox (the export) holds one page
        # at a time, however many captures there are (unbounded, the local server answers
        # them all in one page).
        pages = (
            self._container(INBOX)
            .query_items(
                query, parameters=parameters, partition_key=user_id, max_item_count=page_items
            )
            .by_page()
        )
        async for docs in self._pages(pages):
            for item in _readable(docs):
                yield item

    async def on_thread(self, user_id: str, thread_id: str) -> list[InboxItem]:
        # One partition; a thread holds a handful of captures, so one bounded read of them all.
        query = "SELECT * FROM c WHERE c.userId = @user AND c.threadId = @thread"
        parameters: list[dict[str, object]] = [
            {"name": "@user", "value": user_id},
            {"name": "@thread", "value": thread_id},
        ]
        return list(_readable(await self._query(INBOX, user_id, query, parameters)))

    async def remove(self, user_id: str, capture_id: str) -> None:
        await self._delete(INBOX, user_id, capture_id)

    async def put_filed(self, item: FiledItem) -> None:
        await self._put(item.bucket.value, item.to_json())

    async def get_filed(self, user_id: str, bucket: Bucket, capture_id: str) -> FiledItem | None:
        doc = await self._read(bucket.value, user_id, capture_id)
        return FILED_MODELS[bucket].model_validate(doc) if doc else None

    async def delete_filed(self, user_id: str, bucket: Bucket, capture_id: str) -> None:
        await self._delete(bucket.value, user_id, capture_id)

    async def known_people(self, user_id: str) -> frozenset[str]:
        # One field of the newest items that hold any, in the user's partition of each bucket,
        # the four at once (a filed item written before `peopleKnown` existed has none); one
        # ORDER BY path and TOP, which the local server takes too.
        query = (
            f"SELECT TOP {KNOWN_FROM_LATEST} c.peopleKnown FROM c"
            " WHERE c.userId = @user AND ARRAY_LENGTH(c.peopleKnown) > 0"
            " ORDER BY c.createdAt DESC"
        )
        parameters: list[dict[str, object]] = [{"name": "@user", "value": user_id}]
        per_bucket = await asyncio.gather(
            *(self._query(bucket.value, user_id, query, parameters) for bucket in Bucket)
        )
        return frozenset(
            str(name)
            for docs in per_bucket
            for doc in docs
            if isinstance(doc.get("peopleKnown"), list)
            for name in doc["peopleKnown"]
        )


def _readable(docs: list[dict]) -> Iterator[InboxItem]:
    """The documents as inbox items, leaving out (and logging) any that cannot be read: one
    broken document must not take a whole inbox or thread down with it."""
    for doc in docs:
        try:
            yield InboxItem.model_validate(doc)
        except ValidationError:
            log.warning("inbox item %r cannot be read; left out", doc.get("id"))
