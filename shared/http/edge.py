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
    Conflict,
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
    UnsupportedType,
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
        except Exception:
            log.exception("%s %s failed", req.method, handler.__name__)
            response = Problem(
                500, "Something went wrong on our side. Please try again.", code="INTERNAL"
            ).response()
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
}


def problem_for(exc: Exception) -> Problem:
    """The problem+json answer to a Problem, a service's refusal, or storage being down (503:
    the client may retry)."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, Refused):
        status = next(s for kind, s in STATUS_OF_REFUSAL.items() if isinstance(exc, kind))
        headers = None
        if isinstance(exc, LimitReached):
            headers = {"Retry-After": str(exc.retry_after_s)}
        return Problem(status, exc.message, code=exc.code, headers=headers, **exc.details)
    return Problem(
        503, "Storage is unavailable right now. Please try again.", headers={"Retry-After": "5"}
    )
