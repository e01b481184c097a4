"""Health of the app's dependencies, reported honestly and without secrets."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel

from shared.adapters import clients
from shared.settings import CLASSIFY_QUEUE, VOICE_CONTAINER, get_settings


class Check(BaseModel):
    status: Literal["ok", "down"]
    latencyMs: float
    error: str | None = None


class HealthReport(BaseModel):
    status: Literal["ok", "unhealthy"]
    checks: dict[str, Check]

    @property
    def ok(self) -> bool:
        return self.status == "ok"


async def _cosmos() -> None:
    await clients.cosmos_database().read()


async def _blobs() -> None:
    await clients.blob_service().get_container_client(VOICE_CONTAINER).get_container_properties()


async def _queues() -> None:
    await clients.queue_client(CLASSIFY_QUEUE).get_queue_properties()


CHECKS: dict[str, Callable[[], Awaitable[None]]] = {
    "cosmos": _cosmos,
    "blobs": _blobs,
    "queues": _queues,
}


async def check_health() -> HealthReport:
    limit_s = get_settings().health_timeout_s
    names = list(CHECKS)
    results = await asyncio.gather(*(_run(CHECKS[n], limit_s) for n in names))
    checks = dict(zip(names, results, strict=True))
    healthy = all(c.status == "ok" for c in checks.values())
    return HealthReport(status="ok" if healthy else "unhealthy", checks=checks)


async def _run(check: Callable[[], Awaitable[None]], limit_s: float) -> Check:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(limit_s):
            await check()
        error = None
    except TimeoutError:
        error = "timed out"
    except Exception as exc:
        # The class name says enough to act on; messages can carry hosts and keys.
        error = type(exc).__name__
    latency = round((time.perf_counter() - started) * 1000, 1)
    return Check(status="down" if error else "ok", latencyMs=latency, error=error)
