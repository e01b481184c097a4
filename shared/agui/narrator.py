"""The one narrator: a capture's progress, stages and resumed answers told as AG-UI runs, live
(a text capture, a follow-up), replayed and followed (an events feed, a voice note) and resumed
(answers to interrupts). Once an outcome's events went out to a client, the run says so through
its `delivered` callback (the door wires it to the outbox); the narrator writes nothing itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from shared.agui import events as ev
from shared.agui.events import Conversation
from shared.domain.capture import InboxItem
from shared.domain.errors import Refused, refusal_for
from shared.domain.outcomes import failure_message
from shared.domain.progress import (
    Answered,
    Progress,
    Resumed,
    Settled,
    Stage,
    StageReached,
    Stopped,
)
from shared.services.ask_run import AnswerText, AskProgress, ToolFinished, ToolStarted

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from ag_ui.core import BaseEvent, RunErrorEvent

# Told, once a run's outcome (or failure) frames were handed to the client, which version of
# the capture they told: the outbox then keeps a push from telling it again.
Delivered = Callable[[InboxItem], None]


async def capture_run(
    thread_id: str,
    run_id: str,
    progress: AsyncIterator[Progress],
    conversation: Conversation,
    delivered: Delivered,
) -> AsyncIterator[BaseEvent]:
    """A capture stored, classified and filed, as one AG-UI run."""
    # The first bytes leave before any storage or model call.
    yield ev.run_started(thread_id, run_id)
    async for event in filing_events(thread_id, run_id, progress, conversation, delivered):
        yield event


async def filing_events(
    thread_id: str,
    run_id: str,
    progress: AsyncIterator[Progress],
    conversation: Conversation,
    delivered: Delivered,
) -> AsyncIterator[BaseEvent]:
    """The events of `capture_run` after RUN_STARTED (a resumed run starts its own)."""
    steps = aiter(progress)
    first = await anext(steps)
    if isinstance(first, Refused):
        yield run_error_for(first)
        return
    yield ev.step_started(ev.CLASSIFIER_STEP)
    final = await anext(steps)
    yield ev.step_finished(ev.CLASSIFIER_STEP)
    if isinstance(final, Refused):
        yield run_error_for(final)
    elif isinstance(final, Settled):
        for event in ev.outcome_events(final.item, run_id, conversation):
            yield event
        # Past the last yield: the response asked for more, so the outcome's frames were sent.
        delivered(final.item)
    else:
        yield ev.run_finished(thread_id, run_id, _status(final.item))


def run_error_for(exc: Exception) -> RunErrorEvent:
    """The RUN_ERROR that tells what a use case raised (as `refusal_for` tells it)."""
    refusal = refusal_for(exc)
    return ev.run_error(refusal.message, refusal.code)


def _status(item: InboxItem) -> dict:
    return {"status": item.status.value, "inboxItemId": item.id}


async def resume_run(
    thread_id: str,
    run_id: str,
    resume: Callable[[], Awaitable[Resumed]],
    conversation: Conversation,
    delivered: Delivered,
) -> AsyncIterator[BaseEvent]:
    """A resume as one AG-UI run: the last answer's story, or RUN_ERROR with the rule it broke.
    `resume` does the work, once RUN_STARTED is out."""
    yield ev.run_started(thread_id, run_id)
    try:
        done = await resume()
    except Refused as refused:
        yield run_error_for(refused)
        return
    if not isinstance(done, Answered):
        async for event in filing_events(thread_id, run_id, done.progress, conversation, delivered):
            yield event
        return
    item = done.item
    if not done.with_outcome or item.outcome is None:
        yield ev.run_finished(item.thread_id, run_id, _status(item))
        return
    for event in ev.outcome_events(item, run_id, conversation):
        yield event
    delivered(item)


async def feed_run(
    item: InboxItem,
    stages: AsyncIterator[StageReached | Stopped],
    delivered: Delivered,
    *,
    interrupts: bool = False,
    run_id: str | None = None,
    conversation: Conversation | None = None,
) -> AsyncIterator[BaseEvent]:
    """A capture followed from its inbox item, as one AG-UI run on its thread: replayed at once
    up to where it is, then told as it moves. The run is the capture's own unless a caller's
    run (`run_id`, and the `conversation` its client holds) asked for it."""
    run_id = run_id or item.run_id
    yield ev.run_started(item.thread_id, run_id)
    stage = Stage.WAITING
    async for reached in stages:
        if isinstance(reached, Stopped):
            yield ev.run_error(reached.message, reached.code)
            return
        told = conversation or Conversation(
            interrupts=interrupts, messages=ev.capture_messages(reached.item)
        )
        for event in events_between(reached.item, stage, reached.stage, told, run_id):
            yield event
        stage = reached.stage
        if stage in (Stage.SETTLED, Stage.FAILED) and reached.item.has_ended:
            # Past the last yield: the outcome's (or failure's) frames were sent.
            delivered(reached.item)


def events_between(
    item: InboxItem,
    before: Stage,
    after: Stage,
    conversation: Conversation | None = None,
    run_id: str | None = None,
) -> list[BaseEvent]:
    """The events that take a run from `before` to `after` (replay passes WAITING)."""
    voice = item.source == "voice"
    if after is Stage.FAILED:
        # A step the feed opened is closed before the run ends.
        open_step = {Stage.CLASSIFYING: ev.CLASSIFIER_STEP}
        if voice:
            open_step[Stage.TRANSCRIBING] = ev.TRANSCRIPTION_STEP
        closing = [ev.step_finished(open_step[before])] if before in open_step else []
        return [*closing, ev.run_error(failure_message(item.error), item.error or "FAILED")]
    events: list[BaseEvent] = []
    if voice and before < Stage.TRANSCRIBING <= after:
        events.append(ev.step_started(ev.TRANSCRIPTION_STEP))
    if before < Stage.CLASSIFYING <= after:
        if voice:
            events.append(ev.step_finished(ev.TRANSCRIPTION_STEP))
        events.append(ev.step_started(ev.CLASSIFIER_STEP))
    if before < Stage.SETTLED <= after:
        events.append(ev.step_finished(ev.CLASSIFIER_STEP))
        events.extend(ev.outcome_events(item, run_id or item.run_id, conversation))
    return events


async def ask_run(
    thread_id: str, run_id: str, progress: AsyncIterator[AskProgress]
) -> AsyncIterator[BaseEvent]:
    """A question answered as one AG-UI run: each tool as TOOL_CALL_START/ARGS/END and
    TOOL_CALL_RESULT, the answer as TEXT_MESSAGE_START/CONTENT/END (its citations in the end's
    `metadata.citations`), RUN_FINISHED with `{answer, citations}`; a refusal as RUN_ERROR."""
    yield ev.run_started(thread_id, run_id)
    message_id = f"{run_id}:answer"
    started = False
    try:
        async for step in progress:
            if isinstance(step, ToolStarted):
                # The tool calls are the assistant's turn before its answer: a message of their own.
                for event in ev.tool_call_events(
                    step.call_id, step.name, step.arguments, f"{run_id}:tools"
                ):
                    yield event
            elif isinstance(step, ToolFinished):
                yield ev.tool_call_result(f"{run_id}:{step.call_id}", step.call_id, step.result)
            elif isinstance(step, AnswerText):
                if not started:
                    started = True
                    yield ev.answer_started(message_id)
                yield ev.answer_content(message_id, step.delta)
            else:
                result = step.answer.to_json()
                if not started:
                    yield ev.answer_started(message_id)
                yield ev.answer_ended(message_id, result["citations"])
                yield ev.run_finished(thread_id, run_id, result)
                return
    except Exception as exc:  # the run ends told, whatever stopped it
        if started:
            yield ev.answer_ended(message_id, [])
        yield run_error_for(exc)
