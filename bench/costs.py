"""What one text capture and one voice note cost in operations: executions, Cosmos requests,
Storage operations and model calls, counted while a devhost serves them through taps in front of
Azurite and the counter in the local Cosmos server. BENCHMARKS.md prices them."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from bench.cosmos_count import cosmos_requests, since
from bench.measure import timed_run
from bench.stack import Stack
from bench.text import capture, capture_texts
from bench.voice import CLIP
from devhost.emulators import Ports, storage_connection_string
from tests import fake_openai
from tests.storage_tap import Exchange, StorageTap
from tests.support import KEY

# Each capture's recovery check (a delayed job on captures-classify that reads it once more)
# comes due after RECOVERY_DELAY_S, 120 s by default: brought forward so it is counted here.
RECOVERY_DELAY_S = 2.0
# After the last run, how long the queue work it started (outcome messages and their pushes,
# the recovery checks) may take.
SETTLE_S = 10.0
TRANSCRIPT = "Remember to call the dentist on Monday morning about the appointment."


@contextmanager
def tapped_host(s: Stack, name: str, **env: str) -> Iterator[tuple]:
    """A devhost with the scripted model, reaching Azurite's blobs and queues through taps."""
    with StorageTap(s.ports.blob) as blobs, StorageTap(s.ports.queue) as queues:
        storage = storage_connection_string(
            Ports(blob=blobs.port, queue=queues.port, table=s.ports.table, cosmos=s.ports.cosmos)
        )
        env = {"RECOVERY_DELAY_S": str(RECOVERY_DELAY_S), "PUSH_DELAY_S": "1", **env}
        with s.devhost(name, scripted=True, AzureWebJobsStorage=storage, **env) as host:
            time.sleep(3)  # start-up's own requests (queues created, first polls) left behind
            yield host, blobs, queues


def storage_operation(e: Exchange) -> str | None:
    """A Storage operation's billing class, or None for the host's idle trigger polling: an
    empty queue poll, or the devhost's scan of the voice container (Event Grid in Azure)."""
    if e.query.get("comp") == "list":
        return None
    if e.path.endswith("/messages"):
        if e.method == "GET":
            return "queue get" if b"<QueueMessage>" in e.body else None
        return "queue put" if e.method == "POST" else f"queue {e.method.lower()}"
    if "/messages/" in e.path:
        return "queue delete" if e.method == "DELETE" else "queue update"
    return {"PUT": "blob write", "GET": "blob read", "HEAD": "blob read", "DELETE": "blob delete"}[
        e.method
    ] + (" (lease/receipt)" if e.query.get("comp") in ("lease", "metadata") else "")


def _storage(taps: tuple[StorageTap, StorageTap], since_s: float) -> tuple[Counter, int]:
    ops: Counter = Counter()
    executions = 0
    for tap in taps:
        for e in tap.exchanges():
            if e.sent < since_s:
                continue
            kind = storage_operation(e)
            if kind:
                ops[kind] += 1
            if kind == "queue get":  # each message a queue trigger is handed is one execution
                executions += e.body.count(b"<QueueMessage>")
    return ops, executions


def _per(total: dict, count: int) -> dict:
    return {k: round(v / count, 2) for k, v in sorted(total.items())}


def text_captures(s: Stack, count: int = 30) -> dict:
    s.model.reset()
    s.model.set_default(fake_openai.classification("Projects", 0.9, "Bench", delay_s=0.3))
    with tapped_host(s, "costs-text") as (host, blobs, queues):
        texts = capture_texts()
        before, started = cosmos_requests(s.settings["COSMOS_ENDPOINT"]), time.monotonic()
        with httpx.Client(base_url=host.base_url, timeout=60) as client:
            for _ in range(count):
                capture(client, next(texts))
        time.sleep(SETTLE_S)
        cosmos = since(before, cosmos_requests(s.settings["COSMOS_ENDPOINT"]))
        ops, queue_runs = _storage((blobs, queues), started)
    chat = [r for r in s.model.requests if r.json and "messages" in r.json]
    return {
        "captures": count,
        "executions": round(1 + queue_runs / count, 2),  # the HTTP run, and queue triggers
        "cosmos": _per(cosmos, count),
        "storage": _per(ops, count),
        "model_calls": round(len(chat) / count, 2),
        "completion_chars": _completion_chars(),
    }


