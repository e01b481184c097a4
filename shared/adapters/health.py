"""Health of the app's dependencies and of its offline models, reported honestly and without
secrets: a model still loading is "warming", not ok."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel

from shared.adapters.clients import Clients
from shared.adapters.warm_up import ModelCheck
from shared.settings import CLASSIFY_QUEUE, VOICE_CONTAINER


class Check(BaseModel):
    status: Literal["ok", "down"]
    latencyMs: float
    error: str | None = None


class HealthReport(BaseModel):
    status: Literal["ok", "warming", "unhealthy"]
    checks: dict[str, Check]
    # Only where the app loads models itself (the offline ones, locally); none with a model
    # server, which has nothing to load and is not called by a probe.
    models: dict[str, ModelCheck] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


async def _cosmos(clients: Clients) -> None:
    await clients.cosmos_database().read()


async def _blobs(clients: Clients) -> None:
    await clients.blob_service.get_container_client(VOICE_CONTAINER).get_container_properties()


async def _queues(clients: Clients) -> None:
    await clients.queue(CLASSIFY_QUEUE).get_queue_properties()


CHECKS: dict[str, Callable[[Clients], Awaitable[None]]] = {
    "cosmos": _cosmos,
    "blobs": _blobs,
    "queues": _queues,
}


async def check_health(
    clients: Clients, limit_s: float, models: dict[str, ModelCheck] | None = None
) -> HealthReport:
    """The dependencies, each checked now within `limit_s` (HEALTH_TIMEOUT_S), with the models'
    warm-up as `models` reports it. Down beats warming: waiting would not help."""
    names = list(CHECKS)
    results = await asyncio.gather(*(_run(CHECKS[n], clients, limit_s) for n in names))
    checks = dict(zip(names, results, strict=True))
    states = {c.status for c in checks.values()} | {m.status for m in (models or {}).values()}
    status: Literal["ok", "warming", "unhealthy"] = (
        "unhealthy" if "down" in states else "warming" if "warming" in states else "ok"
    )
    return HealthReport(status=status, checks=checks, models=models or None)


async def _run(
    check: Callable[[Clients], Awaitable[None]], clients: Clients, limit_s: float
) -> Check:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(limit_s):
            await check(clients)
        error = None
    except TimeoutError:
        error = "timed out"
    except Exception as exc:
        # The class name says enough to act on; messages can carry hosts and keys.
        error = type(exc).__name__
    latency = round((time.perf_counter() - started) * 1000, 1)
    return Check(status="down" if error else "ok", latencyMs=latency, error=error)
