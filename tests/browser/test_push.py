"""Notifications in the capture app, in headless Chromium, against a devhost whose push service
is the stand-in of tests/push_service.py on loopback (PUSH_SERVICE_ORIGINS lists it).

Headless Chromium cannot reach a real push service here (no internet, no vendor account), so
one thing in the browser is replaced: the browser's registration with its vendor's push
service. An init script (`pushDouble` in drive.mjs) answers PushManager.subscribe and
getSubscription with a subscription whose endpoint is a device on the stand-in and whose keys
are that device's, a P-256 key pair and auth secret made by this test. It is the boundary
double for the browser vendor's push service, as tests/push_service.py is for the server's
side. The rest is real: the app asks for the browser's permission (granted to the context, as
a person's tap on Allow would) and subscribes with the API's VAPID key; it posts the
subscription; the API's worker files a capture after the user left, and the push worker sends
an encrypted, VAPID-signed push, which the stand-in verifies and decrypts with the device's
key. That payload is then handed to the app's own service worker through the DevTools
protocol (`ServiceWorker.deliverPushMessage`), as the browser does once it has decrypted a
push, and the notification it shows is read back with `registration.getNotifications()`.
An OS notification cannot be tapped headlessly: the test opens the notification's
`data.url`, which is what the service worker's notificationclick opens
(`clients.openWindow`) when no window of the app is open.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest

from testkit import fake_openai
from testkit.support import DEV_KEYS, running_devhost
from testkit.support import KEY as OTHER_KEY
from tests.push_service import Device, PushServiceStandIn, b64url

USER = "browser-pusher"  # this module's own user: subscriptions outlive a module
KEY = "browser-push-key"
OTHER = OTHER_KEY["X-API-Key"]  # the browser tests' usual user


@pytest.fixture(scope="module")
def push_service() -> Iterator[PushServiceStandIn]:
    with PushServiceStandIn() as service:
        yield service


@pytest.fixture(scope="module")
def host(
    scripted_env: dict[str, str],
    app_origin: str,
    push_service: PushServiceStandIn,
    cosmos,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """This module's devhost: the browser tests' one, plus a user of its own and the stand-in
    push service."""
    container = cosmos.get_container_client("PushSubscriptions")
    for old in container.query_items(
        "SELECT c.id FROM c WHERE c.userId = @user",
        parameters=[{"name": "@user", "value": USER}],
        enable_cross_partition_query=True,
    ):
        container.delete_item(old["id"], partition_key=USER)
    env = {
        **scripted_env,
        "API_KEYS": f"{DEV_KEYS},{USER}:{hashlib.sha256(KEY.encode()).hexdigest()}",
        "PUSH_SERVICE_ORIGINS": push_service.origin,
        "PUSH_DELAY_S": "1",
    }
    with running_devhost(env, tmp_path_factory.mktemp("browser-push"), cors=app_origin) as url:
        yield url


def as_browser(device: Device) -> dict[str, str]:
    """What drive.mjs's push double subscribes with: the device's endpoint and keys."""
    return {
        "PUSH_ENDPOINT": device.endpoint,
        "PUSH_P256DH": device.p256dh,
        "PUSH_AUTH": b64url(device.auth),
    }


def subscriptions(cosmos) -> list[dict]:
    """The user's subscriptions (not the device-slots document kept beside them)."""
    found = cosmos.get_container_client("PushSubscriptions").query_items(
        "SELECT * FROM c WHERE c.userId = @user",
        parameters=[{"name": "@user", "value": USER}],
        enable_cross_partition_query=True,
    )
    return [doc for doc in found if "endpoint" in doc]


