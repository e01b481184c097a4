"""What a capture asks its user, as AG-UI 1.0 interrupts: one open question at a time, with
the shape of the answer it takes. The records live on the capture, so any instance can check a
resume, and a replayed resume finds its answer."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, TypeAdapter, ValidationError

from shared.domain.classification import Bucket
from shared.domain.documents import Document, RequestBody, Timestamp, utcnow


class InterruptKind(StrEnum):
    ANSWER = "answer"  # MISUNDERSTOOD: what did you mean?
    BUCKET = "bucket"  # LOW_CONFIDENCE: is this the right bucket, which one, or what is it?


# An answer to a question says what the capture is or where it goes; a longer text is a
# capture of its own. Every door refuses a longer one (the question's schema says so too).
MAX_ANSWER_CHARS = 4000


class AnswerPayload(RequestBody):
    """The answer to a question: the user's words, classified with the capture. Kept trimmed,
    so an answer sent again with other spaces around it is the same answer."""

    answer: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ANSWER_CHARS)
    ]


class BucketPayload(RequestBody):
    """The user's pick of the capture's bucket."""

    bucket: Bucket


# What each kind of question takes. A which-bucket question takes a bucket or, typed in the
# box beside the buttons, an answer: one that names a bucket files it there, one that explains
# is classified (shared/domain/answers.py).
PAYLOADS_OF_KIND: dict[InterruptKind, tuple[type[RequestBody], ...]] = {
    InterruptKind.ANSWER: (AnswerPayload,),
    InterruptKind.BUCKET: (BucketPayload, AnswerPayload),
}
_TAKES: dict[InterruptKind, TypeAdapter[AnswerPayload | BucketPayload]] = {
    InterruptKind.ANSWER: TypeAdapter[AnswerPayload | BucketPayload](AnswerPayload),
    InterruptKind.BUCKET: TypeAdapter(BucketPayload | AnswerPayload),
}

# AG-UI's reasons: an open question is `input_required`; a provisional bucket to confirm (or
# correct) is a `confirmation`.
REASON_OF_KIND = {InterruptKind.ANSWER: "input_required", InterruptKind.BUCKET: "confirmation"}


def response_schema(kind: InterruptKind) -> dict[str, Any]:
    """The JSON schema of the payload a resume must carry (sent as `responseSchema`)."""
    return _TAKES[kind].json_schema(by_alias=True)


def response_of(payload: AnswerPayload | BucketPayload) -> dict[str, Any]:
    """How an answer is kept on its question: its JSON, as normalised when it was parsed."""
    return payload.model_dump(mode="json", by_alias=True)


def parse_payload(kind: InterruptKind, payload: Any) -> AnswerPayload | BucketPayload | None:
    """The payload as its model, or None when it does not fit the kind's schema."""
    try:
        return _TAKES[kind].validate_python(payload)
    except ValidationError:
        return None


class InterruptRecord(Document):
    """One question put to the user, and how it was closed."""

    id: str
    kind: InterruptKind
    status: Literal["open", "resolved", "cancelled"] = "open"
    # The payload that resolved it (JSON, as sent), so that a replayed resume is recognised.
    response: dict[str, Any] | None = None
    opened_at: Timestamp = Field(default_factory=utcnow)
    closed_at: Timestamp | None = None
    # The buckets a "what did you mean?" question names ("Projects or Admin? Or tell me what it
    # is"): offered as buttons, so it takes a bucket as well as words.
    buckets: list[Bucket] = Field(default_factory=list)

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    @property
    def takes(self) -> InterruptKind:
        """What its answer may be: a question that names buckets takes a which-bucket
        question's payloads (a bucket, or words); the others, their kind's."""
        return InterruptKind.BUCKET if self.buckets else self.kind

    def closed_with(
        self, status: Literal["resolved", "cancelled"], response: dict[str, Any] | None
    ) -> bool:
        """Whether this question was closed this very way (a replayed answer)."""
        return self.status == status and (response is None or self.response == response)

    def closed(
        self, status: Literal["resolved", "cancelled"], response: dict[str, Any] | None = None
    ) -> InterruptRecord:
        return self.model_copy(
            update={"status": status, "response": response, "closed_at": utcnow()}
        )
