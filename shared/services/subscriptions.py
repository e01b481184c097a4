"""A user's push subscriptions over HTTP: the server's key to subscribe with, storing a browser's
subscription (one per device, idempotent by endpoint), removing one. The use case's input
(`NewSubscription`) and the answers clients read (`PushKey`, `SubscriptionView`) live here; the
request body's wire shape is shared/http/requests.py's."""

from __future__ import annotations

import logging
from typing import NoReturn

from pydantic import BaseModel, Field

from shared.domain.documents import Document, Timestamp, utcnow
from shared.domain.errors import Conflict, Invalid
from shared.domain.ports import PushAdapters, PushSubscriptions
from shared.domain.push import (
    MAX_SUBSCRIPTIONS,
    DeviceSlots,
    PushKeys,
    PushSubscription,
    is_subscription_id,
)
from shared.services.retry_stale import retry_stale

log = logging.getLogger(__name__)


class NewSubscription(BaseModel):
    """A browser's subscription to store: where its push service takes notifications for it,
    and the keys to encrypt them to (checked here, not by the request's shape alone)."""

    endpoint: str
    keys: PushKeys
    expiration_time: float | None = None


class PushKey(Document):
    """GET /api/push/key: what the browser passes to `pushManager.subscribe` as its
    `applicationServerKey`."""

    public_key: str = Field(
        description="The VAPID public key: the uncompressed P-256 point, base64url."
    )


class SubscriptionView(Document):
    """A stored subscription as its owner sees it (201 of POST /api/push/subscriptions)."""

    id: str
    endpoint: str
    expiration_time: float | None = None
    created_at: Timestamp

    @classmethod
    def of(cls, subscription: PushSubscription) -> SubscriptionView:
        return cls.model_validate(subscription.model_dump())


async def push_key(push: PushAdapters) -> PushKey:
    """NotConfigured when the deployment has no usable VAPID key pair."""
    return PushKey(public_key=await push.sender.application_server_key())


async def subscribe(user_id: str, new: NewSubscription, push: PushAdapters) -> PushSubscription:
    """Store the browser's subscription for `user_id`. The same endpoint again is the same
    subscription (with the browser's newest keys). Refused: a push service not on the
    allow-list, keys that are not keys, a user with MAX_SUBSCRIPTIONS devices already."""
    if not push.push_services.allows(new.endpoint):
        raise Invalid(
            "This is not the endpoint of a push service we send to.", "UNSUPPORTED_PUSH_SERVICE"
        )
    if not new.keys.usable():
        raise Invalid("keys.p256dh is not a P-256 public key.", "INVALID_PUSH_KEYS")
    await push.sender.application_server_key()  # push is set up, or 503 before storing
    wanted = PushSubscription.for_endpoint(user_id, new.endpoint, new.keys, new.expiration_time)
    store = push.subscriptions
    existing = await store.get(user_id, wanted.id)
    if existing is None:
        await _take_slot(user_id, wanted.id, store)
        existing, created = await store.add(wanted)
        if created:
            log.info("push subscription %s stored", existing.id)
    return await _renewed(existing, wanted, store)


async def _take_slot(user_id: str, subscription_id: str, store: PushSubscriptions) -> None:
    """A place among the user's MAX_SUBSCRIPTIONS for this device, or TOO_MANY_SUBSCRIPTIONS.
    The slots are one ETag-guarded document: of many devices subscribing at once, only as many
    as there are places get one."""

    async def take(_: None) -> None:
        slots = await store.slots(user_id)
        if slots is None:  # the first device, or the first since slots were counted this way
            held = {s.id for s in await store.for_user(user_id)}
            slots = DeviceSlots(user_id=user_id, taken=dict.fromkeys(held, utcnow()))
        if subscription_id in slots.taken:
            return
        if slots.full:
            stored = {s.id for s in await store.for_user(user_id)}
            slots = slots.freed(stored, utcnow())
            if slots.full:
                raise Conflict(
                    f"At most {MAX_SUBSCRIPTIONS} devices take notifications. Remove one first.",
                    "TOO_MANY_SUBSCRIPTIONS",
                )
        await store.save_slots(slots.holding(subscription_id))

    async def count_again() -> None:
        """Another device took a slot meanwhile: `take` reads them again."""

    def busy() -> NoReturn:
        raise Conflict("Too many devices are subscribing at once. Please try again.", "CONFLICT")

    await retry_stale(None, take, count_again, busy)


async def _renewed(
    existing: PushSubscription, wanted: PushSubscription, store: PushSubscriptions
) -> PushSubscription:
    """`existing` with the keys the browser sent now (it may renew them for an endpoint)."""

    async def renew(current: PushSubscription) -> PushSubscription:
        if (current.keys, current.expiration_time) == (wanted.keys, wanted.expiration_time):
            return current
        renewed = current.model_copy(
            update={"keys": wanted.keys, "expiration_time": wanted.expiration_time}
        )
        return await store.save(renewed)

    async def reread() -> PushSubscription:
        current = await store.get(existing.user_id, existing.id)
        if current is None:  # removed meanwhile: subscribing brings it back
            current, _ = await store.add(wanted)
        return current

    def busy() -> NoReturn:
        raise Conflict("This subscription keeps changing. Please try again.", "CONFLICT")

    return await retry_stale(existing, renew, reread, busy)


async def unsubscribe(user_id: str, subscription_id: str, store: PushSubscriptions) -> None:
    """Idempotent; only the caller's own subscriptions can be named (they are in its
    partition), and an id that is not one of ours names nothing."""
    if is_subscription_id(subscription_id):
        await store.remove(user_id, subscription_id)
