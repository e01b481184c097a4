"""What the digest's services may rely on from the `PreferencesStore` and the `DigestLog`,
checked on both implementations: the fakes of tests/fakes.py (marked unit too) and the Cosmos
adapters on the local Cosmos server (containers Preferences and Digests, partitioned by user),
the timer's cross-partition query included."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from shared.domain.digest import DigestNote, DigestRecord, record_id
from shared.domain.errors import StaleItem
from shared.domain.ports import DigestLog, PreferencesStore
from shared.domain.preferences import Preferences
from shared.services.digest import NewPreferences, put_preferences
from tests.fakes import FakeDigestLog, FakePreferences, new_id

NOW = datetime(2026, 3, 29, 6, 30, tzinfo=UTC)


@pytest.fixture
async def stores(backend: Any) -> AsyncIterator[tuple[PreferencesStore, DigestLog]]:
    if backend is None:
        yield FakePreferences(), FakeDigestLog()
        return
    from shared import bootstrap
    from shared.adapters.digest_store import CosmosDigestLog, CosmosPreferences
    from shared.bootstrap import reset

    yield (
        CosmosPreferences(bootstrap.root().clients.cosmos_database()),
        CosmosDigestLog(bootstrap.root().clients.cosmos_database()),
    )
    await reset()


def prefs(user: str, at: str = "07:30", **changes: Any) -> Preferences:
    wanted = {"digest": True, "weekly_review_day": "sunday", "reminders": True, **changes}
    return Preferences.default(user).replaced_by(
        NOW - timedelta(minutes=30), time_zone="Europe/London", digest_at=at, **wanted
    )


async def test_preferences_are_created_once_and_replaced_under_their_etag(stores) -> None:
    store, _ = stores
    user = f"contract-{new_id()}"
    assert await store.get(user) is None
    saved = await store.save(prefs(user))
    assert saved.etag and saved.next_digest_at == NOW
    with pytest.raises(StaleItem):
        await store.save(prefs(user))  # a second create
    moved = await store.save(saved.model_copy(update={"next_digest_at": NOW + timedelta(days=1)}))
    assert moved.etag != saved.etag
    with pytest.raises(StaleItem):
        await store.save(saved.model_copy(update={"digest": False}))  # the old etag
    got = await store.get(user)
    assert got is not None and got.next_digest_at == NOW + timedelta(days=1)


async def test_preferences_put_at_once_all_store_and_the_last_one_stored_wins(stores) -> None:
    store, _ = stores
    user = f"contract-{new_id()}"
    times = [f"0{n}:{n}0" for n in range(6)] + [f"1{n}:0{n}" for n in range(6)]
    wanted = NewPreferences(
        time_zone="Europe/London",
        digest_at="07:30",
        digest=True,
        weekly_review_day="sunday",
        reminders=True,
    )
    # Twelve PUTs of one user's preferences at once, the first of them a create: each used to
    # read and replace under the ETag, and lost to the others until its attempts ran out.
    answers = await asyncio.gather(
        *(
            put_preferences(user, wanted.model_copy(update={"digest_at": t}), NOW, store)
            for t in times
        )
    )
    assert sorted(a.digest_at for a in answers) == sorted(times)
    assert all(a.etag for a in answers)
    stored = await store.get(user)
    assert stored is not None and stored.digest_at in times
    # What a GET reads is what one of the writers was told it stored, ETag and all.
    assert stored in answers


async def test_a_put_wins_over_a_digest_moving_its_next_time_on(stores) -> None:
    store, _ = stores
    user = f"contract-{new_id()}"
    read = await store.save(prefs(user))
    put = await store.replace(prefs(user, at="09:00"))
    with pytest.raises(StaleItem):  # the digest read before the PUT: its move-on loses
        await store.save(read.model_copy(update={"next_digest_at": NOW + timedelta(days=1)}))
    assert await store.get(user) == put


async def test_due_finds_every_user_whose_digest_time_passed_across_partitions(stores) -> None:
    store, _ = stores
    run = new_id()
    due = [f"due-{run}-{n}" for n in range(3)]
    for user in due:
        await store.save(prefs(user))
    await store.save(prefs(f"later-{run}", at="09:00"))
    await store.save(prefs(f"off-{run}", digest=False))
    found = [p.user_id async for p in store.due(NOW) if run in p.user_id]
    assert sorted(found) == sorted(due)
    assert [p async for p in store.due(NOW - timedelta(seconds=1)) if run in p.user_id] == []


async def test_a_digest_record_is_created_once_and_saved_under_its_etag(stores) -> None:
    _, log = stores
    user = f"contract-{new_id()}"
    day = date(2026, 3, 29)
    rid = record_id(user, day)
    assert await log.get(user, rid) is None
    record = DigestRecord(
        id=rid, user_id=user, date=day, note=DigestNote(title="Today: 1 due", body="b"),
        claimed_until=NOW,
    )  # fmt: skip
    first, created = await log.add(record)
    assert created and first.etag
    again, created = await log.add(record.model_copy(update={"note": None}))
    assert not created and again.etag == first.etag and again.note == record.note
    done = await log.save(first.model_copy(update={"done": True, "claimed_until": None}))
    assert done.done and done.etag != first.etag
    with pytest.raises(StaleItem):
        await log.save(first.model_copy(update={"claimed_until": NOW}))
    got = await log.get(user, rid)
    assert got is not None and got.done and got.date == day
