"""The queue messages: classify jobs, and outcomes for push."""

from __future__ import annotations

from pydantic import Field

from shared.domain.classification import Bucket
from shared.domain.documents import Document, Timestamp, utcnow
from shared.domain.outcomes import Outcome


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
