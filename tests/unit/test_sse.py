"""shared/http/sse.py: events that come together leave as one chunk, an event that is not
ready is waited for after what came before went out, and nothing is read past a run's last
event before its frame is out (the narrator marks an outcome shown on that read)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from shared.agui import events as ev
from shared.http.sse import KEEPALIVE, sse_frames


async def test_events_that_come_together_leave_as_one_chunk() -> None:
    model = asyncio.Event()
    read_past_the_end = False

    async def run() -> AsyncIterator:
        nonlocal read_past_the_end
        yield ev.run_started("t", "r")
        yield ev.step_started(ev.CLASSIFIER_STEP)
        await model.wait()
        yield ev.step_finished(ev.CLASSIFIER_STEP)
        yield ev.run_finished("t", "r", {"status": "filed"})
        read_past_the_end = True

    chunks = sse_frames(run(), keepalive_s=5)
    first = await anext(chunks)
    assert first.count("data: ") == 2  # RUN_STARTED and STEP_STARTED were ready together
    assert '"RUN_STARTED"' in first and '"STEP_STARTED"' in first
    model.set()
    last = await anext(chunks)
    assert last.count("data: ") == 2 and last.index("STEP_FINISHED") < last.index("RUN_FINISHED")
    assert not read_past_the_end  # the run's last frame is in hand, not yet sent
    assert await anext(chunks, None) is None
    assert read_past_the_end


async def test_an_event_not_ready_at_once_waits_for_its_own_chunk() -> None:
    later = asyncio.Event()

    async def run() -> AsyncIterator:
        yield ev.run_started("t", "r")
        await later.wait()
        yield ev.run_error("down", "STORAGE_UNAVAILABLE")

    chunks = sse_frames(run(), keepalive_s=0.05)
    assert '"RUN_STARTED"' in await anext(chunks)
    assert await anext(chunks) == KEEPALIVE
    later.set()
    rest = [chunk async for chunk in chunks if chunk != KEEPALIVE]
    assert len(rest) == 1 and '"RUN_ERROR"' in rest[0]
