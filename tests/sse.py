"""Reading an SSE response the way the mobile client does: data frames and comments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx


@dataclass
class SseRun:
    status: int
    headers: httpx.Headers
    events: list[dict] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    raw: str = ""

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def custom(self) -> dict:
        (event,) = [e for e in self.events if e["type"] == "CUSTOM"]
        return event

    def last(self) -> dict:
        return self.events[-1]


def parse_sse(text: str) -> tuple[list[dict], list[str]]:
    events, comments = [], []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith(":"):
                comments.append(line[1:].strip())
            elif line.startswith("data:"):
                events.append(json.loads(line[5:].strip()))
            elif line.strip():
                raise AssertionError(f"unexpected SSE line: {line!r}")
    return events, comments


def post_run(client: httpx.Client, path: str, body: object, **kwargs) -> SseRun:
    with client.stream("POST", path, json=body, **kwargs) as response:
        raw = response.read().decode()
    run = SseRun(status=response.status_code, headers=response.headers, raw=raw)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        run.events, run.comments = parse_sse(raw)
    return run
