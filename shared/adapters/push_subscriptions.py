"""The push subscriptions in Cosmos DB: container `PushSubscriptions`, partitioned by user.

Services see `PushSubscriptions` and domain models only; Cosmos and its errors stay here.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import TYPE_CHECKING

from pydantic import ValidationError

from shared.adapters.cosmos_documents import read_one, write_guarded
from shared.adapters.storage_errors import bounded
from shared.domain.errors import StaleItem
from shared.domain.push import DEVICE_SLOTS_ID, DeviceSlots, PushSubscription
from shared.settings import PUSH_SUBSCRIPTIONS

if TYPE_CHECKING:
    from azure.cosmos.aio import DatabaseProxy

log = logging.getLogger(__name__)

# As the capture repository: 449 is Cosmos's "retry with"; every call is bounded in time.
_translated = functools.partial(bounded, "Cosmos", frozenset({408, 429, 449}))


class CosmosPushSubscriptions:
    def __init__(self, database: DatabaseProxy) -> None:
        self._db = database

    @property
    def _container(self):
        return self._db.get_container_client(PUSH_SUBSCRIPTIONS)

    async def add(self, subscription: PushSubscription) -> tuple[PushSubscription, bool]:
        from azure.cosmos.exceptions import CosmosResourceExistsError

        async with _translated():
            try:
                saved = await self._container.create_item(subscription.to_json())
                return PushSubscription.model_validate(saved), True
            except CosmosResourceExistsError:
                existing = await self._read(subscription.user_id, subscription.id)
        if existing is None:  # removed in between: try once more
            async with _translated():
                saved = await self._container.create_item(subscription.to_json())
            return PushSubscription.model_validate(saved), True
        return existing, False

    async def get(self, user_id: str, subscription_id: str) -> PushSubscription | None:
        async with _translated():
            return await self._read(user_id, subscription_id)

    async def for_user(self, user_id: str) -> list[PushSubscription]:
        # One partition, a handful of documents (MAX_SUBSCRIPTIONS): one bounded read.
        query = "SELECT * FROM c WHERE c.userId = @user"
        async with _translated():
            found = self._container.query_items(
                query, parameters=[{"name": "@user", "value": user_id}], partition_key=user_id
            )
            docs = [doc async for doc in found]
        return list(_readable(docs))

    async def save(self, subscription: PushSubscription) -> PushSubscription:
        from azure.core import MatchConditions
        from azure.cosmos.exceptions import (
            CosmosAccessConditionFailedError,
            CosmosResourceNotFoundError,
        )

        async with _translated():
            try:
                saved = await self._container.replace_item(
                    subscription.id,
                    subscription.to_json(),
                    etag=subscription.etag,
                    match_condition=MatchConditions.IfNotModified if subscription.etag else None,
                )
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError) as exc:
                raise StaleItem(subscription.id) from exc
        return PushSubscription.model_validate(saved)

    async def remove(self, user_id: str, subscription_id: str) -> None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        async with _translated():
            with contextlib.suppress(CosmosResourceNotFoundError):
                await self._container.delete_item(subscription_id, partition_key=user_id)

    async def slots(self, user_id: str) -> DeviceSlots | None:
        doc = await read_one(self._container, DEVICE_SLOTS_ID, user_id)
        return DeviceSlots.model_validate(doc) if doc else None

    async def save_slots(self, slots: DeviceSlots) -> DeviceSlots:
        saved = await write_guarded(self._container, slots.to_json(), slots.etag)
        return DeviceSlots.model_validate(saved)

    async def _read(self, user_id: str, subscription_id: str) -> PushSubscription | None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        try:
            doc = await self._container.read_item(subscription_id, partition_key=user_id)
        except CosmosResourceNotFoundError:
            return None
        return PushSubscription.model_validate(doc)


def _readable(docs: list[dict]) -> list[PushSubscription]:
    """One broken document must not stop the user's other devices being told."""
    readable = []
    for doc in docs:
        if doc.get("id") == DEVICE_SLOTS_ID:
            continue  # the user's slots, kept beside their subscriptions
        try:
            readable.append(PushSubscription.model_validate(doc))
        except ValidationError:
            log.warning("push subscription %r cannot be read; left out", doc.get("id"))
    return readable
