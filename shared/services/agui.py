"""The AG-UI events of a capture's run, built from the ag-ui-protocol models: the one place
that maps a capture's state and outcome to events (shared/http/sse.py writes them).

ag_ui.core's generated models take about 95 ms to import, a sixth of the app's cold start, so
they load with the first run rather than with the app (`ag`, below).
"""

from __future__ import annotations

import time
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

from shared.domain.capture import InboxItem
from shared.domain.outcomes import Outcome

if TYPE_CHECKING:
    from ag_ui.core import (
        BaseEvent,
        RunErrorEvent,
        RunFinishedEvent,
        RunStartedEvent,
        StepFinishedEvent,
        StepStartedEvent,
    )

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
