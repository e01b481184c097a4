"""The digest's documents in Cosmos DB: the users' preferences (container `Preferences`) and the
digests sent (container `Digests`), both partitioned by user. The timer's query is the one
cross-partition query of the app: `digest = true AND nextDigestAt <= now`, served by the
default range index, projected to the preferences themselves (a few hundred bytes each)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import datetime

from pydantic import ValidationError

from shared.adapters.cosmos_documents import CosmosStore
from shared.domain.digest import DigestRecord
from shared.domain.documents import utc_text
from shared.domain.preferences import PREFERENCES_ID, Preferences
from shared.settings import DIGESTS, PREFERENCES

log = logging.getLogger(__name__)

# Users the timer's query reads per round trip.
DUE_PAGE = 1000


class CosmosPreferences(CosmosStore):
    async def get(self, user_id: str) -> Preferences | None:
        doc = await self._read(PREFERENCES, user_id, PREFERENCES_ID)
        return Preferences.model_validate(doc) if doc else None

    async def save(self, preferences: Preferences) -> Preferences:
        saved = await self._write_guarded(PREFERENCES, preferences.to_json(), preferences.etag)
        return Preferences.model_validate(saved)

    async def replace(self, preferences: Preferences) -> Preferences:
        doc = preferences.to_json()
        doc.pop("_etag", None)
        async with self._translated():
            saved = await self._container(PREFERENCES).upsert_item(doc)
        return Preferences.model_validate(saved)

    async def due(self, now: datetime) -> AsyncIterator[Preferences]:
        query = (
            "SELECT * FROM c WHERE c.digest = true AND IS_STRING(c.nextDigestAt) "
            "AND c.nextDigestAt <= @now"
        )
        pages = (
            self._container(PREFERENCES)
            .query_items(
                query,
                parameters=[{"name": "@now", "value": utc_text(now)}],
                max_item_count=DUE_PAGE,
            )
            .by_page()
        )
        async for docs in self._pages(pages):
            for doc in docs:
                try:
                    yield Preferences.model_validate(doc)
                except ValidationError:
                    log.warning("preferences %r cannot be read; left out", doc.get("userId"))


class CosmosDigestLog(CosmosStore):
    async def get(self, user_id: str, record_id: str) -> DigestRecord | None:
        doc = await self._read(DIGESTS, user_id, record_id)
        return DigestRecord.model_validate(doc) if doc else None

    async def add(self, record: DigestRecord) -> tuple[DigestRecord, bool]:
        saved, created = await self._add(DIGESTS, record.to_json(), record.user_id)
        return DigestRecord.model_validate(saved), created

    async def save(self, record: DigestRecord) -> DigestRecord:
        return DigestRecord.model_validate(
            await self._replace(DIGESTS, record.to_json(), record.etag)
        )
