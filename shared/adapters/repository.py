"""The capture repository: the inbox and the four bucket containers in Cosmos DB.

Services see `CaptureRepository` and domain models only; Cosmos and its errors stay here.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from pydantic import ValidationError

from shared.adapters.storage_errors import bounded
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.errors import StaleItem
from shared.domain.filed import FiledItem
from shared.settings import INBOX

# 449: Cosmos's "retry with" on conflicting writes. Every call is bounded in time.
log = logging.getLogger(__name__)

_translated = functools.partial(bounded, "Cosmos", frozenset({408, 429, 449}))

if TYPE_CHECKING:
    from azure.cosmos.aio import DatabaseProxy


class CosmosCaptureRepository:
    def __init__(self, database: DatabaseProxy) -> None:
        self._db = database

    def _container(self, name: str):
        return self._db.get_container_client(name)

    async def add(self, item: InboxItem) -> tuple[InboxItem, bool]:
        from azure.cosmos.exceptions import CosmosResourceExistsError

        async with _translated():
            try:
                saved = await self._container(INBOX).create_item(item.to_json())
                return InboxItem.model_validate(saved), True
            except CosmosResourceExistsError:
                existing = await self.get(item.user_id, item.id)
                if existing is None:  # deleted in between: try once more
                    saved = await self._container(INBOX).create_item(item.to_json())
                    return InboxItem.model_validate(saved), True
                return existing, False

    async def get(self, user_id: str, capture_id: str) -> InboxItem | None:
        doc = await self._read(INBOX, user_id, capture_id)
        return InboxItem.model_validate(doc) if doc else None

    async def save(self, item: InboxItem) -> InboxItem:
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import (
            CosmosAccessConditionFailedError,
            CosmosResourceNotFoundError,
        )

        async with _translated():
            try:
                saved = await self._container(INBOX).replace_item(
                    item.id,
                    item.to_json(),
                    etag=item.etag,
                    match_condition=MatchConditions.IfNotModified if item.etag else None,
                )
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError) as exc:
                raise StaleItem(item.id) from exc  # changed, or deleted, since it was read
        return InboxItem.model_validate(saved)

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
        while True:
            # One page at a time, each within the time limit; the caller's pace is its own.
            async with _translated():
                page = await anext(pages, None)
                docs = [doc async for doc in page] if page is not None else None
            if docs is None:
                return
            for item in _readable(docs):
                yield item

    async def on_thread(self, user_id: str, thread_id: str) -> list[InboxItem]:
        # One partition; a thread holds a handful of captures, so one bounded read of them all.
        query = "SELECT * FROM c WHERE c.userId = @user AND c.threadId = @thread"
        parameters: list[dict[str, object]] = [
            {"name": "@user", "value": user_id},
            {"name": "@thread", "value": thread_id},
        ]
        async with _translated():
            found = self._container(INBOX).query_items(
                query, parameters=parameters, partition_key=user_id
            )
            docs = [doc async for doc in found]
        return list(_readable(docs))

    async def remove(self, user_id: str, capture_id: str) -> None:
        await self._delete(INBOX, user_id, capture_id)

    async def put_filed(self, item: FiledItem) -> None:
        async with _translated():
            await self._container(item.bucket.value).upsert_item(item.to_json())

    async def delete_filed(self, user_id: str, bucket: Bucket, capture_id: str) -> None:
        await self._delete(bucket.value, user_id, capture_id)

    async def _delete(self, container: str, user_id: str, item_id: str) -> None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        async with _translated():
            with contextlib.suppress(CosmosResourceNotFoundError):
                await self._container(container).delete_item(item_id, partition_key=user_id)

    async def _read(self, container: str, user_id: str, item_id: str) -> dict | None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        async with _translated():
            try:
                return await self._container(container).read_item(item_id, partition_key=user_id)
            except CosmosResourceNotFoundError:
                return None


def _readable(docs: list[dict]) -> Iterator[InboxItem]:
    """The documents as inbox items, leaving out (and logging) any that cannot be read: one
    broken document must not take a whole inbox or thread down with it."""
    for doc in docs:
        try:
            yield InboxItem.model_validate(doc)
        except ValidationError:
            log.warning("inbox item %r cannot be read; left out", doc.get("id"))
