"""Azure SDK failures turned into the StorageUnavailable a service acts on, within a time bound."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from shared.domain.errors import StorageUnavailable


@contextlib.asynccontextmanager
async def unavailable_as(
    service: str, transient: frozenset[int] = frozenset({408, 429})
) -> AsyncIterator[None]:
    """Turn transport failures, throttling and server errors into StorageUnavailable; other
    answers (404, 409, 412…) pass through for the caller to handle."""
    from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError

    try:
        yield
    except (ServiceRequestError, ServiceResponseError, TimeoutError) as exc:
        raise StorageUnavailable(type(exc).__name__) from exc
    except HttpResponseError as exc:
        status = exc.status_code or 0
        if status in transient or status >= 500:
            raise StorageUnavailable(f"{service} answered {status}") from exc
        raise


@contextlib.asynccontextmanager
async def bounded(
    service: str,
    timeout_s: float,
    transient: frozenset[int] = frozenset({408, 429}),
) -> AsyncIterator[None]:
    """`unavailable_as`, within `timeout_s` (STORAGE_TIMEOUT_S, from the composition root): a
    store that hangs is a store that is down."""
    async with unavailable_as(service, transient), asyncio.timeout(timeout_s):
        yield
