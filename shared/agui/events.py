"""The AG-UI events of a capture's run, built from the ag-ui-protocol models: the one place
that maps a capture's state and outcome to events (narrator.py tells a run with them,
shared/http/sse.py writes them).

ag_ui.core's generated models take about 95 ms to import, a sixth of the app's cold start, so
they load with the first run rather than with the app (`ag`, below).
"""

from __future__ import annotations

import json
import re
import time
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.interrupts import (
    REASON_OF_KIND,
    InterruptKind,
    InterruptRecord,
    response_schema,
)
from shared.domain.outcomes import Outcome, confidence_words, review_question

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
# Few digits: int() refuses a number of thousands of them, and no version has more.
_VERSION = re.compile(r"(\d{1,9})\.(\d{1,9})")


def speaks_interrupts(protocol_version: str | None) -> bool:
    """Whether a client that declared `protocol_version` understands interrupts (1.0 on). No
    version means a client from before the protocol carried one; a version we cannot read is
    taken as a newer one, as the spec asks."""
    if protocol_version is None:
        return False
    match = _VERSION.fullmatch(protocol_version)
    return match is None or (int(match[1]), int(match[2])) >= (1, 0)


class Conversation(BaseModel):
    """What a run's client speaks and holds. An AG-UI 1.0 client gets the user's questions as
    interrupts, after the state and messages snapshots the spec asks for; an older client gets
    the run without them and answers through the REST routes."""

    model_config = ConfigDict(frozen=True)

    interrupts: bool = False
    # The conversation the client holds, as it sent it (JSON): the messages snapshot before an
    # interrupt repeats it, since a client replaces its messages with the snapshot's.
    messages: tuple[dict[str, Any], ...] = ()


@cache
def ag() -> ModuleType:
    """ag_ui.core, imported on first use."""
    import ag_ui.core

    return ag_ui.core


def now_ms() -> int:
    return int(time.time() * 1000)


def run_started(thread_id: str, run_id: str) -> RunStartedEvent:
    return ag().RunStartedEvent(
        thread_id=thread_id,
        run_id=run_id,
        protocol_version=ag().PROTOCOL_VERSION,  # the version this app speaks
        timestamp=now_ms(),
    )


def step_started(name: str) -> StepStartedEvent:
    return ag().StepStartedEvent(step_name=name, timestamp=now_ms())


def step_finished(name: str) -> StepFinishedEvent:
    return ag().StepFinishedEvent(step_name=name, timestamp=now_ms())


def run_finished(thread_id: str, run_id: str, result: dict) -> RunFinishedEvent:
    return ag().RunFinishedEvent(
        thread_id=thread_id, run_id=run_id, result=result, timestamp=now_ms()
    )


def run_error(message: str, code: str | None) -> RunErrorEvent:
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
        return f"Filed → {item.filed_bucket} ({_sureness(item)})"
    if item.outcome is Outcome.LOW_CONFIDENCE:
        return f"Filed → {item.filed_bucket} for now ({_sureness(item)}). {item.question_text}"
    if item.outcome is Outcome.MISUNDERSTOOD:
        return item.question_text or "What did you want to capture?"
    return "This capture stays in your inbox."


def _sureness(item: InboxItem) -> str:
    """The confidence in words; a bucket the user chose is not a guess."""
    if item.chosen_by == "user":
        return "your choice"
    return confidence_words(item.confidence or 0.0)


def outcome_events(
    item: InboxItem, run_id: str, conversation: Conversation | None = None
) -> list[BaseEvent]:
    """Text message, CUSTOM outcome, RUN_FINISHED with the outcome as result. A capture that
    asks its user something ends an interrupt-aware client's run with the question as an
    interrupt, after a snapshot of the capture and of the conversation."""
    assert item.outcome is not None
    message_id = f"{run_id}:outcome"
    value = outcome_value(item)
    text = outcome_text(item)
    result = {"status": item.status.value, "outcome": item.outcome.value, **value}
    events = [
        ag().TextMessageStartEvent(message_id=message_id, role="assistant", timestamp=now_ms()),
        ag().TextMessageContentEvent(message_id=message_id, delta=text, timestamp=now_ms()),
        ag().TextMessageEndEvent(message_id=message_id, timestamp=now_ms()),
        ag().CustomEvent(name=item.outcome.value, value=value, timestamp=now_ms()),
    ]
    asking = item.open_interrupt if conversation and conversation.interrupts else None
    if asking is None:
        return [*events, run_finished(item.thread_id, run_id, result)]
    assert conversation is not None
    said = {"id": message_id, "role": "assistant", "content": text}
    return [
        *events,
        ag().StateSnapshotEvent(snapshot=capture_state(item), timestamp=now_ms()),
        ag().MessagesSnapshotEvent(messages=[*conversation.messages, said], timestamp=now_ms()),
        ag().RunFinishedEvent(
            thread_id=item.thread_id,
            run_id=run_id,
            result=result,
            outcome=ag().RunFinishedInterruptOutcome(interrupts=[interrupt_for(item, asking)]),
            timestamp=now_ms(),
        ),
    ]


