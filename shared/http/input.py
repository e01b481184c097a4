"""Reading request bodies within limits, before anything parses them."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from shared.domain.text import valid_tree
from shared.http.problems import Problem

M = TypeVar("M", bound=BaseModel)

# No request of ours nests deeper than a few levels; AG-UI's free-form `state` and
# `forwardedProps` get room, a pathological body does not.
MAX_JSON_DEPTH = 32


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
    return as_model(read_json(body, content_type, what), model, what)


def read_json(body: bytes, content_type: str | None, what: str) -> Any:
    """`body` as JSON with valid text: 415 unless JSON, 400 unless parseable."""
    if content_type is None or content_type.split(";")[0].strip().lower() != "application/json":
        raise Problem(415, f"Send {what} as application/json.")
    try:
        raw = json.loads(body, parse_constant=_not_json)
    except RecursionError as exc:  # the parser's own limit, far above ours
        raise _too_deep() from exc
    except ValueError as exc:
        # Also UnicodeDecodeError, and an integer past Python's digit limit (5,000 digits).
        raise Problem(400, "The body is not valid JSON.", code="BAD_JSON") from exc
    if _depth(raw) > MAX_JSON_DEPTH:
        raise _too_deep()
    return valid_tree(raw)


def as_model(raw: Any, model: type[M], what: str) -> M:
    """Parsed JSON as `model`, or a 422 with the field errors."""
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


def _not_json(constant: str) -> float:
    # Python's json reads NaN and Infinity; JSON has no such values, and no store can keep them.
    raise ValueError(f"{constant} is not JSON")


def _too_deep() -> Problem:
    return Problem(400, f"The JSON nests deeper than {MAX_JSON_DEPTH} levels.", code="TOO_DEEP")


def _depth(value: object) -> int:
    """How deeply arrays and objects nest in a parsed JSON value (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_JSON_DEPTH:  # past the limit the answer is known already
            stack.extend((child, depth + 1) for child in children)
    return deepest
