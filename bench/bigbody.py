"""`python -m bench bigbody`: what one big body costs the host and everyone else (issue 39).

Each kind of body is sent to a fresh devhost (so its peak memory is its own) while another
client asks for /api/openapi.json every 50 ms: the figures are the host's resident memory
before and at its peak (VmHWM), how long the big request took, and the slowest of the other
requests while it was in flight (a host that parses the big body on its event loop answers
none of them meanwhile).

- `tiny_values_33mb`: ~33 MB of `{}` with "audio" in it, the probe that froze the host;
- `voice_note_25mib`: a voice note of MAX_VOICE_BYTES in a run, as base64 (accepted);
- `text_1mb`: 1 MB of tiny values on the plain JSON door.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from pathlib import Path

import httpx

from bench.stack import Stack
from testkit.support import KEY

PING_S = 0.05


def _bodies() -> dict[str, tuple[str, bytes]]:
    audio = base64.b64encode(os.urandom(25 * 1024 * 1024)).decode()
    voice = {
        "threadId": "t-bench",
        "runId": f"r-{time.time_ns()}",
        "messages": [
            {
                "id": "m",
                "role": "user",
                "content": [
                    {
                        "type": "audio",
                        "source": {"type": "data", "value": audio, "mimeType": "audio/wav"},
                    }
                ],
            }
        ],
    }
    return {
        "tiny_values_33mb": ("/api/capture", b'{"audio": [' + b"{}," * 11_000_000 + b"{}]}"),
        "voice_note_25mib": ("/api/capture", json.dumps(voice).encode()),
        "text_1mb": ("/api/captures", b'{"text": [' + b"{}," * 330_000 + b"{}]}"),
    }


def _status_mib(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _one(s: Stack, name: str, path: str, body: bytes) -> dict:
    with s.devhost(f"bigbody-{name}", scripted=True) as host:
        assert host.proc is not None
        pid, base = host.proc.pid, host.base_url
        with httpx.Client(base_url=base, headers=KEY, timeout=120) as warm:
            warm.get("/api/openapi.json").raise_for_status()
        before = _status_mib(pid, "VmRSS")
        done = threading.Event()
        pings: list[float] = []

        def ping() -> None:
            with httpx.Client(base_url=base, timeout=120) as client:
                while not done.is_set():
                    start = time.perf_counter()
                    client.get("/api/openapi.json").raise_for_status()
                    pings.append(time.perf_counter() - start)
                    time.sleep(PING_S)

        pinger = threading.Thread(target=ping)
        pinger.start()
        time.sleep(0.5)
        start = time.perf_counter()
        headers = {**KEY, "Content-Type": "application/json"}
        with (
            httpx.Client(base_url=base, timeout=300) as client,
            client.stream("POST", path, content=body, headers=headers) as answer,
        ):
            status = answer.status_code  # a voice run streams on: its head is enough
        took = time.perf_counter() - start
        time.sleep(0.5)
        done.set()
        pinger.join()
        return {
            "status": status,
            "body_mb": round(len(body) / 1e6, 1),
            "request_s": round(took, 2),
            "rss_before_mib": before,
            "rss_peak_mib": _status_mib(pid, "VmHWM"),
            "other_requests": len(pings),
            "slowest_other_ms": round(max(pings) * 1000, 1),
        }


def run(s: Stack, repeat: int) -> dict:
    return {name: _one(s, name, path, body) for name, (path, body) in _bodies().items()}
