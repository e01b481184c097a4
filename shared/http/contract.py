"""The HTTP API, described once: each route's method and path, what it takes (body, query,
path and header parameters, as pydantic models) and what it answers. The entrypoints register
their functions on these routes, shared/http/openapi.py turns them into /api/openapi.json, and the
tests fuzz them (tests/unit/test_contract.py checks that what the app registers is what is here)."""

from __future__ import annotations

import importlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.adapters.health import HealthReport
from shared.domain.audio import ACCEPTED_TYPES
from shared.domain.capture import InboxItem
from shared.domain.digest import Digest, Review
from shared.http.idempotency import MAX_KEY_CHARS
from shared.http.prefer import DEFAULT_WAIT_S, MOST_WAIT_S
from shared.http.queries import (
    AskParams,
    BucketParams,
    DigestParams,
    ExportParams,
    FeedParams,
    InboxParams,
    PersonParams,
    RelatedParams,
    ReviewParams,
    SearchParams,
)
from shared.http.requests import (
    BucketChoice,
    PreferencesRequest,
    SubscriptionRequest,
    TextCaptureRequest,
    VoiceNoteRequest,
)
from shared.services.ask_run import Answer as AskAnswer
from shared.services.audio import Heard
from shared.services.digest import PreferencesView
from shared.services.edit import FiledPatch
from shared.services.inbox import InboxPage
from shared.services.recall import (
    BUCKET_OF_PATH,
    MAX_NAME_CHARS,
    BucketPage,
    FiledView,
    PeopleList,
    PersonPage,
    RelatedItems,
    SearchResults,
)
from shared.services.subscriptions import PushKey, SubscriptionView
from shared.services.voice import VoiceUpload

# A Literal built at run time, which a type checker cannot read: to it, a str.
if TYPE_CHECKING:
    BucketName = str
else:
    BucketName = Literal[tuple(BUCKET_OF_PATH)]

# host.json's extensions.http.routePrefix: the host serves route `inbox` at /api/inbox.
ROUTE_PREFIX = "api"


@dataclass(frozen=True)
class LazyModel:
    """A model imported on first use, not with the app: ag_ui.core's models take a sixth of
    the cold start (shared/agui/events.py)."""

    module: str
    name: str

    def load(self) -> type[BaseModel]:
        return getattr(importlib.import_module(self.module), self.name)


RUN_AGENT_INPUT = LazyModel("ag_ui.core", "RunAgentInput")

Model = type[BaseModel] | LazyModel


def load_model(model: Model) -> type[BaseModel]:
    return model.load() if isinstance(model, LazyModel) else model


@dataclass(frozen=True)
class Multipart:
    """A multipart/form-data body whose one field the route reads is a file."""

    field: str
    description: str
    media_types: tuple[str, ...]


@dataclass(frozen=True)
class Json:
    """A JSON answer: the serialised `model`, or any JSON when there is none."""

    description: str
    model: Model | None = None


@dataclass(frozen=True)
class EventStream:
    """A capture's AG-UI run, as server-sent events."""

    description: str


@dataclass(frozen=True)
class NoContent:
    description: str


@dataclass(frozen=True)
class Download:
    """A file, streamed as it is made."""

    description: str
    media_type: str


Answer = Json | EventStream | NoContent | Download


# One object per route, so compared and hashed by identity.
@dataclass(frozen=True, eq=False)
class Route:
    """One function's HTTP trigger (method and route) and what OpenAPI says about it."""

    method: Literal["GET", "POST", "PUT", "DELETE", "PATCH"]
    # The Functions route template, under ROUTE_PREFIX: `captures/{id}`.
    route: str
    operation_id: str
    summary: str
    answers: dict[int, Answer]
    description: str | None = None
    # Statuses answered with a problem+json (shared/problems.py).
    problems: tuple[int, ...] = ()
    body: Model | Multipart | None = None
    path_params: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    headers: type[BaseModel] | None = None
    # No API key needed (the app authenticates every other route itself: the Functions
    # auth level is anonymous throughout).
    public: bool = False

    @property
    def path(self) -> str:
        """The path clients call, in OpenAPI's template syntax: `/api/captures/{id}`."""
        return f"/{ROUTE_PREFIX}/{self.route}"


