"""Request bodies: each parsed and validated into what a service takes, or a Problem saying
what is wrong with it, before any service is called."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from shared.domain.audio import ACCEPTED_TYPES, audio_type
from shared.domain.capture import LISTED
from shared.domain.classification import Bucket
from shared.domain.documents import RequestBody
from shared.domain.preferences import PreferencesRequest
from shared.domain.push import SubscriptionRequest
from shared.http.input import parse_json
from shared.http.multipart import FilePart
from shared.http.problems import Problem
from shared.services.agui import Conversation, speaks_interrupts
from shared.services.capture import TextCapture
from shared.services.digest import DigestQuery, ReviewQuery
from shared.services.edit import FiledPatch
from shared.services.inbox import MAX_PAGE, InboxQuery
from shared.services.recall import MAX_PAGE as MAX_BUCKET_PAGE
from shared.services.recall import MAX_QUERY_CHARS, MAX_SEARCH, BucketQuery, SearchQuery
from shared.services.resume import ResumeAnswer, ResumeRequest
from shared.services.voice import NewVoiceCapture
from shared.settings import get_settings

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput

M = TypeVar("M", bound=BaseModel)

# Ids are stored with the capture and echoed in every event; a client's ids are short.
MAX_ID_CHARS = 200
# "1.0", "1.12.3-beta": a longer protocolVersion is no version (the events feed says the same).
MAX_VERSION_CHARS = 20


def parse_capture_input(
    body: bytes, content_type: str | None, user_id: str, idempotency_key: str | None
) -> TextCapture | ResumeRequest:
    """POST /api/capture: a RunAgentInput that either resumes its thread (AG-UI 1.0 `resume`)
    or carries a new capture as its last user message."""
    run_input = _run_input(body, content_type)
    if run_input.resume is not None:
        return ResumeRequest(
            user_id=user_id,
            thread_id=run_input.thread_id,
            run_id=run_input.run_id,
            answers=[
                ResumeAnswer(interrupt_id=r.interrupt_id, status=r.status, payload=r.payload)
                for r in run_input.resume
            ],
            conversation=_conversation(run_input),
        )
    return _text_capture(run_input, user_id, idempotency_key)


def parse_text_capture(
    body: bytes, content_type: str | None, user_id: str, idempotency_key: str | None
) -> TextCapture:
    """A RunAgentInput whose last user message is the capture, or a Problem saying why not."""
    return _text_capture(_run_input(body, content_type), user_id, idempotency_key)


def _run_input(body: bytes, content_type: str | None) -> RunAgentInput:
    """Fields AG-UI does not define are ignored rather than refused: the protocol's own models
    allow them, so a client on a newer protocol version keeps working."""
    from ag_ui.core import RunAgentInput  # on first use: see shared/services/agui.py

    limits = get_settings()
    run_input = parse_json(body, content_type, RunAgentInput, "an AG-UI RunAgentInput")
    for name, value in (("threadId", run_input.thread_id), ("runId", run_input.run_id)):
        if not 1 <= len(value) <= MAX_ID_CHARS:
            raise Problem(422, f"{name} must be 1 to {MAX_ID_CHARS} characters.", code="INVALID_ID")
    version = run_input.protocol_version
    if version is not None and len(version) > MAX_VERSION_CHARS:
        raise Problem(
            422,
            f"protocolVersion must be a version such as 1.0 ({MAX_VERSION_CHARS} characters "
            "at most).",
            code="INVALID_PROTOCOL_VERSION",
        )
    if len(run_input.messages) > limits.max_messages:
        raise Problem(
            422,
            f"A run may carry at most {limits.max_messages} messages.",
            code="TOO_MANY_MESSAGES",
        )
    return run_input


def _conversation(run_input: RunAgentInput) -> Conversation:
    messages = tuple(
        m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in run_input.messages
    )
    return Conversation(interrupts=speaks_interrupts(run_input.protocol_version), messages=messages)


def _text_capture(
    run_input: RunAgentInput, user_id: str, idempotency_key: str | None
) -> TextCapture:
    limits = get_settings()
    text = last_user_text(run_input)
    if text is None:
        raise Problem(422, "There is no user message to capture.", code="NO_USER_MESSAGE")
    text = text.strip()
    if not text:
        raise Problem(422, "The capture is empty.", code="EMPTY_CAPTURE")
    if len(text) > limits.max_capture_chars:
        raise Problem(
            422,
            f"The capture is longer than {limits.max_capture_chars} characters.",
            code="CAPTURE_TOO_LONG",
        )
    return TextCapture(
        user_id=user_id,
        thread_id=run_input.thread_id,
        run_id=run_input.run_id,
        text=text,
        capture_key=idempotency_key or run_input.run_id,
        conversation=_conversation(run_input),
    )


def last_user_text(run_input: RunAgentInput) -> str | None:
    """The last user message's text: a string, or the text parts of a content list joined."""
    from ag_ui.core import UserMessage

    for message in reversed(run_input.messages):
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                return content
            parts = [getattr(p, "text", None) for p in content or []]
            return "\n".join(p for p in parts if p)
    return None


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
        raise _unsupported_type(request.content_type)
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
        raise _unsupported_type(part.content_type)
    return NewVoiceCapture(user_id=user_id, audio=audio, idempotency_key=idempotency_key)


