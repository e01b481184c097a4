"""The HTTP edge: what every HTTP function's answer gets, in one place. Errors raised by parsing
or a service become problem+json here, anything unexpected a problem+json 500 that says nothing
of internals, and every response carries the same safety headers and exposed headers."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from shared.domain.errors import (
    STORAGE_DOWN,
    Conflict,
    Failed,
    Invalid,
    LimitReached,
    Malformed,
    NotConfigured,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
    Refused,
    StorageUnavailable,
    TooLarge,
    Unavailable,
    UnsupportedType,
    refusal_for,
)
from shared.http.problems import Problem

log = logging.getLogger(__name__)

SAFETY_HEADERS = {"X-Content-Type-Options": "nosniff"}
# The headers a browser client reads from our answers, beyond the CORS-safelisted ones: the new
# voice note's Location, Retry-After on 429/503, an edited item's ETag and the export's file
# name (Content-Disposition). The platform's CORS (Core Tools, and the
# host in Azure) only allows origins and exposes nothing, so the app names them itself. Inert
# without the platform's Access-Control-Allow-Origin, which only an allowed origin gets.
EXPOSED_HEADERS = {
    "Access-Control-Expose-Headers": "Location, Retry-After, ETag, Content-Disposition"
}

Handler = Callable[[Request], Awaitable[Response]]


def http_function(handler: Handler) -> Handler:
    """Wrap an HTTP function (under `traced`, which then sees the final status)."""

    @functools.wraps(handler)
    async def answer(req: Request) -> Response:
        try:
            response = await handler(req)
        except (Problem, Refused, StorageUnavailable) as exc:
            response = problem_for(exc).response()
        except Exception as exc:
            log.exception("%s %s failed", req.method, handler.__name__)
            response = problem_for(exc).response()
        response.headers.update(SAFETY_HEADERS)
        response.headers.update(EXPOSED_HEADERS)
        return response

    return answer


# Each kind of refusal a service raises, as the HTTP status it is answered with.
STATUS_OF_REFUSAL: dict[type[Refused], int] = {
    Malformed: 400,
    NotFound: 404,
    Conflict: 409,
    TooLarge: 413,
    UnsupportedType: 415,
    PreconditionFailed: 412,
    Invalid: 422,
    PreconditionRequired: 428,
    LimitReached: 429,
    # Not the client's fault, and not for ever: the deployment is missing a setting.
    NotConfigured: 503,
    Unavailable: 503,
    Failed: 500,
}


def problem_for(exc: Exception) -> Problem:
    """The problem+json answer to a Problem (the edge's own), or to what a use case raised, as
    `refusal_for` tells it: the status its kind's, Retry-After when trying again may work."""
    if isinstance(exc, Problem):
        return exc
    refusal = refusal_for(exc)
    status = next(s for kind, s in STATUS_OF_REFUSAL.items() if isinstance(refusal, kind))
    if isinstance(refusal, Unavailable):
        # Over HTTP, storage down is told one way whatever the route: come back later.
        return Problem(status, STORAGE_DOWN, headers=_retry_after(refusal.retry_after_s))
    headers = _retry_after(refusal.retry_after_s) if isinstance(refusal, LimitReached) else None
    return Problem(status, refusal.message, code=refusal.code, headers=headers, **refusal.details)


def _retry_after(seconds: int) -> dict[str, str]:
    return {"Retry-After": str(seconds)}