class ParameterModel(BaseModel):
    """Path and header parameters are checked where they are read (inbox.is_capture_id,
    idempotency.idempotency_key); these models describe them for the document, and build their
    schemas only then (defer_build), not at cold start."""

    model_config = ConfigDict(defer_build=True)


class CapturePath(ParameterModel):
    id: uuid.UUID = Field(description="The capture id (a UUID).")


class BucketPath(ParameterModel):
    bucket: BucketName = Field(description="The bucket, lowercase.")


class PersonPath(ParameterModel):
    name: str = Field(max_length=MAX_NAME_CHARS, description="A name, as any item writes it.")


class AnyCapturePath(ParameterModel):
    """Deleting is idempotent: any id that names no capture of the caller's is already gone
    (204)."""

    id: str = Field(description="The capture id (a UUID).")


class IdempotencyHeaders(ParameterModel):
    """Read by shared/idempotency.py."""

    idempotency_key: str | None = Field(
        default=None,
        alias="Idempotency-Key",
        max_length=MAX_KEY_CHARS,
        description="Retries with the same key land on the same capture; the same key with "
        "a different request is a 409 (IDEMPOTENCY_KEY_REUSED).",
    )


class PlainCaptureHeaders(IdempotencyHeaders):
    """Read by shared/idempotency.py and shared/http/prefer.py."""

    prefer: str | None = Field(
        default=None,
        alias="Prefer",
        max_length=200,
        description=f"RFC 7240: `wait=N` waits up to N seconds (at most {MOST_WAIT_S}) for the "
        f"capture to settle; `respond-async` waits for none. Without it, {DEFAULT_WAIT_S} "
        "seconds.",
    )


class SubscriptionPath(ParameterModel):
    """Removing is idempotent: an id that names none of the caller's subscriptions is gone."""

    id: str = Field(description="The subscription id, as POST /api/push/subscriptions gave it.")


class IfMatchHeaders(ParameterModel):
    """Read by the PATCH entrypoint."""

    if_match: str | None = Field(
        default=None,
        alias="If-Match",
        max_length=200,
        description="The FiledView's `etag` (quoted or not): 428 without it, 412 when stale.",
    )


VOICE_FILE = Multipart(
    field="file",
    description="The audio, with a file name.",
    media_types=tuple(ACCEPTED_TYPES),
)

_BODY_ERRORS = (400, 401, 413, 415, 422, 429)
_CAPTURE_ERRORS = (401, 404, 429, 503)
_RUN = EventStream("The AG-UI run of the capture.")