def _unsupported_type(declared: str | None) -> Problem:
    return Problem(
        415,
        f"Voice notes must be audio ({', '.join(ACCEPTED_TYPES)}); got {declared or 'none'}.",
        code="UNSUPPORTED_AUDIO_TYPE",
    )


class BucketChoice(RequestBody):
    """The body of POST /api/captures/{id}/bucket."""

    bucket: Bucket


def parse_inbox_query(params: Mapping[str, str]) -> InboxQuery:
    """The query string's parameters (one value each) as an InboxQuery, or a 422 about the
    first parameter that is wrong; unknown parameters are ignored."""
    try:
        return InboxQuery.model_validate(params)
    except ValidationError as exc:
        name = exc.errors()[0]["loc"][0]
        raise Problem(422, _INVALID_QUERY.get(name, f"{name} is not valid.")) from exc


_INVALID_QUERY = {
    "limit": f"limit must be a whole number from 1 to {MAX_PAGE}.",
    "status": f"status must be one of: {', '.join(LISTED)}.",
}


class FeedQuery(BaseModel):
    """The query of GET /api/captures/{id}/events. A client declares the AG-UI version it
    speaks as a POST run would in its RunAgentInput: from 1.0 on, a capture that asks the user
    ends the feed with an interrupt."""

    model_config = ConfigDict(alias_generator=to_camel, frozen=True)

    protocol_version: str | None = Field(
        default=None,
        max_length=MAX_VERSION_CHARS,
        description="The AG-UI protocol version the client speaks, e.g. `1.0`.",
    )


def parse_feed_query(params: Mapping[str, str]) -> FeedQuery:
    try:
        return FeedQuery.model_validate(params)
    except ValidationError as exc:
        raise Problem(422, "protocolVersion must be a version such as 1.0.") from exc


def parse_subscription_request(body: bytes, content_type: str | None) -> SubscriptionRequest:
    """POST /api/push/subscriptions: the browser's `PushSubscription.toJSON()`."""
    return parse_json(
        body, content_type, SubscriptionRequest, "{endpoint, expirationTime, keys: {p256dh, auth}}"
    )


def parse_bucket_query(params: Mapping[str, str]) -> BucketQuery:
    """GET /api/buckets/{bucket}'s query, or a 422 about the first parameter that is wrong."""
    return _query(BucketQuery, params, _INVALID_BUCKET_QUERY)


_INVALID_BUCKET_QUERY = {
    "limit": f"limit must be a whole number from 1 to {MAX_BUCKET_PAGE}.",
    "continuationToken": "continuationToken is not valid.",
    "person": "person must be a name of 1 to 100 characters.",
    "done": "done must be true or false.",
    "dueBefore": "dueBefore must be a day, YYYY-MM-DD.",
}


def parse_search_query(params: Mapping[str, str]) -> SearchQuery:
    return _query(SearchQuery, params, _INVALID_SEARCH_QUERY)


_INVALID_SEARCH_QUERY = {
    "q": f"q must be 1 to {MAX_QUERY_CHARS} characters, not only spaces.",
    "limit": f"limit must be a whole number from 1 to {MAX_SEARCH}.",
}


def _query(model: type[M], params: Mapping[str, str], messages: dict[str, str]) -> M:
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        name = str(loc[0]) if loc else "query"
        raise Problem(
            422, messages.get(name, f"{name} is not valid."), code="INVALID_QUERY"
        ) from exc


# RFC 7396's own type, and plain JSON as well.
MERGE_PATCH = "application/merge-patch+json"


def parse_filed_patch(body: bytes, content_type: str | None) -> FiledPatch:
    """PATCH /api/captures/{id}: a merge patch of {title, dueDate, nextAction, done}."""
    if content_type is not None and content_type.split(";")[0].strip().lower() == MERGE_PATCH:
        content_type = "application/json"
    return parse_json(
        body, content_type, FiledPatch, "merge patch of {title, dueDate, nextAction, done}"
    )


def parse_digest_query(params: Mapping[str, str]) -> DigestQuery:
    return _query(DigestQuery, params, {"date": "date must be a day, YYYY-MM-DD."})


def parse_review_query(params: Mapping[str, str]) -> ReviewQuery:
    return _query(ReviewQuery, params, {"week": "week must be an ISO week, YYYY-Www."})


def parse_preferences(body: bytes, content_type: str | None) -> PreferencesRequest:
    """PUT /api/preferences."""
    return parse_json(
        body,
        content_type,
        PreferencesRequest,
        "{timeZone, digestAt, digest, weeklyReviewDay, reminders}",
    )
