"""Work that must not hold up an answer (best-effort publishing, the safety-net job): tasks on
the running loop, referenced until they are done so that none is collected half way."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_tasks: set[asyncio.Task[Any]] = set()


def spawn(coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    task = asyncio.create_task(coro)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


async def drain() -> None:
    """Wait for the tasks started so far (shutdown, and tests that look at their effects)."""
    while _tasks:
        await asyncio.gather(*list(_tasks), return_exceptions=True)
