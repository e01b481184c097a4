"""What one text capture and one voice note cost in operations: executions, Cosmos requests,
Storage operations and model calls, counted while a devhost serves them through taps in front of
Azurite and the counter in the local Cosmos server. BENCHMARKS.md prices them."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from bench.cosmos_count import cosmos_requests, since
from bench.measure import median, timed_run
from bench.stack import Stack
from bench.text import capture, capture_texts
from bench.voice import CLIP
from devhost.emulators import Ports, storage_connection_string
from devhost.eventgrid import STATE_CONTAINER as EVENT_GRID_STATE
from shared.settings import BUCKET_CONTAINERS, INBOX
from testkit import fake_openai
from testkit.storage_tap import Exchange, StorageTap
from testkit.support import KEY

# Each capture's recovery check (a delayed job on captures-classify that reads it once more)
# comes due after RECOVERY_DELAY_S, 120 s by default: brought forward so it is counted here.
RECOVERY_DELAY_S = 2.0
# After the last run, how long the queue work it started (outcome messages and their pushes,
# the recovery and upload-deadline checks) may take.
SETTLE_S = 10.0
TRANSCRIPT = "Remember to call the dentist on Monday morning about the appointment."
# The scripted models' answer times: a classification in 0.3 s, and a transcription in 4 s,
# our guess for Azure's whisper on a 30 s note (the feed polls all the while, so its reads
# depend on it; the clip sent is 5 s, and operation counts do not depend on its length).
CLASSIFY_DELAY_S = 0.3
TRANSCRIBE_DELAY_S = 4.0


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
    """A Storage operation's billing class, or None for the host's idle trigger polling (an
    empty queue poll) and for the local Event Grid's own work (its scan of the voice container
    and its bookkeeping blobs): Event Grid is billed per event in Azure, not here."""
    if e.query.get("comp") == "list" or _target(e) == EVENT_GRID_STATE:
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


def _target(e: Exchange) -> str:
    """The queue or container an operation is on; the host's blob trigger queue without its
    host id."""
    name = e.path.split("/")[2] if e.path.count("/") >= 2 else e.path
    return "azure-webjobs-blobtrigger" if name.startswith("azure-webjobs-blobtrigger") else name


def _storage(taps: tuple[StorageTap, StorageTap], since_s: float) -> tuple[Counter, Counter, int]:
    """Operations by billing class and by class and target, and the queue trigger runs: each
    message a queue trigger is handed is one execution (the blob trigger's runs come through
    the host's blob trigger queue too)."""
    ops: Counter = Counter()
    targets: Counter = Counter()
    executions = 0
    for tap in taps:
        for e in tap.exchanges():
            if e.sent < since_s:
                continue
            kind = storage_operation(e)
            if kind:
                ops[kind] += 1
                targets[f"{kind} {_target(e)}"] += 1
            if kind == "queue get":
                executions += e.body.count(b"<QueueMessage>")
    return ops, targets, executions


def document_bytes(s: Stack, since_epoch: float) -> dict[str, int]:
    """The largest document written since `since_epoch` (its `_ts`) in the Inbox and in each
    bucket container, as JSON: a write's request charge grows with its size (about 5 RU up to
    1 KB, 6.3 at 2 KB)."""
    sizes: dict[str, int] = {}
    with s.database() as database:
        for name in (INBOX, *BUCKET_CONTAINERS):
            docs = database.get_container_client(name).read_all_items()
            found = [
                len(json.dumps(d, separators=(",", ":")))
                for d in docs
                if d.get("_ts", 0) >= int(since_epoch)
            ]
            if found:
                sizes[name] = max(found)
    return sizes


def _per(total: dict, count: int) -> dict:
    return {k: round(v / count, 2) for k, v in sorted(total.items())}


def text_captures(s: Stack, count: int = 30) -> dict:
    s.model.reset()
    s.model.set_default(
        fake_openai.classification("Projects", 0.9, "Bench", delay_s=CLASSIFY_DELAY_S)
    )
    with tapped_host(s, "costs-text") as (host, blobs, queues):
        texts = capture_texts()
        before, started = cosmos_requests(s.settings["COSMOS_ENDPOINT"]), time.monotonic()
        since_epoch = time.time()
        with httpx.Client(base_url=host.base_url, timeout=60) as client:
            held = [capture(client, next(texts)).outcome_s for _ in range(count)]
        time.sleep(SETTLE_S)
        cosmos = since(before, cosmos_requests(s.settings["COSMOS_ENDPOINT"]))
        ops, targets, queue_runs = _storage((blobs, queues), started)
    chat = [r for r in s.model.requests if r.json and "messages" in r.json]
    return {
        "captures": count,
        "stream_held_s": round(median(held), 3),  # the HTTP run, request to RUN_FINISHED
        "executions": round(1 + queue_runs / count, 2),  # the HTTP run, and queue triggers
        "cosmos": _per(cosmos, count),
        "storage": _per(ops, count),
        "storage_by_target": _per(targets, count),
        "model_calls": round(len(chat) / count, 2),
        "completion_chars": _completion_chars(),
        "largest_document_bytes": document_bytes(s, since_epoch),
    }


def voice_notes(s: Stack, count: int = 5) -> dict:
    """`count` notes as the phone sends them: upload URL, events feed, PUT, outcome."""
    s.model.reset()
    s.model.set_default(
        fake_openai.classification("Admin", 0.9, "Dentist", delay_s=CLASSIFY_DELAY_S)
    )
    s.model.set_default(
        fake_openai.transcription(TRANSCRIPT, delay_s=TRANSCRIBE_DELAY_S), fake_openai.TRANSCRIBE
    )
    clip = CLIP.read_bytes()
    # Each note's upload-deadline check (a delayed job on captures-classify that finds the
    # note settled) comes due after UPLOAD_URL_TTL_S + UPLOAD_GRACE_S, 15 min by default:
    # brought forward, as the recovery check is, so it is counted here.
    deadline = {"UPLOAD_URL_TTL_S": "5", "UPLOAD_GRACE_S": "0"}
    with tapped_host(s, "costs-voice", **deadline) as (host, blobs, queues):
        before, started = cosmos_requests(s.settings["COSMOS_ENDPOINT"]), time.monotonic()
        since_epoch = time.time()
        with httpx.Client(base_url=host.base_url, timeout=60) as client:
            held = [_one_note(client, clip) for _ in range(count)]
        time.sleep(SETTLE_S)
        cosmos = since(before, cosmos_requests(s.settings["COSMOS_ENDPOINT"]))
        ops, targets, queue_runs = _storage((blobs, queues), started)
    requests = s.model.requests
    transcriptions = [r for r in requests if r.file is not None]
    return {
        "notes": count,
        "feed_held_s": round(median(held), 3),  # the events feed, opened to RUN_FINISHED
        # Two HTTP runs (the upload URL, the feed), and the queue triggers' (the blob trigger's
        # among them).
        "executions": round(2 + queue_runs / count, 2),
        "cosmos": _per(cosmos, count),
        "storage": _per(ops, count),
        "storage_by_target": _per(targets, count),
        "model_calls": round((len(requests) - len(transcriptions)) / count, 2),
        "transcriptions": round(len(transcriptions) / count, 2),
        "transcript": TRANSCRIPT,
        "largest_document_bytes": document_bytes(s, since_epoch),
    }


def _one_note(client: httpx.Client, clip: bytes) -> float:
    """One note; the seconds its events feed was open."""
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
    return ended["run"].outcome_s


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