def test_notifications_are_offered_turned_on_shown_opened_and_turned_off(
    browser, fake, push_service: PushServiceStandIn, cosmos, vapid_keys, app_origin: str
) -> None:
    device = push_service.device()
    # The model is down for the run and the worker's first two tries; the third files it.
    fake.enqueue(*[fake_openai.http_error(503)] * 3)
    fake.set_default(fake_openai.classification("People", 0.92, "Call Sarah re budget"))
    seen = browser(
        "push",
        API_KEY=KEY,
        CAPTURE_TEXT="Call Sarah about the budget review",
        **as_browser(device),
    )
    # Not on first load; offered with the queued capture; the browser asked only on the tap.
    assert seen["offeredOnFirstLoad"] == 0
    assert seen["offer"] == "Get a notification when it's filed?"
    assert seen["callsBeforeTap"] == []
    assert seen["calls"] == ["ask (tap)", "subscribe"]
    assert seen["turnedOn"] == "Notifications are on. You can turn them off in Settings."
    assert seen["subscribedWith"] == vapid_keys[0]

    # The API pushed the outcome the user did not watch; the stand-in decrypted it.
    capture_id = seen["captureId"]
    (push,) = [r for r in push_service.received_by(device) if r.payload["captureId"] == capture_id]
    assert push.reads == "Filed → People · Call Sarah re budget"
    assert seen["pushed"] == push.payload

    # The service worker showed it, keyed by the capture, linking to it.
    url = f"{app_origin}/#/captures/{capture_id}"
    assert seen["notifications"] == [
        {
            "title": "Filed → People",
            "body": "Call Sarah re budget",
            "tag": capture_id,
            "icon": f"{app_origin}/icons/icon-192.png",
            "data": {"url": url},
        }
    ]
    assert seen["generic"]["title"] == "Second brain"
    assert seen["generic"]["data"] == {"url": f"{app_origin}/"}
    assert (seen["openedTitle"], seen["openedBucket"]) == ("Call Sarah re budget", "People")

    # A subscription made with another key is replaced on start, with the API's.
    assert seen["afterRotation"] == ["unsubscribe", "subscribe"]
    assert seen["resubscribedWith"] == vapid_keys[0]

    # Off in Settings: the API forgot the device before the browser did.
    assert seen["switchOn"] is True
    assert seen["settingsOn"].startswith("On:")
    assert seen["settingsOff"] == "Off."
    assert seen["callsAfterOff"][-1] == "unsubscribe"
    assert subscriptions(cosmos) == []


def test_not_now_is_remembered_and_nothing_is_asked(
    browser, fake, push_service: PushServiceStandIn
) -> None:
    fake.set_default(fake_openai.classification("Admin", 0.9, "Buy stamps"))
    seen = browser("notNow", API_KEY=KEY, **as_browser(push_service.device()))
    assert seen["notNow"] == "Not now. You can turn notifications on in Settings."  # focused
    assert seen["offersAfterNotNow"] == 0
    assert seen["offersOnTheNext"] == 0
    assert seen["offersAfterReload"] == 0
    assert seen["calls"] == []


def test_another_key_signs_the_device_out(
    browser, push_service: PushServiceStandIn, cosmos
) -> None:
    device = push_service.device()
    seen = browser("signOut", API_KEY=KEY, OTHER_API_KEY=OTHER, **as_browser(device))
    assert seen["calls"] == ["ask (tap)", "subscribe"]
    assert seen["afterChange"] == (
        "Notifications were turned off: the address or key changed. "
        "Turn them on again for this account."
    )
    assert seen["switchAfterChange"] is False
    assert seen["callsAfterChange"][-1] == "unsubscribe"
    assert subscriptions(cosmos) == []  # deleted with the old key, which owned it


def test_blocked_notifications_are_said_so_and_never_offered(
    browser, fake, push_service: PushServiceStandIn
) -> None:
    fake.set_default(fake_openai.classification("Admin", 0.9, "Post the parcel"))
    seen = browser("blocked", API_KEY=KEY, **as_browser(push_service.device()))
    assert seen["offers"] == 0
    assert seen["status"] == (
        "Blocked by the browser: allow notifications for this site in the browser's settings."
    )
    assert seen["switchDisabled"] is True
    assert seen["calls"] == []