CAPTURE = Route(
    method="POST",
    route="capture",
    operation_id="capture",
    summary="Text capture: the last user message of an AG-UI RunAgentInput, answered as a run.",
    description=(
        "A client that declares `protocolVersion` 1.0 gets a capture's question (LOW_CONFIDENCE, "
        "MISUNDERSTOOD) as an AG-UI interrupt: the run ends with STATE_SNAPSHOT, "
        "MESSAGES_SNAPSHOT and RUN_FINISHED whose `outcome` is `{type: interrupt, interrupts}`; "
        "each interrupt's `responseSchema` is the `AnswerPayload` schema (MISUNDERSTOOD) or "
        "`anyOf` the `BucketPayload` and `AnswerPayload` schemas (LOW_CONFIDENCE). "
        "The next RunAgentInput on the same thread carries "
        "`resume: [{interruptId, status, payload}]` "
        "(`resolved` with that payload, or `cancelled`), and needs no new user message. A "
        "resume that leaves an open question out, names an unknown one, or carries a payload "
        "outside its schema ends in RUN_ERROR (PARTIAL_RESUME, UNKNOWN_INTERRUPT_ID, "
        "INVALID_PAYLOAD); so does new input on a thread whose question is open "
        "(INTERRUPT_PENDING). A last user message with one `audio` part (source `data`: base64 "
        "within MAX_VOICE_BYTES; or `url`: `/api/captures/{id}` of a voice note started on the "
        "same thread) is a voice note, answered as its run (Transcription, Classifier, the "
        "outcome); only then can the answer be 404, 409 or 503."
    ),
    answers={200: _RUN},
    problems=(*_BODY_ERRORS, 404, 409, 503),
    body=RUN_AGENT_INPUT,
    headers=IdempotencyHeaders,
)
PLAIN_CAPTURE = Route(
    method="POST",
    route="captures",
    operation_id="createCapture",
    summary='Text capture as plain JSON, `{"text": ...}`: the capture once it has settled.',
    description=(
        "For clients that do not speak AG-UI (iOS Shortcuts, automations, mail forwarders, "
        "curl). 201 with the capture as GET /api/captures/{id} shows it, once it has settled "
        "within the wait (`Prefer: wait=N`); else 202 with the capture as it stands and its "
        "Location, to read (or follow through its events) later. The capture is filed either "
        "way. The same Idempotency-Key again is the same capture."
    ),
    answers={
        201: Json("The settled capture (inbox item); Location names it.", InboxItem),
        202: Json("The capture, not settled yet; Location names it.", InboxItem),
    },
    problems=(*_BODY_ERRORS, 409, 503),
    body=TextCaptureRequest,
    headers=PlainCaptureHeaders,
)
START_VOICE_NOTE = Route(
    method="POST",
    route="voice-notes",
    operation_id="startVoiceNote",
    summary="Start a voice capture: an upload URL for one PUT of the audio.",
    answers={201: Json("The capture and where to upload it.", VoiceUpload)},
    problems=(*_BODY_ERRORS, 409, 503),
    body=VoiceNoteRequest,
    headers=IdempotencyHeaders,
)
VOICE_CAPTURE = Route(
    method="POST",
    route="voice-capture",
    operation_id="voiceCapture",
    summary=f"One-request voice capture: multipart `{VOICE_FILE.field}`, answered as the "
    "capture's run.",
    answers={200: _RUN},
    problems=(*_BODY_ERRORS, 409, 503),
    body=VOICE_FILE,
    headers=IdempotencyHeaders,
    query=FeedParams,
)
GET_CAPTURE = Route(
    method="GET",
    route="captures/{id}",
    operation_id="getCapture",
    summary="The capture (inbox item).",
    answers={200: Json("The inbox item.", InboxItem)},
    problems=_CAPTURE_ERRORS,
    path_params=CapturePath,
)
DELETE_CAPTURE = Route(
    method="DELETE",
    route="captures/{id}",
    operation_id="deleteCapture",
    summary="Delete a capture and what it filed (also when it is already gone).",
    answers={204: NoContent("Deleted, or already gone.")},
    problems=(401, 409, 429, 503),
    path_params=AnyCapturePath,
)
CAPTURE_EVENTS = Route(
    method="GET",
    route="captures/{id}/events",
    operation_id="captureEvents",
    summary="The capture's AG-UI run: replayed, then followed live to its outcome.",
    answers={200: _RUN},
    problems=(401, 404, 422, 429, 503),
    path_params=CapturePath,
    query=FeedParams,
)
PICK_BUCKET = Route(
    method="POST",
    route="captures/{id}/bucket",
    operation_id="pickBucket",
    summary="File the capture in the bucket the user chose.",
    answers={200: Json("The inbox item as filed.", InboxItem)},
    problems=(*_BODY_ERRORS, 404, 409, 503),
    body=BucketChoice,
    path_params=CapturePath,
)
FOLLOW_UP = Route(
    method="POST",
    route="captures/{id}/follow-up",
    operation_id="followUp",
    summary="Answer a MISUNDERSTOOD capture: a RunAgentInput with the clarification.",
    answers={200: EventStream("The AG-UI run of the capture, classified again.")},
    problems=(*_BODY_ERRORS, 404, 409, 503),
    body=RUN_AGENT_INPUT,
    path_params=CapturePath,
)
LIST_INBOX = Route(
    method="GET",
    route="inbox",
    operation_id="listInbox",
    summary="The user's captures, newest first, paged by continuation token.",
    answers={200: Json("One page of captures.", InboxPage)},
    problems=(400, 401, 422, 429, 503),
    query=InboxParams,
)
PUSH_KEY = Route(
    method="GET",
    route="push/key",
    operation_id="pushKey",
    summary="The server's VAPID public key: the `applicationServerKey` to subscribe with.",
    answers={200: Json("The key.", PushKey)},
    problems=(503,),
    public=True,
)
SUBSCRIBE_PUSH = Route(
    method="POST",
    route="push/subscriptions",
    operation_id="subscribePush",
    summary="Store a browser's push subscription (`PushSubscription.toJSON()`) for the caller.",
    description=(
        "One per device; the same endpoint again is the same subscription (201 again, with the "
        "keys just sent). Only the endpoints of real push services are accepted (422 "
        "UNSUPPORTED_PUSH_SERVICE); `keys.p256dh` must be a P-256 point (422 INVALID_PUSH_KEYS); "
        "at most 20 devices a user (409 TOO_MANY_SUBSCRIPTIONS). The caller's devices are then "
        "notified of outcomes they did not see live."
    ),
    answers={201: Json("The stored subscription.", SubscriptionView)},
    problems=(*_BODY_ERRORS, 409, 503),
    body=SubscriptionRequest,
)
UNSUBSCRIBE_PUSH = Route(
    method="DELETE",
    route="push/subscriptions/{id}",
    operation_id="unsubscribePush",
    summary="Remove one of the caller's push subscriptions (also when it is already gone).",
    answers={204: NoContent("Removed, or already gone.")},
    problems=(401, 429, 503),
    path_params=SubscriptionPath,
)
HEALTH = Route(
    method="GET",
    route="health",
    operation_id="health",
    summary="Health of the app's dependencies and offline models; no secrets.",
    answers={
        200: Json("Every dependency answers and the models are loaded.", HealthReport),
        503: Json(
            "A dependency or a model is down (unhealthy), or the offline models are loading "
            "(warming, with Retry-After).",
            HealthReport,
        ),
    },
    public=True,
)
OPENAPI = Route(
    method="GET",
    route="openapi.json",
    operation_id="openapi",
    summary="This document.",
    answers={200: Json("OpenAPI 3.1")},
    public=True,
)

