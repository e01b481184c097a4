"""Reading request bodies within limits, before anything parses them."""

from __future__ import annotations

from starlette.requests import Request

from .problems import Problem


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise Problem(413, f"The body is larger than {limit} bytes.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Problem(413, f"The body is larger than {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)
