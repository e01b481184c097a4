"""Request bodies: each parsed and validated into what a service takes, or a Problem saying
what is wrong with it, before any service is called."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from shared.domain.audio import ACCEPTED_TYPES, audio_type
from shared.domain.classification import Bucket
from shared.domain.documents import RequestBody
from shared.domain.preferences import (
    DEFAULT_AUDIO_RETENTION_DAYS,
    MAX_AUDIO_RETENTION_DAYS,
    Weekday,
)
from shared.domain.push import PushKeys
from shared.http.input import parse_json, read_json
from shared.http.multipart import FilePart
from shared.http.problems import Problem
from shared.services.capture import TextCapture, new_text_capture
from shared.services.digest import NewPreferences
from shared.services.edit import FiledPatch
from shared.services.subscriptions import NewSubscription
from shared.services.voice import NewVoiceCapture
from shared.settings import get_settings

M = TypeVar("M", bound=BaseModel)

# Ids are stored with the capture and echoed in every event; a client's ids are short.
MAX_ID_CHARS = 200
MAX_ENDPOINT_CHARS = 2048
# The latest instant a JavaScript Date holds (ms since the epoch): expirationTime is one.
MAX_EXPIRATION_MS = 8.64e15


class TextCaptureRequest(RequestBody):
    """The body of POST /api/captures: the text to capture, as plain JSON."""

    text: str = Field(description="What to capture.")


def parse_plain_capture(
    body: bytes, content_type: str | None, user_id: str, idempotency_key: str | None
) -> TextCapture:
    """POST /api/captures: `{"text": ...}` as a capture on a thread of its own; without an
    Idempotency-Key each request is a new capture."""
    request = parse_json(body, content_type, TextCaptureRequest, '{"text": ...}')
    limit = get_settings().max_capture_chars
    return new_text_capture(user_id, request.text, idempotency_key, limit)


class VoiceNoteRequest(RequestBody):
    """The body of POST /api/voice-notes."""

    content_type: str = Field(min_length=1, max_length=100)
    thread_id: str | None = Field(default=None, max_length=200)


def parse_voice_note_request(
    body: bytes, content_type: str | None, user_id: str, idempotency_key: str | None
) -> NewVoiceCapture:
    """The body of POST /api/voice-notes, or a Problem saying what is wrong with it."""
    request = parse_json(body, content_type, VoiceNoteRequest, "{contentType, threadId?}")
    audio = audio_type(request.content_type)
    if audio is None:
        raise unsupported_audio_type(request.content_type)
    return NewVoiceCapture(
        user_id=user_id,
        audio=audio,
        thread_id=request.thread_id,
        idempotency_key=idempotency_key,
    )


def new_voice_capture_for_file(
    part: FilePart, user_id: str, idempotency_key: str | None
) -> NewVoiceCapture:
    """A multipart upload's file part, if it is audio we take (its type, else its name)."""
    audio = audio_type(part.content_type, part.filename)
    if audio is None:
        raise unsupported_audio_type(part.content_type)
    return NewVoiceCapture(user_id=user_id, audio=audio, idempotency_key=idempotency_key)


def unsupported_audio_type(declared: str | None) -> Problem:
    return Problem(
        415,
        f"Voice notes must be audio ({', '.join(ACCEPTED_TYPES)}); got {declared or 'none'}.",
        code="UNSUPPORTED_AUDIO_TYPE",
    )


class BucketChoice(RequestBody):
    """The body of POST /api/captures/{id}/bucket."""

    bucket: Bucket


class SubscriptionKeys(RequestBody):
    """The subscription's keys, base64url: the browser's ECDH public key and auth secret."""

    # As the Push API names it (the camelCase generator would make it p256Dh).
    p256dh: str = Field(
        alias="p256dh",
        pattern=r"^[A-Za-z0-9_-]{87}=?$",
        description="The browser's P-256 ECDH public key (uncompressed point), base64url.",
    )
    auth: str = Field(
        pattern=r"^[A-Za-z0-9_-]{22}(==)?$",
        description="The 16-byte authentication secret, base64url.",
    )


class SubscriptionRequest(RequestBody):
    """The body of POST /api/push/subscriptions: the browser's `PushSubscription.toJSON()`."""

    endpoint: str = Field(
        min_length=1,
        max_length=MAX_ENDPOINT_CHARS,
        description="The push service URL to send to; only real push services are accepted.",
    )
    # A finite time, or a 4xx: NaN or an infinity (1e999) cannot be stored.
    expiration_time: float | None = Field(
        default=None,
        ge=0,
        le=MAX_EXPIRATION_MS,
        allow_inf_nan=False,
        description="When the subscription expires (ms since the epoch), if ever.",
    )
    keys: SubscriptionKeys


