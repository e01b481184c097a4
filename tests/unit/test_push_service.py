"""Web Push on the fakes: subscriptions (the allow-list, idempotent by endpoint, the caller's
own only) and the push worker (when it stays silent, one notification per device however often
a message comes, a gone subscription removed, a busy push service retried by the queue)."""

from __future__ import annotations

import asyncio

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.errors import (
    Conflict,
    Invalid,
    NotConfigured,
    PushUnavailable,
    StorageUnavailable,
)
from shared.domain.messages import OutcomeMessage
from shared.domain.outcomes import FailureCode
from shared.domain.push import MAX_SUBSCRIPTIONS, Delivery, PushKeys, b64url
from shared.services.bucket_pick import pick_bucket
from shared.services.filing import fail, file_capture
from shared.services.outbox import mark_seen_live
from shared.services.push import push_outcome
from shared.services.subscriptions import NewSubscription, push_key, subscribe, unsubscribe
from tests.fakes import USER, Fakes, guess, new_id, text_item

FCM = "https://fcm.googleapis.com/fcm/send/"


def device(endpoint: str | None = None) -> NewSubscription:
    """A browser's subscription, with a key pair of its own."""
    public = ec.generate_private_key(ec.SECP256R1()).public_key()
    point = public.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return NewSubscription(
        endpoint=endpoint or f"{FCM}{new_id()}",
        keys=PushKeys(p256dh=b64url(point), auth=b64url(b"sixteen byte key")),
    )


# -- subscriptions -----------------------------------------------------------------------------


async def test_a_subscription_is_stored_for_the_caller_and_again_is_the_same(fakes: Fakes) -> None:
    phone = device()
    first = await subscribe(USER, phone, fakes.push)
    again = await subscribe(USER, phone, fakes.push)
    assert again == first and first.user_id == USER and first.endpoint == phone.endpoint
    laptop = await subscribe(USER, device(), fakes.push)
    assert laptop.id != first.id
    assert sorted(s.id for s in fakes.subscriptions.all()) == sorted([first.id, laptop.id])


async def test_renewed_keys_for_the_same_endpoint_replace_the_old_ones(fakes: Fakes) -> None:
    endpoint = f"{FCM}{new_id()}"
    first = await subscribe(USER, device(endpoint), fakes.push)
    renewed = device(endpoint)
    second = await subscribe(USER, renewed, fakes.push)
    assert second.id == first.id and second.keys.p256dh == renewed.keys.p256dh
    assert len(fakes.subscriptions.all()) == 1


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://attacker.example/collect",
        "http://fcm.googleapis.com/fcm/send/x",
        "http://127.0.0.1:8080/push/x",
        "https://169.254.169.254/metadata",
    ],
)
async def test_an_endpoint_off_the_allow_list_is_refused_and_nothing_stored(
    fakes: Fakes, endpoint: str
) -> None:
    with pytest.raises(Invalid) as refused:
        await subscribe(USER, device(endpoint), fakes.push)
    assert refused.value.code == "UNSUPPORTED_PUSH_SERVICE"
    assert fakes.subscriptions.calls == [] and fakes.sender.attempts == []


async def test_a_listed_loopback_stand_in_is_accepted(fakes: Fakes, unit_settings) -> None:
    unit_settings(PUSH_SERVICE_ORIGINS="http://127.0.0.1:8123")
    stored = await subscribe(USER, device("http://127.0.0.1:8123/push/a"), fakes.push)
    assert stored.endpoint == "http://127.0.0.1:8123/push/a"
    with pytest.raises(Invalid):
        await subscribe(USER, device(f"{FCM}x"), fakes.push)  # the default list is replaced


async def test_keys_that_are_not_a_point_on_the_curve_are_refused(fakes: Fakes) -> None:
    request = device()
    request.keys.p256dh = "B" + "A" * 86
    with pytest.raises(Invalid) as refused:
        await subscribe(USER, request, fakes.push)
    assert refused.value.code == "INVALID_PUSH_KEYS"


