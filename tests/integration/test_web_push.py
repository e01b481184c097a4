"""The pywebpush adapter (shared/adapters/web_push.py) against the push-service stand-in of
tests/push_service.py, which verifies the VAPID JWT and decrypts the payload on its own: what
the device decrypts is what the user will read, signed by our key for the stand-in's origin; and
each answer of a push service becomes a Delivery or PushUnavailable."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest

from shared.adapters.vapid import generate_keys
from shared.adapters.web_push import JWT_LIFETIME_S, TTL_S, WebPushSender
from shared.domain.errors import NotConfigured, PushUnavailable
from shared.domain.push import (
    Delivery,
    NotificationPayload,
    PushKeys,
    PushSubscription,
    topic_for,
)
from shared.domain.push_services import PushServices
from tests.push_service import Device, PushServiceStandIn

CAPTURE_ID = "0b9a3c3e-5d7f-4c61-9d43-2a0f9e6b1c55"
NOTE = NotificationPayload(
    title="Filed → People",
    body="Call Sarah re budget",
    capture_id=CAPTURE_ID,
    outcome="CLASSIFIED",
    url=f"/#/captures/{CAPTURE_ID}",
)
TOPIC = topic_for(CAPTURE_ID)
KEYS = generate_keys()


@pytest.fixture
async def service() -> AsyncIterator[PushServiceStandIn]:
    async with PushServiceStandIn() as stand_in:
        yield stand_in


@pytest.fixture
async def sender(service: PushServiceStandIn) -> AsyncIterator[WebPushSender]:
    public, private = KEYS
    push = WebPushSender(
        public,
        private,
        "mailto:push@example.com",
        PushServices.parse(service.origin),
        timeout_s=2,
    )
    yield push
    await push.close()


def subscription_of(device: Device) -> PushSubscription:
    body = device.subscription()
    return PushSubscription.for_endpoint("dev", body["endpoint"], PushKeys(**body["keys"]))


async def test_the_device_decrypts_the_notification_signed_with_our_key(
    service: PushServiceStandIn, sender: WebPushSender
) -> None:
    phone = service.device()
    assert await sender.send(subscription_of(phone), NOTE.encoded(), TOPIC) is Delivery.DELIVERED
    assert service.rejected == []
    (got,) = service.received_by(phone)
    # What the service worker reads, decrypted with the device's own key and auth secret.
    assert got.payload == json.loads(NOTE.encoded())
    assert got.reads == "Filed → People · Call Sarah re budget"
    # Signed with our VAPID key, for this push service, for a while.
    assert got.vapid_key == KEYS[0] == await sender.application_server_key()
    assert got.claims["aud"] == service.origin
    assert got.claims["sub"] == "mailto:push@example.com"
    assert got.claims["exp"] <= time.time() + JWT_LIFETIME_S + 5
    assert got.headers == {
        "ttl": str(TTL_S),
        "urgency": "normal",
        "topic": TOPIC,
        "content-encoding": "aes128gcm",
    }


async def test_each_device_gets_its_own_encryption(
    service: PushServiceStandIn, sender: WebPushSender
) -> None:
    phone, laptop = service.device(), service.device()
    for device in (phone, laptop):
        await sender.send(subscription_of(device), NOTE.encoded(), TOPIC)
    assert [len(service.received_by(d)) for d in (phone, laptop)] == [1, 1]
    assert service.rejected == []


@pytest.mark.parametrize("status", [404, 410])
async def test_a_subscription_the_push_service_no_longer_knows_is_gone(
    service: PushServiceStandIn, sender: WebPushSender, status: int
) -> None:
    device = service.device(status=status)
    assert await sender.send(subscription_of(device), NOTE.encoded(), TOPIC) is Delivery.GONE
    assert service.answered(device) == [status] and service.received_by(device) == []


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_a_busy_or_broken_push_service_is_unavailable_for_now(
    service: PushServiceStandIn, sender: WebPushSender, status: int
) -> None:
    device = service.device(status=status)
    with pytest.raises(PushUnavailable, match=str(status)):
        await sender.send(subscription_of(device), NOTE.encoded(), TOPIC)


@pytest.mark.parametrize("status", [400, 403, 413])
async def test_a_refused_push_is_not_retried(
    service: PushServiceStandIn, sender: WebPushSender, status: int
) -> None:
    device = service.device(status=status)
    assert await sender.send(subscription_of(device), NOTE.encoded(), TOPIC) is Delivery.REFUSED


async def test_a_redirect_is_not_followed(
    service: PushServiceStandIn, sender: WebPushSender
) -> None:
    device = service.device()
    service.answer(device, 201, redirect_to=f"{service.origin}/elsewhere")
    assert await sender.send(subscription_of(device), NOTE.encoded(), TOPIC) is Delivery.REFUSED
    assert service.requests == 1 and service.rejected == []  # /elsewhere was never reached


async def test_no_answer_is_unavailable_for_now(
    service: PushServiceStandIn, sender: WebPushSender
) -> None:
    slow = service.device()
    service.answer(slow, 201, delay_s=5)  # longer than the sender's 2 s
    with pytest.raises(PushUnavailable):
        await sender.send(subscription_of(slow), NOTE.encoded(), TOPIC)
    gone_port = subscription_of(slow).model_copy(
        update={"endpoint": f"http://127.0.0.1:1/push/{slow.token}"}
    )
    sender_anywhere = WebPushSender(
        *KEYS, "mailto:push@example.com", PushServices.parse("http://127.0.0.1:1")
    )
    try:
        with pytest.raises(PushUnavailable):  # connection refused
            await sender_anywhere.send(gone_port, NOTE.encoded(), TOPIC)
    finally:
        await sender_anywhere.close()


async def test_an_endpoint_off_the_allow_list_gets_no_request(
    service: PushServiceStandIn, sender: WebPushSender
) -> None:
    device = service.device()
    elsewhere = subscription_of(device).model_copy(
        update={"endpoint": device.endpoint.replace("127.0.0.1", "localhost")}
    )
    assert await sender.send(elsewhere, NOTE.encoded(), TOPIC) is Delivery.REFUSED
    assert service.requests == 0


@pytest.mark.parametrize(
    ("public", "private", "subject"),
    [
        (None, KEYS[1], "mailto:push@example.com"),
        (KEYS[0], None, "mailto:push@example.com"),
        (KEYS[0], KEYS[1], None),
        (generate_keys()[0], KEYS[1], "mailto:push@example.com"),  # not one pair
        (KEYS[0], "not-a-key", "mailto:push@example.com"),
        (KEYS[0], "@Microsoft.KeyVault(SecretUri=https://kv/secrets/x)", "mailto:a@b.example"),
    ],
)
async def test_without_a_usable_key_pair_push_is_not_configured(
    service: PushServiceStandIn,
    public: str | None,
    private: str | None,
    subject: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    sender = WebPushSender(public, private, subject, PushServices.parse(service.origin))
    with pytest.raises(NotConfigured):
        await sender.application_server_key()
    with pytest.raises(NotConfigured):
        await sender.send(subscription_of(service.device()), NOTE.encoded(), TOPIC)
    assert service.requests == 0
    assert private is None or private not in caplog.text  # the reason, never the key


# The stand-in is as strict as a push service: otherwise the tests above would prove nothing.


async def post_signed(
    service: PushServiceStandIn, device: Device, claims: dict, *, tamper: bool = False
) -> int:
    """A push made with pywebpush's parts by hand, with the claims (or signature) given."""
    import aiohttp
    from py_vapid import Vapid
    from pywebpush import WebPusher

    headers = Vapid.from_string(KEYS[1]).sign(claims)
    if tamper:  # signed by another key, presented as ours
        forged = Vapid.from_string(generate_keys()[1]).sign(claims)["Authorization"]
        headers["Authorization"] = forged.split(",k=")[0] + f",k={KEYS[0]}"
    encoded = WebPusher(device.subscription()).encode(NOTE.encoded(), "aes128gcm")
    headers |= {"TTL": "60", "Content-Encoding": "aes128gcm"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(device.endpoint, data=encoded["body"], headers=headers) as response,
    ):
        return response.status


