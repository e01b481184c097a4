"""Web Push in the domain: a user's push subscriptions (one per browser or device), the
notification an outcome becomes, and when the push worker stays silent.

A subscription is the browser's `PushSubscription.toJSON()` as it was stored for the user who
sent it. Its id is derived from its endpoint, so subscribing the same browser again lands on
the same document. It remembers the notifications it was sent (`sent`, the last few), so a
duplicated outcome message gives each device one notification.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final, Literal

from pydantic import Field

from shared.domain.capture import InboxItem, Status
from shared.domain.documents import Document, Timestamp, utc_text, utcnow
from shared.domain.messages import OutcomeMessage
from shared.domain.outcomes import Outcome, failure_message
from shared.domain.text import shortened

SUBSCRIPTION_ID = re.compile(r"[0-9a-f]{32}")
# Notifications a subscription remembers: far more than the outcomes one capture can have
# while its message may still be redelivered.
SENT_KEPT = 50
# Devices one user may subscribe: each outcome is sent to every one of them.
MAX_SUBSCRIPTIONS = 20
# What a phone shows of a notification; the encrypted record must stay under 4 KiB anyway.
MAX_TITLE_CHARS = 100
MAX_BODY_CHARS = 300

# P-256 (secp256r1): y² = x³ - 3x + b over the prime field p.
_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B


def b64url_decode(text: str) -> bytes | None:
    """Base64url with or without padding, as browsers send keys; None if it is not."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def is_p256_point(raw: bytes) -> bool:
    """An uncompressed point on P-256 (0x04 ‖ x ‖ y): what `p256dh` must be for the payload to
    be encrypted to it (RFC 8291)."""
    if len(raw) != 65 or raw[0] != 4:
        return False
    x, y = int.from_bytes(raw[1:33]), int.from_bytes(raw[33:])
    return x < _P and y < _P and (y * y - (x**3 - 3 * x + _B)) % _P == 0


class PushKeys(Document):
    """A subscription's keys, base64url: the browser's ECDH public key and auth secret."""

    # As the Push API names it (the camelCase generator would make it p256Dh).
    p256dh: str = Field(alias="p256dh")
    auth: str

    def usable(self) -> bool:
        """The shape alone does not make a key: the point must be on the curve."""
        point = b64url_decode(self.p256dh)
        secret = b64url_decode(self.auth)
        return point is not None and is_p256_point(point) and secret is not None


def subscription_id(endpoint: str) -> str:
    return hashlib.sha256(endpoint.encode()).hexdigest()[:32]


def is_subscription_id(value: str) -> bool:
    return SUBSCRIPTION_ID.fullmatch(value) is not None


# The id of a user's DeviceSlots document, beside their subscriptions (never a subscription id).
DEVICE_SLOTS_ID: Final = "device-slots"
# A slot taken this recently may belong to a subscription still being stored.
SLOT_GRACE = timedelta(seconds=60)


class DeviceSlots(Document):
    """Which devices of a user hold one of the MAX_SUBSCRIPTIONS places, and since when: one
    document, saved ETag-guarded, so that the cap holds however many subscribe at once. A
    removed subscription's slot is given back when the cap is next reached (`freed`)."""

    id: Literal["device-slots"] = DEVICE_SLOTS_ID
    user_id: str
    taken: dict[str, Timestamp] = Field(default_factory=dict)
    etag: str | None = Field(default=None, alias="_etag")

    @property
    def full(self) -> bool:
        return len(self.taken) >= MAX_SUBSCRIPTIONS

    def holding(self, subscription_id: str) -> DeviceSlots:
        return self.model_copy(update={"taken": {**self.taken, subscription_id: utcnow()}})

    def freed(self, stored: set[str], now: datetime) -> DeviceSlots:
        """Without the slots of subscriptions that are no longer stored (past the grace a
        subscription being stored right now needs)."""
        kept = {sid: at for sid, at in self.taken.items() if sid in stored or now - at < SLOT_GRACE}
        return self.model_copy(update={"taken": kept})