async def test_without_vapid_keys_nothing_is_stored_and_the_key_is_not_configured(
    fakes: Fakes,
) -> None:
    fakes.sender.configured = False
    with pytest.raises(NotConfigured):
        await subscribe(USER, device(), fakes.push)
    with pytest.raises(NotConfigured):
        await push_key(fakes.push)
    assert fakes.subscriptions.all() == []
    fakes.sender.configured = True
    assert (await push_key(fakes.push)).public_key == fakes.sender.PUBLIC_KEY


async def test_a_user_has_at_most_so_many_devices(fakes: Fakes) -> None:
    for _ in range(MAX_SUBSCRIPTIONS):
        await subscribe(USER, device(), fakes.push)
    with pytest.raises(Conflict) as refused:
        await subscribe(USER, device(), fakes.push)
    assert refused.value.code == "TOO_MANY_SUBSCRIPTIONS"


async def test_the_cap_holds_when_many_devices_subscribe_at_once(fakes: Fakes) -> None:
    many = [device() for _ in range(3 * MAX_SUBSCRIPTIONS)]
    answers = await asyncio.gather(
        *(subscribe(USER, d, fakes.push) for d in many), return_exceptions=True
    )
    stored = [a for a in answers if not isinstance(a, BaseException)]
    refused = {a.code for a in answers if isinstance(a, Conflict)}
    # Each round of a race has one winner: some lose every round and are told to retry.
    assert 0 < len(stored) == len(fakes.subscriptions.all()) <= MAX_SUBSCRIPTIONS
    assert refused <= {"TOO_MANY_SUBSCRIPTIONS", "CONFLICT"} and refused


