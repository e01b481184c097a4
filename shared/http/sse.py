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


# A run's last event: nothing is read past it before its frame is written, since the
# narrator, asked for more after it, takes that as the run's frames having gone out (and
# marks the outcome shown).
_LAST = frozenset({"RUN_FINISHED", "RUN_ERROR"})


async def sse_frames(events: AsyncIterator[BaseEvent], keepalive_s: float) -> AsyncIterator[str]:
    """SSE `data:` frames as events come, and a keepalive comment after each silence. Events
    that come together (an outcome is six at once) leave as one chunk: one write, not six
    (issue 32); an event that is not ready at once is waited for after the chunk is out."""
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
                    if frames:
                        yield "".join(frames)
                    return
                # The encoder's own framing: `data: <camelCase JSON without nulls>`, blank line.
                frames.append(_encoder().encode(event))
                if event.type in _LAST:
                    break
                # The next one, if it is ready within one turn of the loop, goes out with it.
                pending = asyncio.ensure_future(anext(iterator))
                await asyncio.sleep(0)
            yield "".join(frames)
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
