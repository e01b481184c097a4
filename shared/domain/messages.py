"""The queue messages: classify jobs, and outcomes for push."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from shared.domain.classification import Bucket
from shared.domain.documents import Document, Timestamp, utcnow
from shared.domain.outcomes import FailureCode, Outcome


class ClassifyJob(Document):
    """A message on `captures-classify`."""

    capture_id: str = Field(min_length=1, max_length=200)
    user_id: str = Field(min_length=1, max_length=200)
    # A live run's check: its run holds the outcome for its stream to show, so a check that
    # finds the capture settled publishes the outcome unless it was shown (the run died).
    tells_outcome: bool = False
    # Work handed to the worker (worker.queue_for_worker), not a check sent before a write:
    # on its first delivery nothing of an earlier attempt can be left in a bucket.
    handed_over: bool = False
    traceparent: str | None = None


class BackfillJob(Document):
    """A message on `embeddings-backfill`: embed a user's captures whose vector is missing or
    behind, a page at a time, newest first, from `continuation` (the stored `createdAt` the last
    page ended at, with the ids of that instant already done, `seen`). Start one with just
    the user id."""

    user_id: str = Field(min_length=1, max_length=200)
    continuation: str | None = Field(default=None, max_length=40)
    seen: list[str] = Field(default_factory=list, max_length=1000)
    traceparent: str | None = None


class OutcomeMessage(Document):
    """A message on `captures-outcomes`: a capture settled (or failed), read by the push worker
    and open to other integrations."""

    capture_id: str
    user_id: str
    # None for a failure, whose code is `error`.
    outcome: Outcome | None = None
    error: FailureCode | None = None
    bucket: Bucket | None = None
    confidence: float | None = None
    title: str | None = None
    question_text: str | None = None
    # The settled version's `updatedAt`: which version of the capture this message is about
    # (the push worker stays silent once the capture moved on). None in messages from before.
    settled_at: Timestamp | None = None
    chosen_by: Literal["classifier", "user"] | None = None
    traceparent: str | None = None
    at: Timestamp = Field(default_factory=utcnow)


class QueueReceipt(Document):
    """What a send returned: enough to delete that message before it is delivered."""

    queue: str
    message_id: str
    pop_receipt: str
