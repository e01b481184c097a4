"""Reading an SSE response the way the mobile client does: data frames and comments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx
from ag_ui_validate.pytest_plugin import assert_valid_agui


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


def stream_run(client: httpx.Client, method: str, path: str, **kwargs) -> SseRun:
    """Send a request and read its whole SSE answer (or its error body)."""
    with client.stream(method, path, **kwargs) as response:
        raw = response.read().decode()
    run = SseRun(status=response.status_code, headers=response.headers, raw=raw)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        run.events, run.comments = parse_sse(raw)
    return run


def post_run(client: httpx.Client, path: str, body: object, **kwargs) -> SseRun:
    return stream_run(client, "POST", path, json=body, **kwargs)


def get_run(client: httpx.Client, path: str, **kwargs) -> SseRun:
    return stream_run(client, "GET", path, **kwargs)


def post_voice_capture(
    client: httpx.Client, name: str, data: bytes, content_type: str, **kwargs
) -> SseRun:
    """The one-request voice capture: multipart `file`, answered as the capture's run."""
    files = {"file": (name, data, content_type)}
    return stream_run(client, "POST", "/api/voice-capture", files=files, **kwargs)


def assert_valid_run(run: SseRun) -> None:
    """The contract's stream: headers, framing, timestamps, and a valid AG-UI run."""
    assert run.status == 200, run.raw[:500]
    assert run.headers["content-type"].startswith("text/event-stream")
    assert run.headers["cache-control"] == "no-cache"
    assert run.headers["x-accel-buffering"] == "no"
    assert "event:" not in run.raw
    assert all("timestamp" in e for e in run.events)
    assert_valid_agui(run.events, max_warnings=0)
