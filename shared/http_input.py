"""Reading request bodies within limits, before anything parses them."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from .problems import Problem

M = TypeVar("M", bound=BaseModel)


def check_declared_length(request: Request, limit: int) -> None:
    """413 before reading anything when Content-Length already says too much."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise Problem(413, f"The body is larger than {limit} bytes.")


async def read_body(request: Request, limit: int) -> bytes:
    check_declared_length(request, limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Problem(413, f"The body is larger than {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(body: bytes, content_type: str | None, model: type[M], what: str) -> M:
    """`body` as `model`: 415 unless JSON, 400 unless parseable, 422 with the field errors."""
    if content_type is None or content_type.split(";")[0].strip().lower() != "application/json":
        raise Problem(415, f"Send {what} as application/json.")
    try:
        raw = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Problem(400, "The body is not valid JSON.") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise Problem(
            422,
            f"The body is not a valid {what}.",
            errors=[
                {"loc": ".".join(map(str, e["loc"])), "msg": e["msg"]}
                for e in exc.errors(include_url=False, include_input=False)[:10]
            ],
        ) from exc
