"""The SSE writer's chunks: events a run has ready at once leave together, a run's first and last
events end their chunk, a silence still gets its keepalive, and the bytes are the encoder's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ag_ui.core import (
    BaseEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from ag_ui.encoder import EventEncoder

from shared.http.sse import KEEPALIVE, sse_frames

STARTED = RunStartedEvent(thread_id="t", run_id="r")
OUTCOME: list[BaseEvent] = [
    StepFinishedEvent(step_name="Classifier"),
    TextMessageStartEvent(message_id="m", role="assistant"),
    TextMessageContentEvent(message_id="m", delta="Filed"),
    TextMessageEndEvent(message_id="m"),
    RunFinishedEvent(thread_id="t", run_id="r", result={"status": "filed"}),
]


def frames_of(*events: BaseEvent) -> str:
    return "".join(EventEncoder().encode(e) for e in events)


async def test_an_outcome_ready_at_once_is_one_chunk_after_a_first_event_alone() -> None:
    after_last: list[int] = []
    store_done = asyncio.Event()

    async def run() -> AsyncIterator[BaseEvent]:
        yield STARTED
        await store_done.wait()  # the work between: the run has nothing ready
        yield StepStartedEvent(step_name="Classifier")
        await asyncio.sleep(0.01)
        for event in OUTCOME:
            yield event
        # Past the last yield (where a run reports delivery): only once its chunk was taken.
        after_last.append(len(chunks))

    chunks: list[str] = []
    async for chunk in sse_frames(run(), keepalive_s=5):
        chunks.append(chunk)
        if len(chunks) == 1:
            store_done.set()
    assert chunks == [
        frames_of(STARTED),
        frames_of(StepStartedEvent(step_name="Classifier")),
        frames_of(*OUTCOME),
    ]
    assert after_last == [3]


async def test_a_silence_gets_its_keepalive_and_a_long_run_of_ready_events_still_streams() -> None:
    many = [TextMessageContentEvent(message_id="m", delta=str(n)) for n in range(40)]

    async def run() -> AsyncIterator[BaseEvent]:
        yield STARTED
        await asyncio.sleep(0.05)
        for event in many:
            yield event

    chunks = [c async for c in sse_frames(run(), keepalive_s=0.01)]
    assert chunks[0] == frames_of(STARTED)
    assert KEEPALIVE in chunks
    sent = [c for c in chunks[1:] if c != KEEPALIVE]
    assert "".join(sent) == frames_of(*many)
    assert len(sent) > 1  # chunks of a bounded size, not one for the whole run