def capture_messages(item: InboxItem) -> tuple[dict[str, Any], ...]:
    """A capture's conversation when no client sent one (a voice note's feed): what was said,
    then each answer to a question."""
    said = [{"id": f"{item.id}:said", "role": "user", "content": item.text or ""}]
    answers = [
        {"id": f"{item.id}:answer:{n}", "role": "user", "content": c.text}
        for n, c in enumerate(item.clarifications, start=1)
    ]
    return tuple(said + answers)


def capture_state(item: InboxItem) -> dict[str, Any]:
    """The capture as a client shows it: what GET /api/captures/{id} answers."""
    return item.to_json()


def interrupt_for(item: InboxItem, asking: InterruptRecord) -> Any:
    """The open question as an AG-UI interrupt: what to ask, and the answer's schema."""
    metadata: dict[str, Any] = {"captureId": item.id, "kind": asking.kind.value}
    if asking.kind is InterruptKind.BUCKET:
        assert item.filed_bucket is not None and item.confidence is not None
        metadata |= {
            "bucket": item.filed_bucket.value,
            "confidence": item.confidence,
            "buckets": [b.value for b in Bucket],
        }
        # The default question restates the bucket; then the message says it once.
        asked = item.question_text
        if not asked or asked == review_question(item.filed_bucket):
            asked = "Is that right?"
        message = f"Filed under {item.filed_bucket} for now ({_sureness(item)}). {asked}"
    else:
        message = item.question_text or "What did you want to capture?"
        if asking.buckets:
            metadata["buckets"] = [b.value for b in asking.buckets]
    return ag().Interrupt(
        id=asking.id,
        reason=REASON_OF_KIND[asking.kind],
        message=message,
        response_schema=response_schema(asking.takes),
        metadata=metadata,
    )


# -- an ask run: its tools, then its answer with citations ----------------------------------


def tool_call_events(
    call_id: str, name: str, arguments: dict[str, Any], parent_message_id: str
) -> list[BaseEvent]:
    """A tool the agent calls, as TOOL_CALL_START, its arguments (JSON) as one ARGS, END."""
    return [
        ag().ToolCallStartEvent(
            tool_call_id=call_id,
            tool_call_name=name,
            parent_message_id=parent_message_id,
            timestamp=now_ms(),
        ),
        ag().ToolCallArgsEvent(
            tool_call_id=call_id,
            delta=json.dumps(arguments, ensure_ascii=False),
            timestamp=now_ms(),
        ),
        ag().ToolCallEndEvent(tool_call_id=call_id, timestamp=now_ms()),
    ]


def tool_call_result(message_id: str, call_id: str, result: dict[str, Any]) -> BaseEvent:
    """What the tool answered (its JSON, or its refusal's code and message), as a tool message."""
    return ag().ToolCallResultEvent(
        message_id=message_id,
        tool_call_id=call_id,
        content=json.dumps(result, ensure_ascii=False),
        role="tool",
        timestamp=now_ms(),
    )


def answer_started(message_id: str) -> BaseEvent:
    return ag().TextMessageStartEvent(message_id=message_id, role="assistant", timestamp=now_ms())


def answer_content(message_id: str, delta: str) -> BaseEvent:
    return ag().TextMessageContentEvent(message_id=message_id, delta=delta, timestamp=now_ms())


def answer_ended(message_id: str, citations: list[dict[str, Any]]) -> BaseEvent:
    """The assistant message's end, carrying its citations as `metadata.citations` (the
    convention of ag-ui #2569): the client keeps them on the message."""
    return ag().TextMessageEndEvent(
        message_id=message_id, metadata={"citations": citations}, timestamp=now_ms()
    )
