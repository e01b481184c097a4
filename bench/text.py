"""Text capture at the devhost: first SSE byte and outcome over many sequential captures, and
50 captures at once (all filed, none twice)."""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench.measure import RunTiming, percentiles, timed_run
from testkit.support import KEY, docs, run_input

LABELLED = Path(__file__).resolve().parent.parent / "tests" / "data" / "labelled_captures.jsonl"


def capture_texts() -> itertools.cycle:
    """Real-looking captures (the labelled set), round and round."""
    rows = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    return itertools.cycle([r["text"] for r in rows])


def capture(client: httpx.Client, text: str) -> RunTiming:
    body = run_input(text, thread_id=f"bench-{uuid.uuid4()}")
    return timed_run(client, "POST", "/api/capture", json=body, headers=KEY)


def sequential(base_url: str, count: int, warm_up: int = 10) -> dict:
    texts = capture_texts()
    with httpx.Client(base_url=base_url, timeout=60) as client:
        for _ in range(warm_up):  # models loaded, connections open, code paths warm
            capture(client, next(texts))
        timings = [capture(client, next(texts)) for _ in range(count)]
    statuses: dict[str | None, int] = {}
    for t in timings:
        statuses[t.result.get("status")] = statuses.get(t.result.get("status"), 0) + 1
    return {
        "first_byte_ms": percentiles([t.first_byte_s for t in timings]),
        "outcome_ms": percentiles([t.outcome_s for t in timings]),
        "statuses": statuses,
    }


def concurrent(base_url: str, cosmos, count: int = 50) -> dict:
    """`count` captures released at the same instant; then every one is checked in Cosmos."""
    texts = capture_texts()
    bodies = [next(texts) for _ in range(count)]
    gate = threading.Barrier(count)
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    with httpx.Client(base_url=base_url, timeout=120, limits=limits) as client:

        def one(text: str) -> RunTiming:
            gate.wait()
            return capture(client, text)

        with ThreadPoolExecutor(max_workers=count) as pool:
            timings = list(pool.map(one, bodies))
    filed, duplicated = 0, 0
    for t in timings:
        inbox = docs(cosmos, "Inbox", t.result["inboxItemId"])
        bucket = t.result.get("bucket")
        in_bucket = docs(cosmos, bucket, t.result["inboxItemId"]) if bucket else []
        filed += len(inbox) == 1 and inbox[0]["status"] == "filed" and len(in_bucket) == 1
        duplicated += len(inbox) > 1 or len(in_bucket) > 1
    return {
        "captures": count,
        "filed": filed,
        "duplicated": duplicated,
        "outcome_ms": percentiles([t.outcome_s for t in timings]),
        "first_byte_ms": percentiles([t.first_byte_s for t in timings]),
    }
