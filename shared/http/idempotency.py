"""The Idempotency-Key header: the client's name for one capture, so its retries land on it."""

from __future__ import annotations

from starlette.requests import Request

from shared.http.problems import Problem

MAX_KEY_CHARS = 200


def idempotency_key(request: Request) -> str | None:
    """The header's key, or None; a 400 when it is too long to be used whole (cutting it would
    let two different keys name the same capture)."""
    key = (request.headers.get("idempotency-key") or "").strip()
    if len(key) > MAX_KEY_CHARS:
        raise Problem(
            400,
            f"Idempotency-Key is longer than {MAX_KEY_CHARS} characters.",
            code="BAD_IDEMPOTENCY_KEY",
        )
    return key or None