LIST_BUCKET = Route(
    method="GET",
    route="buckets/{bucket}",
    operation_id="listBucket",
    summary="One bucket's filed items, a page at a time: Admin by due date (none last), the "
    "others newest first.",
    answers={200: Json("One page of filed items.", BucketPage)},
    problems=(400, 401, 404, 422, 429, 503),
    path_params=BucketPath,
    query=BucketParams,
)
LIST_PEOPLE = Route(
    method="GET",
    route="people",
    operation_id="listPeople",
    summary="Everyone the filed items name, most recently mentioned first.",
    answers={200: Json("The people.", PeopleList)},
    problems=(401, 429, 503),
)
GET_PERSON = Route(
    method="GET",
    route="people/{name}",
    operation_id="getPerson",
    summary="Every item of the four buckets naming a person (case- and accent-insensitive), "
    "newest first, a page at a time.",
    answers={200: Json("The person and one page of their items.", PersonPage)},
    problems=(400, 401, 404, 422, 429, 503),
    path_params=PersonPath,
    query=PersonParams,
)
SEARCH = Route(
    method="GET",
    route="search",
    operation_id="search",
    summary="The caller's captures best matching `q`, by words (text or transcript, title, "
    "clarification answers) and by meaning (embeddings), the two rankings fused by reciprocal "
    "rank, best first, each with a snippet.",
    answers={200: Json("The matches.", SearchResults)},
    problems=(401, 422, 429, 503),
    query=SearchParams,
)
RELATED = Route(
    method="GET",
    route="captures/{id}/related",
    operation_id="relatedCaptures",
    summary="The caller's filed items nearest in meaning to this capture (cosine similarity of "
    "their embeddings), nearest first.",
    answers={200: Json("The related items.", RelatedItems)},
    problems=(401, 404, 422, 429, 503),
    path_params=CapturePath,
    query=RelatedParams,
)
EDIT_CAPTURE = Route(
    method="PATCH",
    route="captures/{id}",
    operation_id="editCapture",
    summary="Edit the filed item: a JSON merge patch (application/merge-patch+json or "
    "application/json) of title, dueDate, nextAction (Projects only), done (any bucket: a "
    "done item leaves the digest).",
    answers={200: Json("The filed item as edited (its new etag also in ETag).", FiledView)},
    problems=(*_BODY_ERRORS, 404, 409, 412, 428, 503),
    body=FiledPatch,
    path_params=CapturePath,
    headers=IfMatchHeaders,
)
EXPORT = Route(
    method="GET",
    route="export",
    operation_id="export",
    summary="Everything, to take away: a zip with a Markdown file per filed item (a folder per "
    "bucket, names an Obsidian vault takes) and captures.jsonl, streamed; with `audio=true`, "
    "each voice note's kept recording beside its note, embedded in it (`![[...]]`).",
    answers={200: Download("The zip.", "application/zip")},
    problems=(401, 422, 429, 503),
    query=ExportParams,
)


