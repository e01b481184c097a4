"""RFC 9457 problem details: the one shape of every error answered before a stream starts."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    412: "Precondition failed",
    413: "Content too large",
    415: "Unsupported media type",
    416: "Range not satisfiable",
    422: "Unprocessable content",
    428: "Precondition required",
    429: "Too many requests",
    503: "Service unavailable",
}


class Problem(Exception):
    """Raise while parsing a request; the HTTP edge (shared/http/edge.py) answers it."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code
        self.headers = headers
        self.extra = extra

    def response(self) -> JSONResponse:
        body = {
            "type": "about:blank",
            "title": TITLES.get(self.status, "Error"),
            "status": self.status,
            "detail": self.detail,
        }
        if self.code:
            body["code"] = self.code
        body.update(self.extra)
        return JSONResponse(
            body,
            status_code=self.status,
            media_type="application/problem+json",
            headers=self.headers,
        )
