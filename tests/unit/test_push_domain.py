"""Web Push in the domain: the push-service allow-list, subscription keys and ids, the
notification each outcome becomes, and the rules under which the push worker stays silent."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.errors import IllegalTransition
from shared.domain.messages import OutcomeMessage
from shared.domain.outcomes import FailureCode, Outcome
from shared.domain.push import (
    MAX_BODY_CHARS,
    MAX_TITLE_CHARS,
    SENT_KEPT,
    PushKeys,
    PushSubscription,
    Silence,
    b64url,
    b64url_decode,
    is_p256_point,
    is_subscription_id,
    notification_for,
    notification_key,
    silence_for,
    subscription_id,
    topic_for,
)
from shared.domain.push_services import DEFAULT_PUSH_SERVICE_ORIGINS, PushServices
from tests.fakes import guess, text_item

# -- the allow-list ----------------------------------------------------------------------------

DEFAULTS = PushServices.parse(",".join(DEFAULT_PUSH_SERVICE_ORIGINS))


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://fcm.googleapis.com/fcm/send/dpH5lCsTSSM:APA91bHq",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABk",
        "https://web.push.apple.com/QGuQyavXutnMH2E",
        "https://wns2-db5p.notify.windows.com/w/?token=BQYAAAD%2b",
        "HTTPS://FCM.GOOGLEAPIS.COM/fcm/send/x",  # scheme and host are case-insensitive
        "https://fcm.googleapis.com:443/fcm/send/x",
    ],
)
def test_the_real_push_services_are_allowed_by_default(endpoint: str) -> None:
    assert DEFAULTS.allows(endpoint)


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://example.com/push",
        "http://fcm.googleapis.com/fcm/send/x",  # https only
        "https://fcm.googleapis.com:8443/fcm/send/x",  # another port is another origin
        "https://push.apple.com/x",  # a wildcard allows hosts under it, not itself
        "https://evilpush.apple.com.example/x",
        "https://fcm.googleapis.com.evil.example/x",
        "https://user@fcm.googleapis.com/x",  # user info: parsers disagree on such URLs
        "https://fcm.googleapis.com\\@evil.example/",
        "https://fcm.googleapis.com /x",
        "https://evil.example/?u=https://fcm.googleapis.com",
        "http://127.0.0.1:9000/push/x",  # loopback only when listed
        "https://fcm.googleapis.com:99999/x",
        "fcm.googleapis.com/fcm/send/x",
        "",
    ],
)
def test_anything_else_is_refused(endpoint: str) -> None:
    assert not DEFAULTS.allows(endpoint)


def test_a_loopback_stand_in_is_allowed_over_http_when_listed_with_its_port() -> None:
    services = PushServices.parse(" http://127.0.0.1:8123 ,https://fcm.googleapis.com")
    assert services.allows("http://127.0.0.1:8123/push/abc")
    assert not services.allows("http://127.0.0.1:8124/push/abc")
    assert not services.allows("http://localhost:8123/push/abc")  # another host name
    assert services.allows("https://fcm.googleapis.com/fcm/send/x")
    assert PushServices.parse("http://[::1]:8123").allows("http://[::1]:8123/push/abc")
    assert PushServices.parse("http://localhost:8123").allows("http://localhost:8123/p")


@pytest.mark.parametrize(
    "setting",
    [
        "http://push.example.com",  # plain http leaves the machine
        "http://*.localhost",
        "https://push.example.com/path",
        "https://push.example.com?x=1",
        "ftp://push.example.com",
        "push.example.com",
        "https://*.",
        "https://bad_host.example",
    ],
)
def test_a_setting_that_is_not_a_list_of_origins_is_refused(setting: str) -> None:
    with pytest.raises(ValueError):
        PushServices.parse(setting)


def test_an_empty_setting_allows_nothing() -> None:
    assert PushServices.parse(" , ").origins == ()
    assert not PushServices.parse("").allows("https://fcm.googleapis.com/x")


# -- subscriptions -----------------------------------------------------------------------------


def browser_keys() -> dict[str, str]:
    public = ec.generate_private_key(ec.SECP256R1()).public_key()
    point = public.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return {"p256dh": b64url(point), "auth": b64url(b"0123456789abcdef")}


def test_a_browsers_key_is_a_point_on_p256_and_anything_else_is_not() -> None:
    keys = browser_keys()
    point = b64url_decode(keys["p256dh"])
    assert point is not None and is_p256_point(point)
    assert not is_p256_point(point[:-1] + bytes([point[-1] ^ 1]))  # off the curve
    assert not is_p256_point(b"\x02" + point[1:33])  # compressed
    assert not is_p256_point(b"\x04" + b"\xff" * 64)  # coordinates outside the field
    assert PushKeys.model_validate(keys).usable()
    shaped_only = {**keys, "p256dh": "B" + "A" * 86}  # the right shape, not a point
    assert not PushKeys.model_validate(shaped_only).usable()


def test_a_subscription_id_is_derived_from_its_endpoint() -> None:
    a = subscription_id("https://fcm.googleapis.com/fcm/send/a")
    assert a == subscription_id("https://fcm.googleapis.com/fcm/send/a")
    assert a != subscription_id("https://fcm.googleapis.com/fcm/send/b")
    assert is_subscription_id(a) and not is_subscription_id(a.upper())
    assert not is_subscription_id("0b9a3c3e-5d7f-4c61-9d43-2a0f9e6b1c55")


def test_a_subscription_remembers_the_last_notifications_it_was_sent() -> None:
    keys = PushKeys.model_validate(browser_keys())
    subscription = PushSubscription.for_endpoint("dev", "https://fcm.googleapis.com/x", keys)
    for n in range(SENT_KEPT + 5):
        subscription = subscription.with_sent(f"k{n}")
    assert len(subscription.sent) == SENT_KEPT
    assert subscription.has_sent(f"k{SENT_KEPT + 4}") and not subscription.has_sent("k0")


# -- the notification --------------------------------------------------------------------------


def settled(**fields) -> InboxItem:
    return (
        text_item("Call Sarah about the budget review")
        .classified(guess(Bucket.PEOPLE, 0.92, "Call Sarah re budget"))
        .model_copy(update=fields)
    )


def test_a_filed_capture_reads_filed_in_its_bucket_with_its_title() -> None:
    item = settled()
    note = notification_for(item)
    assert note is not None
    assert note.reads == "Filed → People · Call Sarah re budget"
    assert (note.capture_id, note.outcome, note.url) == (
        item.id,
        "CLASSIFIED",
        f"/#/captures/{item.id}",
    )
    assert json.loads(note.encoded()) == {
        "title": "Filed → People",
        "body": "Call Sarah re budget",
        "captureId": item.id,
        "outcome": "CLASSIFIED",
        "url": f"/#/captures/{item.id}",
    }


def test_a_capture_that_needs_an_answer_asks_it() -> None:
    low = text_item().classified(guess(Bucket.IDEAS, 0.45, "Maybe a podcast"))
    note = notification_for(low)
    assert note is not None and note.outcome == "LOW_CONFIDENCE"
    assert note.reads == "Filed under Ideas for now — is that right? · Maybe a podcast"
    unclear = text_item().classified(guess(None, 0.1, "Unclear", "Who is Sam?"))
    note = notification_for(unclear)
    assert note is not None and note.outcome == "MISUNDERSTOOD"
    assert note.reads == "Needs an answer · Who is Sam?"


def test_an_unresolved_or_failed_capture_says_so() -> None:
    unresolved = settled(outcome=Outcome.UNRESOLVED, status=Status.UNRESOLVED, title="Hmm")
    note = notification_for(unresolved)
    assert note is not None and (note.outcome, note.reads) == (
        "UNRESOLVED",
        "Left in your inbox · Hmm",
    )
    failed = text_item(status=Status.QUEUED).failed(FailureCode.CLASSIFY_FAILED)
    note = notification_for(failed)
    assert note is not None and note.outcome == "FAILED"
    assert note.body == FailureCode.CLASSIFY_FAILED.message
    assert notification_for(text_item()) is None  # nothing to tell yet


def test_long_titles_and_bodies_are_cut_at_a_word() -> None:
    note = notification_for(settled(title="word " * 200))
    assert note is not None
    assert len(note.body) <= MAX_BODY_CHARS and note.body.endswith("word…")
    note = notification_for(settled(filed_bucket=Bucket.IDEAS, title="x"))
    assert note is not None and len(note.title) <= MAX_TITLE_CHARS


def test_the_topic_is_a_short_hash_of_the_capture_id() -> None:
    topic = topic_for("0b9a3c3e-5d7f-4c61-9d43-2a0f9e6b1c55")
    assert topic == topic_for("0b9a3c3e-5d7f-4c61-9d43-2a0f9e6b1c55")
    assert len(topic) <= 32 and set(topic) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )
    assert topic != topic_for("another")


# -- when the worker stays silent --------------------------------------------------------------


def message_for(item: InboxItem, **fields) -> OutcomeMessage:
    values = {
        "capture_id": item.id,
        "user_id": item.user_id,
        "outcome": item.outcome,
        "error": item.error,
        "settled_at": item.updated_at,
        "chosen_by": item.chosen_by,
        **fields,
    }
    return OutcomeMessage(**values)


def test_an_outcome_nobody_saw_is_pushed() -> None:
    item = settled()
    assert silence_for(message_for(item), item) is None
    failed = text_item(status=Status.QUEUED).failed(FailureCode.CLASSIFY_FAILED)
    assert silence_for(message_for(failed), failed) is None


def test_a_deleted_or_gone_capture_is_not_pushed() -> None:
    item = settled()
    assert silence_for(message_for(item), None) is Silence.GONE
    assert silence_for(message_for(item), item.tombstoned()) is Silence.GONE


def test_an_outcome_the_capture_moved_on_from_is_not_pushed() -> None:
    item = settled()
    later = item.picked(Bucket.ADMIN, "Budget")
    assert silence_for(message_for(item), later) is Silence.MOVED_ON
    assert silence_for(message_for(item, settled_at=None), item) is Silence.MOVED_ON


def test_an_outcome_shown_live_is_not_pushed_but_an_older_showing_does_not_count() -> None:
    item = settled()
    shown = item.shown_live()
    assert shown.updated_at == item.updated_at and shown.was_shown_live
    assert silence_for(message_for(item), shown) is Silence.SHOWN_LIVE
    # Shown at an earlier version: this one was not.
    earlier = shown.model_copy(update={"outcome_shown_at": item.updated_at - timedelta(seconds=1)})
    assert not earlier.was_shown_live
    assert silence_for(message_for(item), earlier) is None


def test_the_users_own_bucket_pick_is_not_pushed() -> None:
    picked = text_item().picked(Bucket.ADMIN, "Budget")
    assert silence_for(message_for(picked), picked) is Silence.USERS_OWN


def test_only_an_outcome_or_a_failure_can_be_marked_shown() -> None:
    with pytest.raises(IllegalTransition):
        text_item().shown_live()
    failed = text_item(status=Status.QUEUED).failed(FailureCode.CLASSIFY_FAILED)
    assert failed.shown_live().outcome_shown_at == failed.updated_at


def test_the_notification_key_names_the_capture_and_its_settled_version() -> None:
    item = settled()
    key = notification_key(message_for(item))
    assert key.startswith(f"{item.id}@") and key == notification_key(message_for(item))
    later = item.picked(Bucket.ADMIN, "Budget")
    assert notification_key(message_for(later)) != key


def test_the_stored_document_names_its_fields_as_the_push_api_does() -> None:
    keys = browser_keys()
    subscription = PushSubscription.for_endpoint(
        "dev", "https://fcm.googleapis.com/x", PushKeys.model_validate(keys), 1.5e12
    )
    stored = subscription.with_sent("c@t").to_json()
    assert set(stored) == {
        "id",
        "userId",
        "endpoint",
        "keys",
        "expirationTime",
        "createdAt",
        "sent",
    }
    assert stored["keys"] == keys  # p256dh, not p256Dh
    assert PushSubscription.model_validate(stored).keys.p256dh == keys["p256dh"]
