"""The user picks a capture's bucket: file a LOW_CONFIDENCE (or misunderstood) capture there,
or move a filed one. The user's choice wins over a classifier finishing at the same moment;
an answer to one question is taken once (the first to be saved wins)."""

from __future__ import annotations

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket, cut_title
from shared.domain.errors import CaptureDeleted, Conflict
from shared.domain.interrupts import BucketPayload, response_of
from shared.domain.messages import ClassifyJob
from shared.domain.outcomes import Outcome
from shared.domain.ports import Adapters
from shared.services.filing import file_capture
from shared.services.inbox import get_capture, not_found
from shared.services.retry_stale import on_latest


async def pick_bucket(
    user_id: str,
    capture_id: str,
    bucket: Bucket,
    adapters: Adapters,
    *,
    answering: str | None = None,
) -> InboxItem:
    """File the capture in `bucket`. `answering`: the id of the question this pick answers
    (a resume); if that question was closed meanwhile with another answer, the pick is refused
    (INTERRUPT_CLOSED), and with this same answer it is the capture as it stands."""
    item = await get_capture(user_id, capture_id, adapters.repo)
    # If this process dies between the filed item and its save, the check tidies up after it.
    job = ClassifyJob(capture_id=capture_id, user_id=user_id)
    await adapters.outbox.send_check(job, adapters.policy.recovery_delay_s)

    async def attempt(item: InboxItem) -> InboxItem:
        if answering is not None:
            question = item.interrupt(answering)
            if question is not None and not question.is_open:
                if question.closed_with("resolved", response_of(BucketPayload(bucket=bucket))):
                    return item  # this very answer was taken already
                raise Conflict(
                    f"The question {answering!r} was answered already.", "INTERRUPT_CLOSED"
                )
        # A failed capture with text (CLASSIFY_FAILED) can still be filed by hand.
        if not item.may_be_picked():
            raise Conflict("This capture has no text to file yet.", "NO_TEXT_YET")
        try:
            picked = item.picked(bucket, _title(item))
            return await file_capture(item, picked, adapters.repo, adapters.outbox)
        except CaptureDeleted:
            raise not_found() from None

    return await on_latest(item, adapters.repo, attempt, gone=not_found, busy=_busy)


def _busy() -> Conflict:
    return Conflict("This capture keeps changing. Please try again.", "CONFLICT")


def _title(item: InboxItem) -> str:
    # A misunderstood capture's title says only that; the user's words name it better.
    if item.title and item.outcome not in (Outcome.MISUNDERSTOOD, Outcome.UNRESOLVED):
        return item.title
    words = item.text_to_classify().split()
    return cut_title(" ".join(words[:8])) or "Capture"
