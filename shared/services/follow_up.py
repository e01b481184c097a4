"""Answer a capture's question in words (MISUNDERSTOOD, or LOW_CONFIDENCE's box): the
clarification goes on the same inbox item (never a second one), and the capture is settled
again on the answer (services/answers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from shared.domain.capture import Clarification, InboxItem
from shared.domain.errors import Conflict, NotFound
from shared.domain.interrupts import AnswerPayload, response_of
from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters, CaptureRepository
from shared.domain.progress import Progress
from shared.services.capture import TextCapture
from shared.services.inbox import get_capture
from shared.services.pipeline import filing_progress
from shared.services.retry_stale import on_latest


def _answered(item: InboxItem, run_id: str) -> bool:
    return any(c.run_id == run_id for c in item.clarifications)


async def open_follow_up(
    capture_id: str, answer: TextCapture, repo: CaptureRepository
) -> InboxItem:
    """The capture the answer is for, checked before any stream starts (404, 409)."""
    item = await get_capture(answer.user_id, capture_id, repo)
    if not _answered(item, answer.run_id) and not item.can("reopened"):
        raise Conflict(
            "Only a capture waiting for an answer to its question takes a follow-up.",
            "NOT_AWAITING_CLARIFICATION",
            captureStatus=item.status.value,
        )
    return item


def answer_question(
    item: InboxItem, answer: TextCapture, adapters: Adapters, *, answering: str | None = None
) -> AsyncIterator[Progress]:
    """Answer the capture's question and file it again: progress like a text capture's.
    `answering`: the id of the question this answers, as `store_clarification` takes it."""
    return filing_progress(
        ClassifyJob(capture_id=item.id, user_id=item.user_id),
        lambda: store_clarification(item, answer, adapters.repo, answering=answering),
        adapters,
    )


async def store_clarification(
    item: InboxItem, answer: TextCapture, repo: CaptureRepository, *, answering: str | None = None
) -> InboxItem:
    """Add the answer and reopen the capture for the classifier. A retried run (same runId)
    finds its answer stored and goes on from there. `answering`: the id of the question this
    answers (a resume); the first answer saved wins it, and a different one is refused."""

    async def attempt(item: InboxItem) -> InboxItem:
        if _answered(item, answer.run_id):
            return item
        if item.is_deleted:
            raise _deleted()
        question = item.interrupt(answering) if answering is not None else None
        if question is not None and not question.is_open:
            if question.closed_with("resolved", response_of(AnswerPayload(answer=answer.text))):
                return item  # this very answer was taken already
            raise Conflict(f"The question {answering!r} was answered already.", "INTERRUPT_CLOSED")
        if not item.can("reopened"):
            raise _changed()
        clarification = Clarification(run_id=answer.run_id, text=answer.text)
        return await repo.save(item.reopened(clarification))

    return await on_latest(item, repo, attempt, gone=_deleted, busy=_changed)


def _deleted() -> NotFound:
    return NotFound("This capture was deleted.", "NOT_FOUND")


def _changed() -> Conflict:
    return Conflict("This capture changed meanwhile. Please reload it.", "CONFLICT")