def parse_subscription_request(body: bytes, content_type: str | None) -> NewSubscription:
    """POST /api/push/subscriptions: the browser's `PushSubscription.toJSON()`. Only its shape
    is checked here; whether the push service and the key will do is the service's to say."""
    request = parse_json(
        body, content_type, SubscriptionRequest, "{endpoint, expirationTime, keys: {p256dh, auth}}"
    )
    return NewSubscription(
        endpoint=request.endpoint,
        keys=PushKeys(p256dh=request.keys.p256dh, auth=request.keys.auth),
        expiration_time=request.expiration_time,
    )


# RFC 7396's own type, and plain JSON as well.
MERGE_PATCH = "application/merge-patch+json"


def parse_filed_patch(body: bytes, content_type: str | None) -> FiledPatch:
    """PATCH /api/captures/{id}: a merge patch of {title, dueDate, nextAction, done}, or a 422
    INVALID_PATCH whose detail says what is wrong with each field (an edit sheet shows it)."""
    if content_type is not None and content_type.split(";")[0].strip().lower() == MERGE_PATCH:
        content_type = "application/json"
    raw = read_json(body, content_type, "a merge patch of {title, dueDate, nextAction, done}")
    try:
        return FiledPatch.model_validate(raw)
    except ValidationError as exc:
        errors = [
            {"loc": ".".join(map(str, e["loc"])) or "body", "msg": _patch_error(e)}
            for e in exc.errors(include_url=False, include_input=False)[:10]
        ]
        detail = " ".join(f"{e['loc']}: {e['msg']}." for e in errors)
        raise Problem(422, detail, code="INVALID_PATCH", errors=errors) from exc


def _patch_error(error: ErrorDetails) -> str:
    """What is wrong with one field of a merge patch, in words a person reads."""
    kind, name = error["type"], str(error["loc"][0]) if error["loc"] else ""
    limits = error.get("ctx") or {}
    if kind == "string_too_long":
        return f"at most {limits['max_length']} characters"
    if kind == "string_too_short":
        return "cannot be empty"
    if kind == "extra_forbidden":
        return "cannot be edited; send title, dueDate, nextAction or done"
    if kind == "model_type":
        return "must be a JSON object"
    if name == "dueDate":
        return "must be a day (YYYY-MM-DD), or null to clear it"
    if name == "done":
        return "must be true or false"
    if name == "title":
        return "must be text; it cannot be null"
    if name == "nextAction":
        return "must be text, or null to clear it"
    return error["msg"]


class PreferencesRequest(RequestBody):
    """The body of PUT /api/preferences: every preference (a PUT replaces them all)."""

    time_zone: str = Field(
        min_length=1, max_length=64, description="An IANA time zone, e.g. Europe/London."
    )
    digest_at: str = Field(
        default="07:30",
        pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$",
        description="The local time of the daily digest, HH:MM (24 h).",
    )
    digest: bool = Field(default=True, description="Push the daily digest.")
    weekly_review_day: Weekday = Field(
        default="sunday", description="The day the digest brings the weekly review."
    )
    reminders: bool = Field(
        default=True, description="Name the Admin items due today in the digest's push."
    )
    keep_audio: bool = Field(
        default=True,
        description="Keep a voice note's recording beside its transcript (false: deleted once "
        "transcribed).",
    )
    audio_retention_days: int | None = Field(
        default=DEFAULT_AUDIO_RETENTION_DAYS,
        ge=1,
        le=MAX_AUDIO_RETENTION_DAYS,
        description="Days a recording is kept after it was made; null keeps it for ever.",
    )

    @field_validator("audio_retention_days", mode="before")
    @classmethod
    def _a_number(cls, value: object) -> object:
        # A JSON number of days (413.0 is one, as JSON Schema's integer says), never "30" or
        # true, which pydantic would otherwise read as 30 and 1.
        if isinstance(value, bool | str):
            raise ValueError("must be a whole number of days, or null")
        return value


def parse_preferences(body: bytes, content_type: str | None) -> NewPreferences:
    """PUT /api/preferences: every preference, a default for each one left out. Only its shape
    is checked here; whether the zone is one the tz database has is the use case's to say."""
    request = parse_json(
        body,
        content_type,
        PreferencesRequest,
        "{timeZone, digestAt, digest, weeklyReviewDay, reminders, keepAudio, audioRetentionDays}",
    )
    return NewPreferences(
        time_zone=request.time_zone,
        digest_at=request.digest_at,
        digest=request.digest,
        weekly_review_day=request.weekly_review_day,
        reminders=request.reminders,
        keep_audio=request.keep_audio,
        audio_retention_days=request.audio_retention_days,
    )
