"""The digest's documents in Cosmos DB: the users' preferences (container `Preferences`) and the
digests sent (container `Digests`), both partitioned by user. The timer's query is the one
cross-partition query of the app: `digest = true AND nextDigestAt <= now`, served by the
default range index, projected to the preferences themselves (a few hundred bytes each)."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import ValidationError

from shared.adapters.cosmos_documents import read_one, write_guarded
from shared.adapters.storage_errors import bounded
from shared.domain.digest import DigestRecord
from shared.domain.documents import utc_text
from shared.domain.errors import StaleItem
from shared.domain.preferences import PREFERENCES_ID, Preferences
from shared.settings import DIGESTS, PREFERENCES

if TYPE_CHECKING:
    from azure.cosmos.aio import DatabaseProxy

log = logging.getLogger(__name__)

_translated = functools.partial(bounded, "Cosmos", frozenset({408, 429, 449}))
# Users the timer's query reads per round trip.
DUE_PAGE = 1000


class CosmosPreferences:
    def __init__(self, database: DatabaseProxy) -> None:
        self._db = database

    @property
    def _container(self):
        return self._db.get_container_client(PREFERENCES)

    async def get(self, user_id: str) -> Preferences | None:
        doc = await read_one(self._container, PREFERENCES_ID, user_id)
        return Preferences.model_validate(doc) if doc else None

    async def save(self, preferences: Preferences) -> Preferences:
        saved = await write_guarded(self._container, preferences.to_json(), preferences.etag)
        return Preferences.model_validate(saved)

    async def replace(self, preferences: Preferences) -> Preferences:
        doc = preferences.to_json()
        doc.pop("_etag", None)
        async with _translated():
            saved = await self._container.upsert_item(doc)
        return Preferences.model_validate(saved)

    async def due(self, now: datetime) -> AsyncIterator[Preferences]:
        query = (
            "SELECT * FROM c WHERE c.digest = true AND IS_STRING(c.nextDigestAt) "
            "AND c.nextDigestAt <= @now"
        )
        pages = self._container.query_items(
            query,
            parameters=[{"name": "@now", "value": utc_text(now)}],
            max_item_count=DUE_PAGE,
        ).by_page()
        while True:
            async with _translated():
                page = await anext(pages, None)
                docs = [doc async for doc in page] if page is not None else None
            if docs is None:
                return
            for doc in docs:
                try:
                    yield Preferences.model_validate(doc)
                except ValidationError:
                    log.warning("preferences %r cannot be read; left out", doc.get("userId"))


class CosmosDigestLog:
    def __init__(self, database: DatabaseProxy) -> None:
        self._db = database

    @property
    def _container(self):
        return self._db.get_container_client(DIGESTS)

    async def get(self, user_id: str, record_id: str) -> DigestRecord | None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        async with _translated():
            try:
                doc = await self._container.read_item(record_id, partition_key=user_id)
            except CosmosResourceNotFoundError:
                return None
        return DigestRecord.model_validate(doc)

    async def add(self, record: DigestRecord) -> tuple[DigestRecord, bool]:
        from azure.cosmos.exceptions import CosmosResourceExistsError

        async with _translated():
            try:
                saved = await self._container.create_item(record.to_json())
                return DigestRecord.model_validate(saved), True
            except CosmosResourceExistsError:
                doc = await self._container.read_item(record.id, partition_key=record.user_id)
        return DigestRecord.model_validate(doc), False

    async def save(self, record: DigestRecord) -> DigestRecord:
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import (
            CosmosAccessConditionFailedError,
            CosmosResourceNotFoundError,
        )

        async with _translated():
            try:
                saved = await self._container.replace_item(
                    record.id,
                    record.to_json(),
                    etag=record.etag,
                    match_condition=MatchConditions.IfNotModified,
                )
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError) as exc:
                raise StaleItem(record.id) from exc
        return DigestRecord.model_validate(saved)
