"""Capture text: store it (status received) before anything else can fail."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from shared.domain.capture import InboxItem
from shared.domain.errors import Conflict, Invalid
from shared.domain.ids import capture_id_for, request_key
from shared.domain.ports import CaptureRepository


class TextCapture(BaseModel):
    """A parsed, validated text capture request."""

    user_id: str
    thread_id: str
    run_id: str
    text: str
    capture_key: str  # the Idempotency-Key, else the run id
    # The client answers questions on the thread (AG-UI 1.0 interrupts): while one is open, the
    # thread takes the answer, not new captures.
    answers_in_thread: bool = False

    @property
    def capture_id(self) -> str:
        return capture_id_for(self.user_id, self.capture_key)


@dataclass(frozen=True)
class InRun:
    """The AG-UI run a capture came in: its thread and run, and whether its client answers
    questions in the thread (AG-UI 1.0 interrupts)."""

    thread_id: str
    run_id: str
    answers_in_thread: bool = False


def new_text_capture(
    user_id: str,
    text: str,
    idempotency_key: str | None,
    max_chars: int,
    *,
    run: InRun | None = None,
) -> TextCapture:
    """A text capture by the rules every door follows: the text without the spaces around it,
    not empty and at most `max_chars`; named by the request (`ids.request_key`). A capture sent
    outside a run is a thread and a run of its own, named as the capture."""
    text = text.strip()
    if not text:
        raise Invalid("The capture is empty.", "EMPTY_CAPTURE")
    if len(text) > max_chars:
        raise Invalid(f"The capture is longer than {max_chars} characters.", "CAPTURE_TOO_LONG")
    key = request_key(idempotency_key, run.run_id if run else None)
    if run is None:
        capture_id = capture_id_for(user_id, key)
        run = InRun(thread_id=capture_id, run_id=capture_id)
    return TextCapture(
        user_id=user_id,
        thread_id=run.thread_id,
        run_id=run.run_id,
        text=text,
        capture_key=key,
        answers_in_thread=run.answers_in_thread,
    )


def inbox_item_for(capture: TextCapture) -> InboxItem:
    """The inbox item a new text capture is stored as (status received)."""
    return InboxItem(
        id=capture.capture_id,
        user_id=capture.user_id,
        source="text",
        text=capture.text,
        thread_id=capture.thread_id,
        run_id=capture.run_id,
    )


async def store_text_capture(
    capture: TextCapture, item: InboxItem, repo: CaptureRepository
) -> InboxItem:
    """Store the capture as `item` (its `inbox_item_for`); a retry gets the item stored the
    first time."""
    if capture.answers_in_thread:
        await _refuse_while_asking(capture, repo)
    stored, created = await repo.add(item)
    if stored.is_deleted:
        raise Conflict("This capture was deleted.", "CAPTURE_DELETED")
    if not created and (stored.source, stored.text, stored.thread_id) != (
        item.source,
        item.text,
        item.thread_id,
    ):
        # As payment APIs do: one key names one request; another body under it is a mistake.
        raise Conflict(
            "This runId (or Idempotency-Key) was already used for a different capture.",
            "IDEMPOTENCY_KEY_REUSED",
        )
    return stored


async def _refuse_while_asking(capture: TextCapture, repo: CaptureRepository) -> None:
    """A thread with an open question takes its answer, not new input. (A retry of the run
    that asked is the same capture, and goes on.)"""
    for other in await repo.on_thread(capture.user_id, capture.thread_id):
        if other.open_interrupt is not None and other.id != capture.capture_id:
            raise Conflict(
                "This thread is waiting for an answer to its question: resume it (answer or "
                "cancel) before sending anything new.",
                "INTERRUPT_PENDING",
            )
