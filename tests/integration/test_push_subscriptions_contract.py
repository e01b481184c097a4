"""What the services may rely on from a `PushSubscriptions` store, checked on both
implementations: the fake of tests/fakes.py (marked unit too) and `CosmosPushSubscriptions` on
the local Cosmos server (container PushSubscriptions, partitioned by user)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from shared.domain.errors import StaleItem
from shared.domain.ports import PushSubscriptions
from shared.domain.push import PushKeys, PushSubscription, subscription_id
from tests.fakes import FakePushSubscriptions, new_id


@pytest.fixture
async def store(backend: Any) -> AsyncIterator[PushSubscriptions]:
    if backend is None:
        yield FakePushSubscriptions()
        return
    from shared import bootstrap
    from shared.adapters.push_subscriptions import CosmosPushSubscriptions
    from shared.bootstrap import reset

    yield CosmosPushSubscriptions(bootstrap.root().clients.cosmos_database())
    await reset()


@pytest.fixture
def user() -> str:
    return f"contract-{new_id()}"


def a_subscription(user: str, endpoint: str | None = None) -> PushSubscription:
    endpoint = endpoint or f"https://fcm.googleapis.com/fcm/send/{new_id()}"
    return PushSubscription(
        id=subscription_id(endpoint),
        user_id=user,
        endpoint=endpoint,
        keys=PushKeys(p256dh="B" + "A" * 86, auth="A" * 22),
    )


def same(a: PushSubscription, b: PushSubscription) -> bool:
    return a.to_json() == b.to_json()


async def test_add_stores_a_new_subscription_and_again_returns_the_first(store, user) -> None:
    first = a_subscription(user)
    stored, created = await store.add(first)
    assert created and stored.etag and same(stored, first)
    renewed = first.model_copy(update={"keys": PushKeys(p256dh="B" + "B" * 86, auth="B" * 22)})
    again, created = await store.add(renewed)
    assert not created and again.etag == stored.etag and same(again, first)
    got = await store.get(user, first.id)
    assert got is not None and same(got, first)


async def test_a_user_sees_their_own_subscriptions_only(store, user) -> None:
    endpoint = f"https://fcm.googleapis.com/fcm/send/{new_id()}"
    mine = [a_subscription(user, endpoint), a_subscription(user)]
    theirs = a_subscription(f"{user}-other", endpoint)  # the same browser under another user
    for s in (*mine, theirs):
        await store.add(s)
    assert sorted(s.id for s in await store.for_user(user)) == sorted(s.id for s in mine)
    assert [s.user_id for s in await store.for_user(theirs.user_id)] == [theirs.user_id]
    assert await store.for_user(f"{user}-nobody") == []
    assert await store.get(f"{user}-nobody", mine[0].id) is None


async def test_save_is_guarded_by_the_etag(store, user) -> None:
    stored, _ = await store.add(a_subscription(user))
    saved = await store.save(stored.with_sent("c1@t1"))
    assert saved.sent == ["c1@t1"] and saved.etag != stored.etag
    with pytest.raises(StaleItem):
        await store.save(stored.with_sent("c2@t2"))  # read before the save above
    got = await store.get(user, stored.id)
    assert got is not None and got.sent == ["c1@t1"]
    await store.remove(user, stored.id)
    with pytest.raises(StaleItem):
        await store.save(saved.with_sent("c3@t3"))  # removed since it was read


async def test_remove_is_idempotent_and_within_the_users_partition(store, user) -> None:
    endpoint = f"https://fcm.googleapis.com/fcm/send/{new_id()}"
    mine, _ = await store.add(a_subscription(user, endpoint))
    theirs, _ = await store.add(a_subscription(f"{user}-other", endpoint))
    await store.remove(user, mine.id)
    await store.remove(user, mine.id)
    assert await store.get(user, mine.id) is None
    assert await store.get(theirs.user_id, theirs.id) is not None


async def test_slots_are_created_once_and_replaced_only_unchanged(store, user) -> None:
    from shared.domain.push import DeviceSlots

    assert await store.slots(user) is None
    first = await store.save_slots(DeviceSlots(user_id=user).holding("a" * 32))
    assert first.etag and list(first.taken) == ["a" * 32]
    with pytest.raises(StaleItem):  # someone else created them first
        await store.save_slots(DeviceSlots(user_id=user).holding("b" * 32))
    second = await store.save_slots(first.holding("b" * 32))
    assert set(second.taken) == {"a" * 32, "b" * 32} and second.etag != first.etag
    with pytest.raises(StaleItem):  # saved from the first version, which is gone
        await store.save_slots(first.holding("c" * 32))
    got = await store.slots(user)
    assert got is not None and set(got.taken) == {"a" * 32, "b" * 32}
    # The slots live beside the subscriptions but are none of them.
    await store.add(a_subscription(user))
    assert len(await store.for_user(user)) == 1
