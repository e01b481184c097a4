"""The base of the Cosmos DB adapters: the database and the time bound they are given, Cosmos's
errors mapped once (StorageUnavailable, StaleItem), and a user's document read by id, deleted,
or written under its ETag. Cosmos and its errors stay in the adapters."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from shared.adapters.storage_errors import bounded
from shared.domain.errors import StaleItem
from shared.settings import STORAGE_TIMEOUT_S

if TYPE_CHECKING:
    from azure.cosmos.aio import ContainerProxy, DatabaseProxy

# A query's parameters, as the SDK takes them (never the values in the text).
Parameters = list[dict[str, object]]
# 449 is Cosmos's "retry with" on conflicting writes: worth retrying, like throttling.
_TRANSIENT = frozenset({408, 429, 449})


class CosmosStore:
    """What every Cosmos adapter shares. `timeout_s` bounds each call (STORAGE_TIMEOUT_S)."""

    def __init__(self, database: DatabaseProxy, *, timeout_s: float = STORAGE_TIMEOUT_S) -> None:
        self._db = database
        self._timeout_s = timeout_s

    def _container(self, name: str) -> ContainerProxy:
        return self._db.get_container_client(name)

    def _translated(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Transport failures, throttling and server errors as StorageUnavailable, within the
        time bound; other answers (404, 409, 412…) pass through for the caller."""
        return bounded("Cosmos", self._timeout_s, _TRANSIENT)

    async def _read(self, container: str, user_id: str, doc_id: str) -> dict | None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        async with self._translated():
            try:
                return await self._container(container).read_item(doc_id, partition_key=user_id)
            except CosmosResourceNotFoundError:
                return None

    async def _add(
        self, container: str, doc: dict, user_id: str, *, echo: bool = True
    ) -> tuple[dict, bool]:
        """Create `doc`, or find the one stored under its id (a retry, a duplicate delivery):
        the stored document, and whether this call created it. One removed in between is
        created once more. `echo=False`: one created is `doc` with the ETag the service
        answered, not read back (`_sent_as_stored`)."""
        from azure.cosmos.exceptions import CosmosResourceExistsError

        async with self._translated():
            items = self._container(container)
            try:
                created = await items.create_item(doc, no_response=not echo)
            except CosmosResourceExistsError:
                existing = await self._read(container, user_id, doc["id"])
                if existing is not None:
                    return existing, False
                created = await items.create_item(doc, no_response=not echo)
            return (created if echo else _sent_as_stored(doc, created)), True

    async def _delete(self, container: str, user_id: str, doc_id: str) -> None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        async with self._translated():
            with contextlib.suppress(CosmosResourceNotFoundError):
                await self._container(container).delete_item(doc_id, partition_key=user_id)

    async def _replace(
        self, container: str, doc: dict, etag: str | None, *, echo: bool = True
    ) -> dict:
        """Replace `doc` if its stored ETag is still `etag` (with no ETag: whatever is stored);
        StaleItem if it changed or is gone since it was read. `echo=False`: `doc` with the ETag
        the service answered, not read back (`_sent_as_stored`)."""
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import (
            CosmosAccessConditionFailedError,
            CosmosResourceNotFoundError,
        )

        async with self._translated():
            try:
                stored = await self._container(container).replace_item(
                    doc["id"],
                    doc,
                    etag=etag,
                    match_condition=MatchConditions.IfNotModified if etag else None,
                    no_response=not echo,
                )
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError) as exc:
                raise StaleItem(doc["id"]) from exc
            return stored if echo else _sent_as_stored(doc, stored)

    async def _put(self, container: str, doc: dict) -> None:
        """Create or replace `doc`, whatever is stored, and read nothing back."""
        async with self._translated():
            await self._container(container).upsert_item(doc, no_response=True)

    async def _write_guarded(self, container: str, doc: dict, etag: str | None) -> dict:
        """Create `doc` (no `etag`) or replace it under its ETag; StaleItem if someone created
        or changed it first."""
        if etag is not None:
            return await self._replace(container, doc, etag)
        from azure.cosmos.exceptions import CosmosResourceExistsError

        async with self._translated():
            try:
                return await self._container(container).create_item(doc)
            except CosmosResourceExistsError as exc:
                raise StaleItem(doc["id"]) from exc

    async def _query(
        self, container: str, user_id: str, query: str, parameters: Parameters
    ) -> list[dict]:
        """One partition's matches, read whole within the time bound."""
        async with self._translated():
            found = self._container(container).query_items(
                query, parameters=parameters, partition_key=user_id
            )
            # A page at a time: item by item, the pager's per-item machinery cost more than
            # the JSON itself on a query of thousands (the people list: 7 ms of its 40).
            docs: list[dict] = []
            async for page in found.by_page():
                docs.extend([doc async for doc in page])
            return docs

    async def _pages(self, pages: Any) -> AsyncIterator[list[dict]]:
        """A paged query's pages, each read within the time bound; the caller's pace is its
        own."""
        while True:
            async with self._translated():
                page = await anext(pages, None)
                docs = [doc async for doc in page] if page is not None else None
            if docs is None:
                return
            yield docs


def _sent_as_stored(doc: dict, answer: Any) -> dict:
    """A write asked not to echo its document (`no_response`: `Prefer: return=minimal`, so the
    service sends no body back and nothing is parsed on either side; the inbox item carries its
    vector): what was sent, with the ETag the service answered in its headers. Cosmos adds only
    its system fields to what it stores, and the models read none but the ETag."""
    return {**doc, "_etag": answer.get_response_headers()["etag"]}
