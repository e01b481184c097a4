"""One document of a user's in Cosmos DB, read by id or written under its ETag: created when it
has no ETag yet, replaced only if unchanged since it was read. Cosmos and its errors stay here."""

from __future__ import annotations

import functools
from typing import Any

from shared.adapters.storage_errors import bounded
from shared.domain.errors import StaleItem

# As the capture repository: 449 is Cosmos's "retry with"; every call is bounded in time.
_translated = functools.partial(bounded, "Cosmos", frozenset({408, 429, 449}))


async def read_one(container: Any, doc_id: str, user_id: str) -> dict | None:
    from azure.cosmos.exceptions import CosmosResourceNotFoundError

    async with _translated():
        try:
            return await container.read_item(doc_id, partition_key=user_id)
        except CosmosResourceNotFoundError:
            return None


async def write_guarded(container: Any, doc: dict, etag: str | None) -> dict:
    """Create `doc` (no `etag`) or replace it if its stored ETag is still `etag`; StaleItem if
    someone created or changed it first."""
    from azure.core import MatchConditions
    from azure.cosmos.exceptions import (
        CosmosAccessConditionFailedError,
        CosmosResourceExistsError,
        CosmosResourceNotFoundError,
    )

    async with _translated():
        try:
            if etag is None:
                return await container.create_item(doc)
            return await container.replace_item(
                doc["id"], doc, etag=etag, match_condition=MatchConditions.IfNotModified
            )
        except (
            CosmosAccessConditionFailedError,
            CosmosResourceExistsError,
            CosmosResourceNotFoundError,
        ) as exc:
            raise StaleItem(doc["id"]) from exc