def voice_notes(s: Stack, count: int = 5) -> dict:
    """`count` 5 s notes as the phone sends them: upload URL, events feed, PUT, outcome."""
    s.model.reset()
    s.model.set_default(fake_openai.classification("Admin", 0.9, "Dentist", delay_s=0.3))
    s.model.set_default(fake_openai.transcription(TRANSCRIPT, delay_s=1.0), fake_openai.TRANSCRIBE)
    clip = CLIP.read_bytes()
    with tapped_host(s, "costs-voice") as (host, blobs, queues):
        before, started = cosmos_requests(s.settings["COSMOS_ENDPOINT"]), time.monotonic()
        with httpx.Client(base_url=host.base_url, timeout=60) as client:
            for _ in range(count):
                _one_note(client, clip)
        time.sleep(SETTLE_S)
        cosmos = since(before, cosmos_requests(s.settings["COSMOS_ENDPOINT"]))
        ops, queue_runs = _storage((blobs, queues), started)
    requests = s.model.requests
    transcriptions = [r for r in requests if r.file is not None]
    return {
        "notes": count,
        # Two HTTP runs (the upload URL, the feed), the blob trigger, and queue triggers.
        "executions": round(3 + queue_runs / count, 2),
        "cosmos": _per(cosmos, count),
        "storage": _per(ops, count),
        "model_calls": round((len(requests) - len(transcriptions)) / count, 2),
        "transcriptions": round(len(transcriptions) / count, 2),
        "transcript": TRANSCRIPT,
    }


def _one_note(client: httpx.Client, clip: bytes) -> None:
    upload = client.post("/api/voice-notes", json={"contentType": "audio/mp4"}, headers=KEY).json()
    ended: dict = {}
    feed = threading.Thread(
        target=lambda: ended.update(run=timed_run(client, "GET", upload["eventsUrl"], headers=KEY))
    )
    feed.start()
    time.sleep(0.1)
    httpx.put(upload["uploadUrl"], content=clip, headers=upload["uploadHeaders"]).raise_for_status()
    feed.join(timeout=60)
    if ended["run"].result.get("type") == "RUN_ERROR":
        raise RuntimeError(f"a voice note failed: {ended['run'].result}")


def _completion_chars() -> int:
    """The scripted answer's size: the JSON a classification comes back as."""
    step = fake_openai.classification("Projects", 0.9, "Call Sarah about the budget review")
    return len(step.content or "")


def idle_feed_reads(s: Stack, feeds: int = 8) -> dict:
    """Voice notes whose audio never comes: each feed open until its TIMEOUT (EVENTS_TIMEOUT_S,
    120 s by default); the Cosmos reads each one made."""
    with s.devhost("costs-idle", scripted=True, MAX_FEEDS_PER_USER="1000") as host:
        with httpx.Client(base_url=host.base_url, timeout=300) as client:
            notes = [
                client.post(
                    "/api/voice-notes", json={"contentType": "audio/mp4"}, headers=KEY
                ).json()
                for _ in range(feeds)
            ]
            before, started = cosmos_requests(s.settings["COSMOS_ENDPOINT"]), time.monotonic()
            ends: list = []
            threads = [
                threading.Thread(
                    target=lambda url=n["eventsUrl"]: ends.append(
                        timed_run(client, "GET", url, headers=KEY)
                    )
                )
                for n in notes
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
            took = time.monotonic() - started
        after = cosmos_requests(s.settings["COSMOS_ENDPOINT"])
    reads = after.get("read", 0) - before.get("read", 0)
    codes = sorted({e.result.get("code") for e in ends})
    return {
        "feeds": feeds,
        "open_s": round(took, 1),
        "ended_with": codes,
        "reads_per_feed": round(reads / feeds, 1),
        "reads_per_feed_minute": round(reads / feeds / (took / 60), 1),
    }


def voice_reads(s: Stack, runs: int = 5) -> dict:
    """The voice bar's own run (bench/voice.py, offline models) with the Cosmos requests it
    made, per note."""
    from bench import voice

    with s.devhost("costs-voice-bar", scripted=False) as host:
        before = cosmos_requests(s.settings["COSMOS_ENDPOINT"])
        bar = voice.upload_to_outcome(host.base_url, runs=runs)
        counted = since(before, cosmos_requests(s.settings["COSMOS_ENDPOINT"]))
    return {**bar, "cosmos_per_note": _per(counted, runs + 1)}