class PushSubscription(Document):
    """A device of a user's that takes notifications (Cosmos container `PushSubscriptions`)."""

    id: str
    user_id: str
    endpoint: str
    keys: PushKeys
    expiration_time: float | None = None
    created_at: Timestamp = Field(default_factory=utcnow)
    # The notification keys (`notification_key`) delivered to it, oldest first, at most
    # SENT_KEPT.
    sent: list[str] = Field(default_factory=list)
    etag: str | None = Field(default=None, alias="_etag")

    @classmethod
    def for_endpoint(
        cls, user_id: str, endpoint: str, keys: PushKeys, expiration_time: float | None = None
    ) -> PushSubscription:
        """The browser at `endpoint` subscribed for `user_id`: the same endpoint is always the
        same id, so subscribing again lands on the same document."""
        return cls(
            id=subscription_id(endpoint),
            user_id=user_id,
            endpoint=endpoint,
            keys=keys,
            expiration_time=expiration_time,
        )

    def has_sent(self, key: str) -> bool:
        return key in self.sent

    def with_sent(self, key: str) -> PushSubscription:
        return self.model_copy(update={"sent": [*self.sent, key][-SENT_KEPT:]})


# -- the notification -----------------------------------------------------------------------

PushOutcome = Literal["CLASSIFIED", "LOW_CONFIDENCE", "MISUNDERSTOOD", "UNRESOLVED", "FAILED"]


class NotificationPayload(Document):
    """The JSON the app's service worker reads from a push: what to show, and what a tap opens."""

    title: str
    body: str
    capture_id: str
    outcome: PushOutcome
    url: str

    def encoded(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()

    @property
    def reads(self) -> str:
        """What the user reads, as a lock screen shows it."""
        return f"{self.title} · {self.body}" if self.body else self.title


def notification_for(item: InboxItem) -> NotificationPayload | None:
    """The notification of a settled or failed capture; None when it has nothing to tell."""
    what = item.title or shortened(" ".join((item.text or "").split()), MAX_BODY_CHARS)
    outcome: PushOutcome
    if item.status is Status.FAILED:
        title, body, outcome = "Couldn't process a capture", failure_message(item.error), "FAILED"
    elif item.outcome is Outcome.CLASSIFIED:
        title, body, outcome = f"Filed → {item.filed_bucket}", what, "CLASSIFIED"
    elif item.outcome is Outcome.LOW_CONFIDENCE:
        title = f"Filed under {item.filed_bucket} for now — is that right?"
        body, outcome = what, "LOW_CONFIDENCE"
    elif item.outcome is Outcome.MISUNDERSTOOD:
        question = item.question_text or "What did you want to capture?"
        title, body, outcome = "Needs an answer", question, "MISUNDERSTOOD"
    elif item.outcome is Outcome.UNRESOLVED:
        title, body, outcome = "Left in your inbox", what, "UNRESOLVED"
    else:
        return None
    return NotificationPayload(
        title=shortened(title, MAX_TITLE_CHARS),
        body=shortened(body, MAX_BODY_CHARS),
        capture_id=item.id,
        outcome=outcome,
        url=f"/#/captures/{item.id}",
    )


def notification_key(message: OutcomeMessage) -> str:
    """One notification: a capture's outcome as settled at one instant."""
    settled = utc_text(message.settled_at) if message.settled_at else "unknown"
    return f"{message.capture_id}@{settled}"


def topic_for(capture_id: str) -> str:
    """RFC 8030 Topic (at most 32 base64url characters): one per capture, so a push service
    replaces an undelivered notification of the capture with its newer one."""
    return b64url(hashlib.sha256(capture_id.encode()).digest()[:16])


class Silence(StrEnum):
    """Why an outcome message is not pushed."""

    GONE = "the capture is deleted or gone"
    MOVED_ON = "the capture moved on; its newer outcome has its own message"
    SHOWN_LIVE = "a client was shown the outcome live"
    USERS_OWN = "the user picked the bucket themselves"
    NOTHING_TO_TELL = "the capture has no outcome to tell"


def silence_for(message: OutcomeMessage, item: InboxItem | None) -> Silence | None:
    """None when the user should be told `message`'s outcome of `item` (the capture as it is
    now)."""
    if item is None or item.is_deleted:
        return Silence.GONE
    if message.settled_at is None or message.settled_at != item.updated_at:
        return Silence.MOVED_ON
    if item.outcome_shown_at == message.settled_at:
        return Silence.SHOWN_LIVE
    if message.chosen_by == "user":
        return Silence.USERS_OWN
    if not item.has_ended:
        return Silence.NOTHING_TO_TELL
    return None


class Delivery(StrEnum):
    """What a push service made of one notification."""

    DELIVERED = "delivered"  # 2xx: it has it (and delivers it, within its TTL)
    GONE = "gone"  # 404, 410: the subscription expired or was revoked
    REFUSED = "refused"  # any other 4xx (or an endpoint no longer allowed): not retried
