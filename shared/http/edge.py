"""The HTTP edge: what every HTTP function's answer gets, in one place. Errors raised by parsing
or a service become problem+json here, anything unexpected a problem+json 500 that says nothing
of internals, and every response carries the same safety headers."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from shared.adapters.storage_errors import StorageUnavailable
from shared.http.problems import Problem, error_response

log = logging.getLogger(__name__)

SAFETY_HEADERS = {"X-Content-Type-Options": "nosniff"}

Handler = Callable[[Request], Awaitable[Response]]


def http_function(handler: Handler) -> Handler:
    """Wrap an HTTP function (under `traced`, which then sees the final status)."""

    @functools.wraps(handler)
    async def answer(req: Request) -> Response:
        try:
            response = await handler(req)
        except (Problem, StorageUnavailable) as exc:
            response = error_response(exc)
        except Exception:
            log.exception("%s %s failed", req.method, handler.__name__)
            response = Problem(
                500, "Something went wrong on our side. Please try again.", code="INTERNAL"
            ).response()
        response.headers.update(SAFETY_HEADERS)
        return response

    return answer
