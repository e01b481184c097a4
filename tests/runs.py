"""The AG-UI runs the doors tell, put together as the entrypoints do: a use case's domain
progress handed to shared/agui/narrator.py (for tests that look at the events)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from shared.agui import narrator
from shared.agui.events import Conversation
from shared.domain.capture import InboxItem
from shared.domain.ports import Adapters, CaptureRepository
from shared.services.capture import TextCapture
from shared.services.feed import follow_capture
from shared.services.follow_up import answer_question
from shared.services.pipeline import capture_text
from shared.services.resume import ResumeRequest, resume
from shared.settings import get_settings


def text_capture_run(
    capture: TextCapture, adapters: Adapters, conversation: Conversation | None = None
) -> AsyncIterator[Any]:
    told = conversation or Conversation(interrupts=capture.answers_in_thread)
    progress = capture_text(capture, adapters)
    return narrator.capture_run(
        capture.thread_id, capture.run_id, progress, told, adapters.outbox.delivered
    )


def follow_up_run(item: InboxItem, answer: TextCapture, adapters: Adapters) -> AsyncIterator[Any]:
    progress = answer_question(item, answer, adapters)
    return narrator.capture_run(
        item.thread_id, answer.run_id, progress, Conversation(), adapters.outbox.delivered
    )


def resume_run(
    request: ResumeRequest, adapters: Adapters, conversation: Conversation
) -> AsyncIterator[Any]:
    return narrator.resume_run(
        request.thread_id,
        request.run_id,
        lambda: resume(request, adapters),
        conversation,
        adapters.outbox.delivered,
    )


def feed_run(
    item: InboxItem,
    repo: CaptureRepository,
    delivered: narrator.Delivered,
    *,
    interrupts: bool = False,
) -> AsyncIterator[Any]:
    stages = follow_capture(item, get_settings().policy(), repo)
    return narrator.feed_run(item, stages, delivered, interrupts=interrupts)