@pytest.mark.parametrize(
    ("claims", "tamper", "reason"),
    [
        ({"aud": "https://fcm.googleapis.com"}, False, "aud"),
        ({"exp": int(time.time()) + 2 * 86_400}, False, "exp"),
        ({"sub": "https://example.com"}, False, "sub"),
        ({}, True, "signature"),
    ],
)
async def test_the_stand_in_refuses_a_jwt_a_push_service_would_refuse(
    service: PushServiceStandIn, claims: dict, tamper: bool, reason: str
) -> None:
    device = service.device()
    good = {"aud": service.origin, "sub": "mailto:a@example.com", "exp": int(time.time()) + 60}
    assert await post_signed(service, device, good) == 201
    assert await post_signed(service, device, {**good, **claims}, tamper=tamper) == 401
    (rejected,) = service.rejected
    assert reason in rejected.reason and len(service.received_by(device)) == 1


async def test_the_stand_in_cannot_read_a_payload_encrypted_to_another_device(
    service: PushServiceStandIn, sender: WebPushSender
) -> None:
    device, other = service.device(), service.device()
    wrong_keys = subscription_of(device).model_copy(update={"keys": subscription_of(other).keys})
    assert await sender.send(wrong_keys, NOTE.encoded(), TOPIC) is Delivery.REFUSED
    (rejected,) = service.rejected
    assert "undecryptable" in rejected.reason and service.received == []
