"""Documents and messages of the capture pipeline: pydantic models, free of SDK types.

Field names are camelCase on the wire and in Cosmos (the clients' contract), snake_case
in Python.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, PlainSerializer
from pydantic.alias_generators import to_camel

from shared.domain.classification import Bucket
from shared.domain.text import ValidTextModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def utc_text(value: datetime) -> str:
    # One fixed width, so that stored strings sort as the instants do (the inbox pages on it).
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


Timestamp = Annotated[datetime, PlainSerializer(utc_text, when_used="json")]


class Document(ValidTextModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json(self) -> dict:
        """The stored / sent form: camelCase, ISO dates, no Cosmos system fields."""
        return self.model_dump(mode="json", by_alias=True, exclude={"etag"})


class RequestBody(Document):
    """A JSON body a client sends us: a field we do not know is a mistake worth a 422."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Outcome(StrEnum):
    CLASSIFIED = "CLASSIFIED"
    LOW_CONFIDENCE = "LOW_CONFIDENCE"
    MISUNDERSTOOD = "MISUNDERSTOOD"
    UNRESOLVED = "UNRESOLVED"


class Status(StrEnum):
    AWAITING_UPLOAD = "awaiting_upload"
    RECEIVED = "received"  # stored; no model has been asked yet
    TRANSCRIBING = "transcribing"
    QUEUED = "queued"  # waiting for the classify worker
    FILED = "filed"  # CLASSIFIED
    NEEDS_REVIEW = "needs_review"  # LOW_CONFIDENCE: filed provisionally
    NEEDS_CLARIFICATION = "needs_clarification"  # MISUNDERSTOOD: nothing filed
    UNRESOLVED = "unresolved"
    FAILED = "failed"
    # A tombstone: DELETE blanks the capture first, so that no write racing the delete can
    # bring it back or leave a filed copy behind; then it removes everything.
    DELETING = "deleting"

    @property
    def is_settled(self) -> bool:
        """The classifier has had its say; re-running it would file twice."""
        return self in SETTLED


SETTLED = {Status.FILED, Status.NEEDS_REVIEW, Status.NEEDS_CLARIFICATION, Status.UNRESOLVED}

STATUS_OF_OUTCOME = {
    Outcome.CLASSIFIED: Status.FILED,
    Outcome.LOW_CONFIDENCE: Status.NEEDS_REVIEW,
    Outcome.MISUNDERSTOOD: Status.NEEDS_CLARIFICATION,
    Outcome.UNRESOLVED: Status.UNRESOLVED,
}


class Clarification(Document):
    """A user's answer to MISUNDERSTOOD, sent as a follow-up run."""

    run_id: str
    text: str
    at: Timestamp = Field(default_factory=utcnow)


class InboxItem(Document):
    """Every capture, whatever became of it. `id` is the capture id."""

    id: str
    user_id: str
    source: Literal["text", "voice"]
    text: str | None = None
    thread_id: str
    run_id: str
    status: Status = Status.RECEIVED
    outcome: Outcome | None = None
    filed_bucket: Bucket | None = None
    chosen_by: Literal["classifier", "user"] | None = None
    confidence: float | None = None
    title: str | None = None
    question_text: str | None = None
    error: str | None = None  # a failure code, e.g. AUDIO_UNDECODABLE
    audio_blob: str | None = None  # voice: the blob's name in the voice-notes container
    audio_content_type: str | None = None
    # Follow-up answers, oldest first; the original `text` is never overwritten.
    clarifications: list[Clarification] = Field(default_factory=list)
    created_at: Timestamp = Field(default_factory=utcnow)
    updated_at: Timestamp = Field(default_factory=utcnow)
    etag: str | None = Field(default=None, alias="_etag")

    @property
    def is_deleted(self) -> bool:
        return self.status is Status.DELETING

    def tombstone(self) -> InboxItem:
        """The capture as DELETE leaves it while it removes the rest: no words of the user's."""
        return self.model_copy(
            update={
                "status": Status.DELETING,
                "text": None,
                "title": None,
                "question_text": None,
                "clarifications": [],
                "updated_at": utcnow(),
            }
        )

    def text_to_classify(self) -> str:
        """The latest clarification first (it takes precedence), then what came before."""
        answers = [c.text for c in reversed(self.clarifications)]
        return "\n".join([*answers, self.text or ""]).strip()


class FiledItem(Document):
    """What a bucket container holds: the same id as its inbox item, pointing back to it."""

    id: str
    user_id: str
    inbox_item_id: str
    bucket: Bucket
    title: str
    text: str
    confidence: float
    created_at: Timestamp = Field(default_factory=utcnow)


class PersonItem(FiledItem):
    bucket: Literal[Bucket.PEOPLE] = Bucket.PEOPLE
    people: list[str] = Field(default_factory=list, description="Names mentioned")
    follow_up: str | None = None


class ProjectItem(FiledItem):
    bucket: Literal[Bucket.PROJECTS] = Bucket.PROJECTS
    next_action: str | None = None


class IdeaItem(FiledItem):
    bucket: Literal[Bucket.IDEAS] = Bucket.IDEAS
    one_liner: str | None = None


class AdminItem(FiledItem):
    bucket: Literal[Bucket.ADMIN] = Bucket.ADMIN
    due_date: date | None = None


FILED_MODELS: dict[Bucket, type[FiledItem]] = {
    Bucket.PEOPLE: PersonItem,
    Bucket.PROJECTS: ProjectItem,
    Bucket.IDEAS: IdeaItem,
    Bucket.ADMIN: AdminItem,
}


class ClassifyJob(Document):
    """A message on `captures-classify`."""

    capture_id: str = Field(min_length=1, max_length=200)
    user_id: str = Field(min_length=1, max_length=200)
    traceparent: str | None = None


class OutcomeMessage(Document):
    """A message on `captures-outcomes`, for push integrations."""

    capture_id: str
    user_id: str
    outcome: Outcome
    bucket: Bucket | None = None
    confidence: float | None = None
    title: str | None = None
    question_text: str | None = None
    at: Timestamp = Field(default_factory=utcnow)
