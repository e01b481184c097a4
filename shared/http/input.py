"""Reading request bodies within limits, before anything parses them."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from shared.domain.text import valid_tree
from shared.http.problems import Problem

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
P = ParamSpec("P")

# No request of ours nests deeper than a few levels; AG-UI's free-form `state` and
# `forwardedProps` get room, a pathological body does not.
MAX_JSON_DEPTH = 32
# A body larger than this is parsed in a worker thread: a megabyte of tiny JSON values takes a
# second to read and check, and the event loop must go on serving every other request meanwhile.
INLINE_PARSE_BYTES = 64 * 1024


def body_too_large(limit: int, audio_chars: int = 0) -> Problem:
    beside = (
        f", besides a voice note's base64 (up to {audio_chars} characters)" if audio_chars else ""
    )
    return Problem(413, f"The body is larger than {limit} bytes{beside}.", code="BODY_TOO_LARGE")


def check_declared_length(request: Request, limit: int) -> None:
    """413 before reading anything when Content-Length already says too much."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise body_too_large(limit)


async def read_body(request: Request, limit: int) -> bytes:
    check_declared_length(request, limit)
    body = bytearray()
    async for chunk in request.stream():
        if len(body) + len(chunk) > limit:
            raise body_too_large(limit)
        body += chunk
    return bytes(body)


async def read_body_with_audio(
    request: Request, limit: int, audio_chars: int
) -> tuple[bytes, slice | None]:
    """A body of which everything but one run of base64 characters (a voice note's audio, at
    most `audio_chars` long) fits in `limit` bytes; with the run's place when the body is over
    `limit`. What cannot be such a body is refused as it arrives (413), before the rest of it
    is read and before anything parses it."""
    total, too_large = limit + audio_chars, body_too_large(limit, audio_chars)
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > total:
        raise too_large
    body, runs = bytearray(), _LongestRun()
    async for chunk in request.stream():
        if len(body) + len(chunk) > total:
            raise too_large
        runs.feed(chunk, len(body))
        body += chunk
        if len(body) - runs.longest > limit:
            raise too_large
    return bytes(body), (runs.span if len(body) > limit else None)


_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
# Shorter runs cannot be what takes a body past its limit by more than this; skipping them keeps
# a body of many tiny values cheap to scan.
_LONG_RUN = re.compile(rb"[A-Za-z0-9+/=]{256,}")


class _LongestRun:
    """The longest run of base64 characters in a body read chunk by chunk (a run may span
    chunks), scanned in C: `bytes.strip` and one regular expression per chunk."""

    def __init__(self) -> None:
        self.span = slice(0, 0)
        self._open: int | None = None  # where the run reaching the end so far started

    @property
    def longest(self) -> int:
        return self.span.stop - self.span.start

    def feed(self, chunk: bytes, offset: int) -> None:
        size = len(chunk)
        lead = size - len(chunk.lstrip(_BASE64))
        if lead == size:  # all of it continues (or starts) a run
            self._open = offset if self._open is None else self._open
            self._note(self._open, offset + size)
            return
        self._note(offset if self._open is None else self._open, offset + lead)
        for match in _LONG_RUN.finditer(chunk, lead):
            self._note(offset + match.start(), offset + match.end())
        trail = size - len(chunk.rstrip(_BASE64))
        self._open = offset + size - trail if trail else None

    def _note(self, start: int, stop: int) -> None:
        if stop - start > self.longest:
            self.span = slice(start, stop)


async def parsed(parse: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`parse(body, ...)`, in a worker thread when the body (the first argument) is large, so
    that no body holds up the other requests while it is parsed and checked."""
    body = args[0]
    if isinstance(body, bytes | bytearray) and len(body) <= INLINE_PARSE_BYTES:
        return parse(*args, **kwargs)
    return await asyncio.to_thread(parse, *args, **kwargs)


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
    """How deeply arrays and objects nest in a parsed JSON value, counted level by level
    (without recursion, and only as far as one past the limit)."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level and depth <= MAX_JSON_DEPTH:
        depth += 1
        level = [
            child
            for node in level
            for child in (node.values() if isinstance(node, dict) else node)
            if isinstance(child, dict | list)
        ]
    return depth