async def test_a_removed_device_gives_its_slot_back(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from shared.domain import push

    monkeypatch.setattr(push, "SLOT_GRACE", timedelta(0))  # no subscription is half stored
    phones = [await subscribe(USER, device(), fakes.push) for _ in range(MAX_SUBSCRIPTIONS)]
    await unsubscribe(USER, phones[0].id, fakes.subscriptions)
    assert await subscribe(USER, device(), fakes.push)  # the freed slot, past its grace
    with pytest.raises(Conflict):
        await subscribe(USER, device(), fakes.push)


async def test_devices_stored_before_slots_were_counted_count(fakes: Fakes) -> None:
    from shared.domain.push import PushSubscription

    for _ in range(MAX_SUBSCRIPTIONS):
        phone = device()
        fakes.subscriptions.seed(PushSubscription.for_endpoint(USER, phone.endpoint, phone.keys))
    with pytest.raises(Conflict):
        await subscribe(USER, device(), fakes.push)
    first = fakes.subscriptions.all()[0]
    again = await subscribe(USER, device(first.endpoint), fakes.push)  # a known one still is
    assert again.id == first.id


async def test_unsubscribing_removes_the_callers_own_only_and_is_idempotent(
    fakes: Fakes,
) -> None:
    endpoint = f"{FCM}{new_id()}"
    mine = await subscribe(USER, device(endpoint), fakes.push)
    theirs = await subscribe("other", device(endpoint), fakes.push)
    assert mine.id == theirs.id  # the same browser under two users: two documents
    await unsubscribe("other", mine.id, fakes.subscriptions)
    assert fakes.subscriptions.stored(USER, mine.id) is not None
    assert fakes.subscriptions.stored("other", mine.id) is None
    await unsubscribe("other", mine.id, fakes.subscriptions)  # again: nothing to do
    calls = len(fakes.subscriptions.calls)
    await unsubscribe(USER, "not-an-id", fakes.subscriptions)
    assert len(fakes.subscriptions.calls) == calls  # no storage call for what is not an id


# -- the push worker ---------------------------------------------------------------------------


async def outcome_of(fakes: Fakes, settled: InboxItem) -> OutcomeMessage:
    """The message filing published for the settled (or failed) version `settled`."""
    await fakes.drain()
    message = fakes.queues.outcomes[-1]
    assert message.capture_id == settled.id and message.settled_at == settled.updated_at
    return message


async def filed(fakes: Fakes, bucket: Bucket = Bucket.PEOPLE) -> tuple[InboxItem, OutcomeMessage]:
    item = fakes.repo.seed(text_item("Call Sarah about the budget review"))
    settled = await file_capture(
        item, item.classified(guess(bucket, 0.92, "Call Sarah re budget")), fakes.repo, fakes.outbox
    )
    return settled, await outcome_of(fakes, settled)


async def devices(fakes: Fakes, count: int = 2) -> list[str]:
    return [(await subscribe(USER, device(), fakes.push)).endpoint for _ in range(count)]


async def test_an_outcome_nobody_saw_is_pushed_once_to_each_device(fakes: Fakes) -> None:
    phone, laptop = await devices(fakes)
    item, message = await filed(fakes)
    deliveries = await push_outcome(message, fakes.repo, fakes.push)
    assert set(deliveries.values()) == {Delivery.DELIVERED}
    for endpoint in (phone, laptop):
        (push,) = fakes.sender.pushes_to(endpoint)
        assert push.payload == {
            "title": "Filed → People",
            "body": "Call Sarah re budget",
            "captureId": item.id,
            "outcome": "CLASSIFIED",
            "url": f"/#/captures/{item.id}",
        }
        assert len(push.topic) <= 32
    # Each device remembers it, so the same message again sends nothing.
    assert all(len(s.sent) == 1 for s in fakes.subscriptions.all())


async def test_a_duplicated_message_sends_one_notification_per_device(fakes: Fakes) -> None:
    await devices(fakes)
    _, message = await filed(fakes)
    await push_outcome(message, fakes.repo, fakes.push)
    again = await push_outcome(message, fakes.repo, fakes.push)
    assert set(again.values()) == {None}
    assert len(fakes.sender.pushes) == 2


async def test_two_deliveries_at_once_record_both_and_a_third_sends_nothing(fakes: Fakes) -> None:
    (phone,) = await devices(fakes, 1)
    _, first = await filed(fakes)
    _, second = await filed(fakes, Bucket.IDEAS)
    await asyncio.gather(
        push_outcome(first, fakes.repo, fakes.push), push_outcome(second, fakes.repo, fakes.push)
    )
    (subscription,) = fakes.subscriptions.all()
    assert len(subscription.sent) == 2  # both recorded: the one that lost the race retried
    assert fakes.subscriptions.calls.count("save") == 3
    await push_outcome(first, fakes.repo, fakes.push)
    assert len(fakes.sender.pushes_to(phone)) == 2


async def test_a_failure_is_pushed_with_its_message(fakes: Fakes) -> None:
    await devices(fakes, 1)
    item = fakes.repo.seed(text_item(status=Status.QUEUED))
    failed = await fail(item, FailureCode.CLASSIFY_FAILED, fakes.repo, fakes.outbox)
    await push_outcome(await outcome_of(fakes, failed), fakes.repo, fakes.push)
    (push,) = fakes.sender.pushes
    assert push.payload["outcome"] == "FAILED"
    assert push.payload["body"] == FailureCode.CLASSIFY_FAILED.message


async def test_an_outcome_shown_live_is_not_pushed(fakes: Fakes) -> None:
    await devices(fakes)
    item, message = await filed(fakes)
    await mark_seen_live(item, fakes.repo)
    assert await push_outcome(message, fakes.repo, fakes.push) == {}
    assert fakes.sender.attempts == []


async def test_a_capture_deleted_or_gone_is_not_pushed(fakes: Fakes) -> None:
    await devices(fakes)
    item, message = await filed(fakes)
    fakes.repo.seed(item.tombstoned())
    assert await push_outcome(message, fakes.repo, fakes.push) == {}
    await fakes.repo.remove(USER, item.id)
    assert await push_outcome(message, fakes.repo, fakes.push) == {}
    assert fakes.sender.attempts == []


async def test_an_outcome_the_capture_moved_on_from_is_not_pushed(fakes: Fakes) -> None:
    await devices(fakes)
    item, message = await filed(fakes)
    fakes.repo.seed(item.picked(Bucket.ADMIN, "Budget"))  # a newer version: its own message
    assert await push_outcome(message, fakes.repo, fakes.push) == {}
    assert fakes.sender.attempts == []


async def test_the_users_own_bucket_pick_is_not_pushed(fakes: Fakes) -> None:
    await devices(fakes)
    item, _ = await filed(fakes, Bucket.IDEAS)
    picked = await pick_bucket(USER, item.id, Bucket.ADMIN, fakes.adapters)
    message = await outcome_of(fakes, picked)
    assert message.chosen_by == "user"
    assert await push_outcome(message, fakes.repo, fakes.push) == {}
    assert fakes.sender.attempts == []


async def test_a_user_without_devices_costs_one_read(fakes: Fakes) -> None:
    _, message = await filed(fakes)
    calls = len(fakes.repo.calls)
    assert await push_outcome(message, fakes.repo, fakes.push) == {}
    assert fakes.subscriptions.calls == ["for_user"] and len(fakes.repo.calls) == calls


async def test_a_gone_subscription_is_removed_and_the_others_still_pushed(fakes: Fakes) -> None:
    phone, laptop = await devices(fakes)
    fakes.sender.answer(phone, Delivery.GONE)  # the push service said 404 or 410
    _, message = await filed(fakes)
    deliveries = await push_outcome(message, fakes.repo, fakes.push)
    assert sorted(deliveries.values()) == sorted([Delivery.GONE, Delivery.DELIVERED])
    assert [s.endpoint for s in fakes.subscriptions.all()] == [laptop]
    assert len(fakes.sender.pushes_to(laptop)) == 1


async def test_a_busy_push_service_raises_for_the_queue_and_the_retry_sends_only_the_rest(
    fakes: Fakes,
) -> None:
    phone, laptop = await devices(fakes)
    fakes.sender.answer(phone, PushUnavailable("429"))
    _, message = await filed(fakes)
    with pytest.raises(PushUnavailable):
        await push_outcome(message, fakes.repo, fakes.push)
    assert len(fakes.sender.pushes_to(laptop)) == 1  # delivered, and remembered
    fakes.sender.answer(phone, Delivery.DELIVERED)
    retry = await push_outcome(message, fakes.repo, fakes.push)  # the queue's redelivery
    assert sorted(retry.values(), key=str) == sorted([Delivery.DELIVERED, None], key=str)
    assert len(fakes.sender.pushes_to(phone)) == len(fakes.sender.pushes_to(laptop)) == 1


async def test_a_refused_notification_is_neither_retried_nor_removed(fakes: Fakes) -> None:
    (phone,) = await devices(fakes, 1)
    fakes.sender.answer(phone, Delivery.REFUSED)
    _, message = await filed(fakes)
    assert await push_outcome(message, fakes.repo, fakes.push) != {}
    assert len(fakes.subscriptions.all()) == 1 and fakes.subscriptions.all()[0].sent == []


async def test_an_endpoint_no_longer_allowed_is_not_sent_to(fakes: Fakes, unit_settings) -> None:
    (phone,) = await devices(fakes, 1)
    _, message = await filed(fakes)
    unit_settings(PUSH_SERVICE_ORIGINS="https://updates.push.services.mozilla.com")
    deliveries = await push_outcome(message, fakes.repo, fakes.push)
    assert list(deliveries.values()) == [Delivery.REFUSED]
    assert fakes.sender.attempts == []
    assert [s.endpoint for s in fakes.subscriptions.all()] == [phone]  # kept: a setting changes


async def test_without_vapid_keys_the_message_is_dropped_not_retried(fakes: Fakes) -> None:
    await devices(fakes, 1)
    _, message = await filed(fakes)
    fakes.sender.configured = False
    assert await push_outcome(message, fakes.repo, fakes.push) == {}


async def test_storage_down_raises_for_the_queue(fakes: Fakes) -> None:
    await devices(fakes, 1)
    _, message = await filed(fakes)
    fakes.subscriptions.fail_next("for_user", StorageUnavailable("down"))
    with pytest.raises(StorageUnavailable):
        await push_outcome(message, fakes.repo, fakes.push)
    # Recording what was sent is best effort: the notification is out either way.
    fakes.subscriptions.fail_next("save", StorageUnavailable("down"))
    deliveries = await push_outcome(message, fakes.repo, fakes.push)
    assert list(deliveries.values()) == [Delivery.DELIVERED]