class RangeHeaders(ParameterModel):
    """Read by shared/http/ranges.py."""

    range: str | None = Field(
        default=None,
        alias="Range",
        max_length=200,
        description="RFC 9110: one byte range (`bytes=0-`, `bytes=1000-1999`, `bytes=-500`): "
        "206 with Content-Range; 416 when the recording has none of it. Several ranges, or "
        "one that does not parse, get the whole recording (200).",
    )


_AUDIO_TYPES = "audio/*"
GET_AUDIO = Route(
    method="GET",
    route="captures/{id}/audio",
    operation_id="getCaptureAudio",
    summary="A voice note's recording, with its type, streamed; a byte range (206) for a "
    "player that seeks.",
    description=(
        "Only its owner gets it: any other id is 404 NOT_FOUND. 404 NO_AUDIO for a text "
        "capture, AUDIO_DELETED once the recording was deleted (by the user, by their "
        "retention, or not kept), AUDIO_NOT_UPLOADED before it came. `Accept-Ranges: bytes`."
    ),
    answers={
        200: Download("The whole recording.", _AUDIO_TYPES),
        206: Download("The byte range asked for, with Content-Range.", _AUDIO_TYPES),
    },
    problems=(401, 404, 416, 429, 503),
    path_params=CapturePath,
    headers=RangeHeaders,
)
DELETE_AUDIO = Route(
    method="DELETE",
    route="captures/{id}/audio",
    operation_id="deleteCaptureAudio",
    summary="Delete a voice note's recording alone: the capture and its words stay, and its "
    "`audioDeletedAt` says when the recording went (also when it is already gone).",
    answers={204: NoContent("Deleted, or already gone (or no capture of the caller's).")},
    description="409 NO_AUDIO for a text capture; 409 AUDIO_IN_USE while it is transcribed.",
    problems=(401, 409, 429, 503),
    path_params=AnyCapturePath,
)
TRANSCRIBE_AGAIN = Route(
    method="POST",
    route="captures/{id}/transcribe",
    operation_id="transcribeAgain",
    summary="Transcribe a voice note again from its kept recording (a queued job): the new "
    "transcript replaces the old; where it is filed and the user's edits stay.",
    description=(
        "202 with the capture, its `transcriptionRequestedAt` set; Location names it: the new "
        "transcript is in place once its `transcribedAt` is at or after that instant. Asked "
        "again while one is pending, the same job (done once). 409 NO_AUDIO (text), "
        "AUDIO_DELETED, NOT_TRANSCRIBED (its first transcript is still being made)."
    ),
    answers={202: Json("The capture, its transcription pending.", InboxItem)},
    problems=(401, 404, 409, 429, 503),
    path_params=CapturePath,
)
SPOKEN_ANSWER = Route(
    method="POST",
    route="captures/{id}/spoken-answer",
    operation_id="spokenAnswer",
    summary=f"An answer to the capture's open question, spoken: multipart `{VOICE_FILE.field}`, "
    "answered with its words, which the client sends as its answer (nothing is stored).",
    description=(
        "So that a silent or unclear voice note's question can be answered by recording "
        "again. 409 NOT_AWAITING_CLARIFICATION when the capture asks nothing; 422 "
        "EMPTY_AUDIO, AUDIO_UNDECODABLE, AUDIO_TOO_LONG; 413 AUDIO_TOO_LARGE."
    ),
    answers={200: Json("The words heard, with their times.", Heard)},
    problems=(*_BODY_ERRORS, 404, 409, 503),
    body=VOICE_FILE,
    path_params=CapturePath,
)
ASK = Route(
    method="POST",
    route="ask",
    operation_id="ask",
    summary="Ask your captures: the last user message of an AG-UI RunAgentInput is the question, "
    "the messages before it the conversation; answered as a run.",
    description=(
        "The run tells each tool the agent uses (search, person, list_bucket, get_capture; "
        "only the caller's captures) as TOOL_CALL_START, TOOL_CALL_ARGS (the arguments as "
        "JSON), TOOL_CALL_END and TOOL_CALL_RESULT (the tool's JSON answer, or "
        "`{error: {code, message}}`), then the answer as TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT "
        "and TEXT_MESSAGE_END, whose `metadata.citations` are the citations, and ends with "
        "RUN_FINISHED whose `result` is the `Answer` (`{answer, citations}`). Markers [1], [2] "
        "in the answer follow the citations' order. Where nothing answers, the answer says so "
        "and cites nothing. Storage down ends the run with RUN_ERROR (STORAGE_UNAVAILABLE)."
    ),
    answers={200: EventStream("The AG-UI run of the answer.")},
    problems=(*_BODY_ERRORS,),
    body=RUN_AGENT_INPUT,
)
ASK_PLAIN = Route(
    method="GET",
    route="ask",
    operation_id="askPlain",
    summary="Ask your captures, as plain JSON (for Shortcuts, curl and other assistants): the "
    "same answer as POST /api/ask's run, `{answer, citations}`.",
    description=(
        "With `threadId`, the thread's earlier questions and answers count (a follow-up such "
        "as 'and who is doing the tiles?'), and this question and its answer join them; a "
        "thread is kept 30 days after its last question."
    ),
    answers={200: Json("The answer and the captures it cites.", AskAnswer)},
    problems=(401, 422, 429, 503),
    query=AskParams,
)
GET_PREFERENCES = Route(
    method="GET",
    route="preferences",
    operation_id="getPreferences",
    summary="The caller's preferences: the digest (off until they set it) and whether and how "
    "long voice notes' recordings are kept.",
    answers={200: Json("The preferences.", PreferencesView)},
    problems=(401, 429, 503),
)
PUT_PREFERENCES = Route(
    method="PUT",
    route="preferences",
    operation_id="putPreferences",
    summary="Set every preference: time zone (IANA), digest time, digest on or off, the "
    "weekly review's day, reminders, keeping recordings and for how long.",
    description=(
        "The daily digest is pushed within 15 minutes after `digestAt` in `timeZone` (DST "
        "changes move the instant, never the local time), once per local day, and only when "
        "there is something to say. `keepAudio` (default true) keeps a voice note's recording "
        "beside its transcript for `audioRetentionDays` after it was made (default 365; 1 to "
        "3650; null: for ever); false deletes it once transcribed. A change applies to the "
        "recordings kept already at the next retention run (daily)."
    ),
    answers={
        200: Json("The preferences as stored, with the next digest's instant.", PreferencesView)
    },
    problems=(*_BODY_ERRORS, 503),
    body=PreferencesRequest,
)
GET_DIGEST = Route(
    method="GET",
    route="digest",
    operation_id="getDigest",
    summary="A local day's digest: Admin, Projects and People items due and overdue, open "
    "questions, projects' next actions, people to follow up (each capture once, none done), "
    "what came in the day before.",
    answers={200: Json("The digest.", Digest)},
    problems=(401, 422, 429, 503),
    query=DigestParams,
)
GET_REVIEW = Route(
    method="GET",
    route="review",
    operation_id="getReview",
    summary="An ISO week's review: captures per bucket (unfiled included, adding up to "
    "capturesTotal), projects gone quiet, the week's ideas, unanswered questions, and a "
    "two-sentence summary.",
    answers={200: Json("The review.", Review)},
    problems=(401, 422, 429, 503),
    query=ReviewParams,
)

# Every route, in the document's order.
ROUTES = (
    CAPTURE,
    PLAIN_CAPTURE,
    START_VOICE_NOTE,
    VOICE_CAPTURE,
    GET_CAPTURE,
    DELETE_CAPTURE,
    GET_AUDIO,
    DELETE_AUDIO,
    TRANSCRIBE_AGAIN,
    SPOKEN_ANSWER,
    CAPTURE_EVENTS,
    PICK_BUCKET,
    FOLLOW_UP,
    LIST_INBOX,
    EDIT_CAPTURE,
    LIST_BUCKET,
    LIST_PEOPLE,
    GET_PERSON,
    SEARCH,
    ASK,
    ASK_PLAIN,
    RELATED,
    EXPORT,
    GET_PREFERENCES,
    PUT_PREFERENCES,
    GET_DIGEST,
    GET_REVIEW,
    PUSH_KEY,
    SUBSCRIBE_PUSH,
    UNSUBSCRIBE_PUSH,
    HEALTH,
    OPENAPI,
)
