"""The one AG-UI writer: events from the ag-ui-protocol models, framed as SSE, with
keepalive comments; and the one place that maps a capture's state to events.

ag_ui.core's generated models take about 95 ms to import, a sixth of the app's cold start, so
they load with the first run rather than with the app (`ag`, below).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

from starlette.responses import StreamingResponse

from shared.domain.capture import InboxItem
from shared.domain.outcomes import Outcome
from shared.settings import get_settings

if TYPE_CHECKING:
    from ag_ui.core import (
        BaseEvent,
        RunErrorEvent,
        RunFinishedEvent,
        RunStartedEvent,
        StepFinishedEvent,
        StepStartedEvent,
    )

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
KEEPALIVE = ": keepalive\n\n"
CLASSIFIER_STEP = "Classifier"
TRANSCRIPTION_STEP = "Transcription"


@cache
def ag() -> ModuleType:
    """ag_ui.core, imported on first use."""
    import ag_ui.core

    return ag_ui.core


def now_ms() -> int:
    return int(time.time() * 1000)


def run_started(thread_id: str, run_id: str) -> RunStartedEvent:
    return ag().RunStartedEvent(thread_id=thread_id, run_id=run_id, timestamp=now_ms())


def step_started(name: str) -> StepStartedEvent:
    return ag().StepStartedEvent(step_name=name, timestamp=now_ms())


def step_finished(name: str) -> StepFinishedEvent:
    return ag().StepFinishedEvent(step_name=name, timestamp=now_ms())


def run_finished(thread_id: str, run_id: str, result: dict) -> RunFinishedEvent:
    return ag().RunFinishedEvent(
        thread_id=thread_id, run_id=run_id, result=result, timestamp=now_ms()
    )


def run_error(message: str, code: str) -> RunErrorEvent:
    return ag().RunErrorEvent(message=message, code=code, timestamp=now_ms())


def outcome_value(item: InboxItem) -> dict:
    """The CUSTOM event's value for the item's outcome (the contract's fields only)."""
    if item.outcome in (Outcome.CLASSIFIED, Outcome.LOW_CONFIDENCE):
        filed = {"inboxItemId": item.id, "bucket": item.filed_bucket, "confidence": item.confidence}
        if item.outcome is Outcome.CLASSIFIED:
            return {**filed, "title": item.title}
        return {**filed, "questionText": item.question_text}
    if item.outcome is Outcome.MISUNDERSTOOD:
        return {
            "threadId": item.thread_id,
            "inboxItemId": item.id,
            "questionText": item.question_text,
        }
    return {"inboxItemId": item.id}


def outcome_text(item: InboxItem) -> str:
    if item.outcome is Outcome.CLASSIFIED:
        return f"Filed → {item.filed_bucket} ({item.confidence:.2f})"
    if item.outcome is Outcome.LOW_CONFIDENCE:
        return f"Filed → {item.filed_bucket} for now ({item.confidence:.2f}). {item.question_text}"
    if item.outcome is Outcome.MISUNDERSTOOD:
        return item.question_text or "What did you want to capture?"
    return "This capture stays in your inbox."


def outcome_events(item: InboxItem, run_id: str) -> list[BaseEvent]:
    """Text message, CUSTOM outcome, RUN_FINISHED with the outcome as result."""
    assert item.outcome is not None
    message_id = f"{run_id}:outcome"
    value = outcome_value(item)
    return [
        ag().TextMessageStartEvent(message_id=message_id, role="assistant", timestamp=now_ms()),
        ag().TextMessageContentEvent(
            message_id=message_id, delta=outcome_text(item), timestamp=now_ms()
        ),
        ag().TextMessageEndEvent(message_id=message_id, timestamp=now_ms()),
        ag().CustomEvent(name=item.outcome.value, value=value, timestamp=now_ms()),
        run_finished(
            item.thread_id,
            run_id,
            {"status": item.status.value, "outcome": item.outcome.value, **value},
        ),
    ]


async def sse_frames(events: AsyncIterator[BaseEvent], keepalive_s: float) -> AsyncIterator[str]:
    """SSE `data:` frames as events come, and a keepalive comment after each silence."""
    iterator = aiter(events)
    pending: asyncio.Future | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(iterator))
            done, _ = await asyncio.wait({pending}, timeout=keepalive_s)
            if not done:
                yield KEEPALIVE
                continue
            finished, pending = pending, None
            try:
                event = finished.result()
            except StopAsyncIteration:
                return
            # The encoder's own framing: `data: <camelCase JSON without nulls>` and a blank line.
            yield _encoder().encode(event)
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending


@cache
def _encoder():
    from ag_ui.encoder import EventEncoder

    return EventEncoder()


def sse_response(events: AsyncIterator[BaseEvent]) -> StreamingResponse:
    frames = sse_frames(events, get_settings().keepalive_s)
    return StreamingResponse(frames, media_type="text/event-stream", headers=SSE_HEADERS)
