"""The four bucket containers read back (pages, a person's items, the people named) and a filed
item edited under its ETag, in Cosmos DB. Every query stays in the caller's partition and uses
only what both Cosmos DB and the local server take (one ORDER BY path, TOP, ARRAY_CONTAINS)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections.abc import AsyncIterator, Iterator
from datetime import datetime

from pydantic import ValidationError

from shared.adapters.cosmos_documents import CosmosStore, Parameters
from shared.domain.classification import Bucket
from shared.domain.filed import FiledItem, filed_model
from shared.domain.ports import FiledFilter, Mention

log = logging.getLogger(__name__)

# What `every` reads per round trip: a page of documents, never the whole bucket.
EXPORT_PAGE = 200


class CosmosFiledItems(CosmosStore):
    async def get(self, user_id: str, bucket: Bucket, capture_id: str) -> FiledItem | None:
        doc = await self._read(bucket.value, user_id, capture_id)
        return filed_model(doc) if doc else None

    async def replace(self, item: FiledItem) -> FiledItem:
        return filed_model(await self._replace(item.bucket.value, item.to_json(), item.etag))

    async def page(
        self, user_id: str, bucket: Bucket, where: FiledFilter, *, after: str | None, limit: int
    ) -> list[FiledItem]:
        query, parameters = _top_query(
            user_id, where, limit, "c.listOrder ASC", past=("c.listOrder > @after", after)
        )
        return list(_readable(await self._query(bucket.value, user_id, query, parameters)))

    async def newest_mentioning(
        self, user_id: str, person_key: str, limit: int, at_or_before: str | None = None
    ) -> list[FiledItem]:
        query, parameters = _top_query(
            user_id,
            FiledFilter(person_key=person_key),
            limit,
            "c.createdAt DESC",
            past=("c.createdAt <= @before", at_or_before),
        )
        # The four containers at once: the answer waits for the slowest, not for their sum.
        found = await asyncio.gather(
            *(self._query(bucket.value, user_id, query, parameters) for bucket in Bucket)
        )
        # Merged on the stored createdAt (ISO 8601 in UTC, which sorts as the store sorts it),
        # and only the newest `limit` read into models: the rest were never going to be shown.
        newest = heapq.merge(*found, key=lambda doc: doc.get("createdAt") or "", reverse=True)
        return list(_readable(list(itertools.islice(newest, limit))))

    async def mentions(self, user_id: str) -> list[Mention]:
        # Only the three fields: a people list over thousands of items reads no texts.
        query = (
            "SELECT c.people, c.createdAt, c.done FROM c "
            "WHERE c.userId = @user AND ARRAY_LENGTH(c.people) > 0"
        )
        parameters: Parameters = [{"name": "@user", "value": user_id}]
        found: list[Mention] = []
        per_bucket = await asyncio.gather(
            *(self._query(bucket.value, user_id, query, parameters) for bucket in Bucket)
        )
        for bucket, docs in zip(Bucket, per_bucket, strict=True):
            for doc in docs:
                try:
                    found.append(
                        Mention(
                            people=[str(p) for p in doc["people"]],
                            created_at=datetime.fromisoformat(doc["createdAt"]),
                            done=bool(doc.get("done", False)),
                        )
                    )
                except (KeyError, TypeError, ValueError):
                    log.warning("a filed item in %s cannot be read; left out", bucket.value)
        return found

    async def version(self, user_id: str) -> str | None:
        # Per bucket, how many items and the latest write (_ts, whole seconds): a write raises
        # the latest, a removal lowers the count. A write in the latest second may be followed
        # by another in that second, unseen: no version until that second is over.
        query = "SELECT COUNT(1) AS n, MAX(c._ts) AS t FROM c WHERE c.userId = @user"
        parameters: Parameters = [{"name": "@user", "value": user_id}]
        per_bucket = await asyncio.gather(
            *(self._query(bucket.value, user_id, query, parameters) for bucket in Bucket)
        )
        marks = []
        for docs in per_bucket:
            row = docs[0] if docs else {}
            count, latest = int(row.get("n") or 0), int(row.get("t") or 0)
            if latest >= int(time.time()) - 1:
                return None
            marks.append(f"{count}:{latest}")
        return "|".join(marks)

    async def every(self, user_id: str, bucket: Bucket) -> AsyncIterator[FiledItem]:
        after: str | None = None
        while True:
            page = await self.page(user_id, bucket, FiledFilter(), after=after, limit=EXPORT_PAGE)
            for item in page:
                yield item
            if len(page) < EXPORT_PAGE:
                return
            after = page[-1].list_order


def filter_clauses(user_id: str, where: FiledFilter) -> tuple[list[str], Parameters]:
    """The WHERE clauses of a filter, and their parameters (never the values in the text)."""
    clauses = ["c.userId = @user"]
    parameters: Parameters = [{"name": "@user", "value": user_id}]
    if where.person_key is not None:
        clauses.append("ARRAY_CONTAINS(c.peopleKeys, @person)")
        parameters.append({"name": "@person", "value": where.person_key})
    if where.done is not None:
        clauses.append("c.done = @done")
        parameters.append({"name": "@done", "value": where.done})
    if where.due_before is not None:
        # Dates are stored as YYYY-MM-DD strings, which sort as the days do; null is no string.
        clauses.append("IS_STRING(c.dueDate) AND c.dueDate < @due")
        parameters.append({"name": "@due", "value": where.due_before.isoformat()})
    return clauses, parameters


def _top_query(
    user_id: str, where: FiledFilter, limit: int, order_by: str, *, past: tuple[str, str | None]
) -> tuple[str, Parameters]:
    """The first `limit` documents matching `where` in `order_by`'s order, and the query's
    parameters; `past` is a keyset clause on one parameter (`c.listOrder > @after`) and that
    parameter's value, the clause left out when the value is None."""
    clauses, parameters = filter_clauses(user_id, where)
    clause, value = past
    if value is not None:
        clauses.append(clause)
        parameters.append({"name": clause.rsplit(" ", 1)[-1], "value": value})
    query = f"SELECT TOP {int(limit)} * FROM c WHERE {' AND '.join(clauses)} ORDER BY {order_by}"
    return query, parameters


def _readable(docs: list[dict]) -> Iterator[FiledItem]:
    """One broken document is left out (and logged), not a whole page with it."""
    for doc in docs:
        try:
            yield filed_model(doc)
        except (ValidationError, ValueError):
            log.warning("filed item %r cannot be read; left out", doc.get("id"))
