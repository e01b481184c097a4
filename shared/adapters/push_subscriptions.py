"""The push subscriptions in Cosmos DB: container `PushSubscriptions`, partitioned by user.

Services see `PushSubscriptions` and domain models only; Cosmos and its errors stay here.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from shared.adapters.cosmos_documents import CosmosStore
from shared.domain.push import DEVICE_SLOTS_ID, DeviceSlots, PushSubscription
from shared.settings import PUSH_SUBSCRIPTIONS

log = logging.getLogger(__name__)


class CosmosPushSubscriptions(CosmosStore):
    async def add(self, subscription: PushSubscription) -> tuple[PushSubscription, bool]:
        doc = subscription.to_json()
        saved, created = await self._add(PUSH_SUBSCRIPTIONS, doc, subscription.user_id)
        return PushSubscription.model_validate(saved), created

    async def get(self, user_id: str, subscription_id: str) -> PushSubscription | None:
        doc = await self._read(PUSH_SUBSCRIPTIONS, user_id, subscription_id)
        return PushSubscription.model_validate(doc) if doc else None

    async def for_user(self, user_id: str) -> list[PushSubscription]:
        # One partition, a handful of documents (MAX_SUBSCRIPTIONS): one bounded read.
        query = "SELECT * FROM c WHERE c.userId = @user"
        parameters: list[dict[str, object]] = [{"name": "@user", "value": user_id}]
        docs = await self._query(PUSH_SUBSCRIPTIONS, user_id, query, parameters)
        return list(_readable(docs))

    async def save(self, subscription: PushSubscription) -> PushSubscription:
        saved = await self._replace(PUSH_SUBSCRIPTIONS, subscription.to_json(), subscription.etag)
        return PushSubscription.model_validate(saved)

    async def remove(self, user_id: str, subscription_id: str) -> None:
        await self._delete(PUSH_SUBSCRIPTIONS, user_id, subscription_id)

    async def slots(self, user_id: str) -> DeviceSlots | None:
        doc = await self._read(PUSH_SUBSCRIPTIONS, user_id, DEVICE_SLOTS_ID)
        return DeviceSlots.model_validate(doc) if doc else None

    async def save_slots(self, slots: DeviceSlots) -> DeviceSlots:
        saved = await self._write_guarded(PUSH_SUBSCRIPTIONS, slots.to_json(), slots.etag)
        return DeviceSlots.model_validate(saved)


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
