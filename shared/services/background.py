"""A run's work, apart from the stream that tells it (the pipeline's store-and-file, and its
model call asked ahead): tasks on the running loop, referenced until they are done so that none
is collected half way. What follows a write runs on the outbox's own (services/outbox.py)."""

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
