"""The one AG-UI writer: a run's events framed as SSE by the protocol's own encoder, with a
keepalive comment after each silence, as a streamed response."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from functools import cache
from typing import TYPE_CHECKING

from starlette.responses import StreamingResponse

from shared.settings import get_settings

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
KEEPALIVE = ": keepalive\n\n"


async def sse_frames(events: AsyncIterator[BaseEvent], keepalive_s: float) -> AsyncIterator[str]:
    """SSE `data:` frames as events come, and a keepalive comment after each silence. Events
    the run has ready at once (an outcome's five after its STEP_FINISHED) leave in one chunk:
    one socket write instead of one each, the same bytes."""
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
            frames: list[str] = []
            while pending is not None and pending.done():
                finished, pending = pending, None
                try:
                    event = finished.result()
                except StopAsyncIteration:
                    break
                # The encoder's own framing: `data: <camelCase JSON without nulls>` and a blank
                # line.
                frames.append(_encoder().encode(event))
                # A run's first and last events leave at once: the first byte before any work,
                # and the last before the run goes on (its stream reports delivery after it).
                alone = getattr(event.type, "value", event.type) in _ALONE
                if alone or len(frames) >= _MOST_A_CHUNK:
                    break
                # One turn of the loop: the next event is ready if the run had it at hand.
                pending = asyncio.ensure_future(anext(iterator))
                await asyncio.sleep(0)
            if frames:
                yield "".join(frames)
            if pending is None and not frames:
                return
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending


# Events sent in a chunk of their own, and the most frames a chunk holds (a long run of ready
# events, an answer's deltas, still streams).
_ALONE = frozenset({"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR"})
_MOST_A_CHUNK = 16


@cache
def _encoder():
    from ag_ui.encoder import EventEncoder

    return EventEncoder()


def sse_response(events: AsyncIterator[BaseEvent]) -> StreamingResponse:
    frames = sse_frames(events, get_settings().keepalive_s)
    return StreamingResponse(frames, media_type="text/event-stream", headers=SSE_HEADERS)
