"""The push worker's use case: tell the user's devices about an outcome they did not see; and
the one delivery of a notification to every device of a user (`deliver`), which the digest
reuses.

One outcome message (captures-outcomes) is one notification. The worker stays silent when the
capture is gone, moved on, was shown live or was the user's own pick (push.silence_for). Each
device is sent the notification at most once: a duplicated message finds it in the
subscription's `sent`. Sending comes before recording, so a crash in between repeats a
notification rather than losing it (the Topic makes the push service replace one it has not
delivered yet).
"""

from __future__ import annotations

import asyncio
import logging

from shared import tracing
from shared.domain.errors import NotConfigured, StorageUnavailable
from shared.domain.messages import OutcomeMessage
from shared.domain.ports import CaptureRepository, PushAdapters, PushSubscriptions
from shared.domain.push import (
    MAX_SUBSCRIPTIONS,
    Delivery,
    PushSubscription,
    notification_for,
    notification_key,
    silence_for,
    topic_for,
)
from shared.domain.push_services import PushServices
from shared.services.retry_stale import retry_stale

log = logging.getLogger(__name__)


async def push_outcome(
    message: OutcomeMessage, repo: CaptureRepository, push: PushAdapters
) -> dict[str, Delivery | None]:
    """Push `message`'s outcome to each of the user's devices; what became of each (by
    subscription id; None: sent before). PushUnavailable (and StorageUnavailable) propagate, so
    the queue retries the message; the devices that got it are not sent it again."""
    tracing.annotate(capture_id=message.capture_id, user_id=message.user_id)
    subscriptions = await devices_of(message.user_id, push)
    if not subscriptions:
        return {}  # most users, and no need to read the capture
    item = await repo.get(message.user_id, message.capture_id)
    silence = silence_for(message, item)
    note = notification_for(item) if item is not None and silence is None else None
    if item is None or note is None:
        log.info("capture %s: no push (%s)", message.capture_id, silence)
        return {}
    deliveries = await deliver(
        subscriptions, notification_key(message), note.encoded(), topic_for(item.id), push
    )
    sent = sum(d is Delivery.DELIVERED for d in deliveries.values())
    log.info("capture %s: pushed to %d of %d devices", item.id, sent, len(subscriptions))
    return deliveries


async def devices_of(user_id: str, push: PushAdapters) -> list[PushSubscription]:
    """The user's devices a notification goes to: the oldest MAX_SUBSCRIPTIONS (a user's
    devices are capped by DeviceSlots, and one notification never becomes more pushes than
    that, whatever the store holds)."""
    found = await push.subscriptions.for_user(user_id)
    return sorted(found, key=lambda s: (s.created_at, s.id))[:MAX_SUBSCRIPTIONS]


async def deliver(
    subscriptions: list[PushSubscription],
    key: str,
    payload: bytes,
    topic: str,
    push: PushAdapters,
) -> dict[str, Delivery | None]:
    """Send one notification (`key`) to each device that has not had it yet; what became of
    each (by subscription id; None: sent before). A device that is gone is removed; one that
    took it records `key`. PushUnavailable and StorageUnavailable propagate (the caller's
    queue retries; the devices that got it are not sent it again); without VAPID keys nothing
    is sent (an empty answer)."""
    services = push.push_services
    results = await asyncio.gather(
        *(_push_to(s, key, payload, topic, services, push) for s in subscriptions),
        return_exceptions=True,
    )
    failures = [r for r in results if isinstance(r, BaseException)]
    if any(isinstance(f, NotConfigured) for f in failures):
        # No key to sign with: retrying cannot help, and the news stays in the app.
        log.warning("notification %s: push is not configured (VAPID keys); dropped", key)
        return {}
    if failures:
        raise failures[0]
    # All of them, as none failed.
    deliveries = [r for r in results if not isinstance(r, BaseException)]
    return dict(zip((s.id for s in subscriptions), deliveries, strict=True))


async def _push_to(
    subscription: PushSubscription,
    key: str,
    payload: bytes,
    topic: str,
    services: PushServices,
    push: PushAdapters,
) -> Delivery | None:
    if subscription.has_sent(key):
        return None  # a duplicated message: this device has it
    # Checked again at each send: the allow-list may have been narrowed since it was stored.
    if not services.allows(subscription.endpoint):
        log.warning(
            "push subscription %s: its push service is not allowed; skipped", subscription.id
        )
        return Delivery.REFUSED
    delivery = await push.sender.send(subscription, payload, topic)
    if delivery is Delivery.GONE:
        await push.subscriptions.remove(subscription.user_id, subscription.id)
        log.info("push subscription %s: gone at its push service; removed", subscription.id)
    elif delivery is Delivery.DELIVERED:
        await _remember(subscription, key, push.subscriptions)
    else:
        log.warning("push subscription %s: notification %s refused", subscription.id, key)
    return delivery


async def _remember(subscription: PushSubscription, key: str, store: PushSubscriptions) -> None:
    """Record `key` as sent to the device, ETag-guarded (two outcomes for one user may finish
    at once). Failing that, the notification is out anyway: at worst a redelivered message
    repeats it."""

    async def record(current: PushSubscription | None) -> bool:
        if current is None or current.has_sent(key):
            return True  # gone, or another delivery recorded it
        await store.save(current.with_sent(key))
        return True

    async def reread() -> PushSubscription | None:
        return await store.get(subscription.user_id, subscription.id)

    try:
        first: PushSubscription | None = subscription  # as a reread may find it: gone
        if await retry_stale(first, record, reread, busy=lambda: False):
            return
    except StorageUnavailable:
        pass
    log.warning("push subscription %s: could not record a notification as sent", subscription.id)
