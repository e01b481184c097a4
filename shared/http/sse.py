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
