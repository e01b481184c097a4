"""The devhost behaves like the Functions host, against real Azurite."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueServiceClient

from devhost.emulators import AZURITE_ACCOUNT, Emulators, Ports, storage_connection_string
from testkit.storage_tap import Exchange, StorageTap
from testkit.support import REPO, DevhostProcess, eventually, read_records, run_devhost_check

APPS = REPO / "tests" / "apps"


@pytest.fixture
def blob_tap(emulators: Emulators) -> Iterator[StorageTap]:
    """The devhost's requests to Azurite's blob service: its scans and receipt checks."""
    with StorageTap(emulators.ports.blob) as tap:
        yield tap


@pytest.fixture
def queue_tap(emulators: Emulators) -> Iterator[StorageTap]:
    """The devhost's requests to Azurite's queue service: its polls and deletes."""
    with StorageTap(emulators.ports.queue) as tap:
        yield tap


@pytest.fixture
def devhost(
    app_env: dict[str, str],
    emulators: Emulators,
    blob_tap: StorageTap,
    queue_tap: StorageTap,
    record_file: Path,
    tmp_path: Path,
) -> Iterator[DevhostProcess]:
    # The devhost reaches Azurite through the taps, so a test can wait for what it did.
    ports = Ports(
        blob=blob_tap.port,
        queue=queue_tap.port,
        table=emulators.ports.table,
        cosmos=emulators.ports.cosmos,
    )
    host = DevhostProcess(
        APPS / "semantics",
        {
            **app_env,
            "AzureWebJobsStorage": storage_connection_string(ports),
            "RECORD_FILE": str(record_file),
        },
        tmp_path / "devhost.log",
    )
    # A fresh host id per test, so blob receipts from other tests do not apply here.
    # (Host ids name queues: lowercase letters, digits and single dashes.)
    unique = re.sub(r"[^a-z0-9]+", "-", tmp_path.name.lower()).strip("-")
    host.env["AzureFunctionsWebHost__hostid"] = f"test-{unique}"[:32].rstrip("-")
    yield host.start()
    host.stop()


@pytest.fixture
def queues(storage_conn: str) -> QueueServiceClient:
    return QueueServiceClient.from_connection_string(storage_conn)


@pytest.fixture
def blobs(storage_conn: str) -> BlobServiceClient:
    return BlobServiceClient.from_connection_string(storage_conn)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def peek_all(queues: QueueServiceClient, name: str) -> list[str]:
    queue = queues.get_queue_client(name)
    try:
        return [m.content for m in queue.peek_messages(max_messages=32)]
    except Exception:
        return []


def polls(queue_tap: StorageTap, queue: str) -> list[Exchange]:
    """The devhost's receive requests on `queue`, in order (an empty poll is one request)."""
    return queue_tap.exchanges("GET", f"/{AZURITE_ACCOUNT}/{queue}/messages")


# HTTP


def test_first_chunk_arrives_while_the_handler_is_still_running(
    devhost: DevhostProcess, record_file: Path
) -> None:
    with (
        httpx.Client(base_url=devhost.base_url, timeout=15) as client,
        client.stream("GET", "/api/stream/t1") as response,
    ):
        chunks = response.iter_bytes()
        first = next(chunks)
        # The handler is still waiting for the release file: nothing recorded yet.
        assert first == b"first\n"
        assert read_records(record_file, "stream-done") == []
        record_file.with_name("release-t1").touch()
        rest = b"".join(chunks)
    assert rest == b"second\n"
    assert read_records(record_file, "stream-done")[0]["released"] is True


def test_route_parameters_and_optional_segments(devhost: DevhostProcess) -> None:
    with httpx.Client(base_url=devhost.base_url) as client:
        assert client.get("/api/items/42?q=x").json() == {"id": "42", "q": "x"}
        assert client.get("/api/ITEMS/7").json()["id"] == "7"  # literals ignore case
        assert client.get("/api/things").json() == {"id": None, "method": "GET"}
        assert client.delete("/api/things/9").json() == {"id": "9", "method": "DELETE"}


def test_unknown_routes_are_404_and_wrong_methods_405(devhost: DevhostProcess) -> None:
    with httpx.Client(base_url=devhost.base_url) as client:
        assert client.get("/api/nothing-here").status_code == 404
        assert client.get("/items/42").status_code == 404  # routePrefix is required
        assert client.get("/api/items/42/extra").status_code == 404
        wrong = client.post("/api/items/42")
        assert wrong.status_code == 405
        assert wrong.headers["allow"] == "GET"


# Queues


def test_queue_message_is_delivered_as_a_real_queue_message(
    devhost: DevhostProcess, queues: QueueServiceClient, record_file: Path
) -> None:
    queues.get_queue_client("work").send_message(b64("hello"))
    (row,) = eventually(
        lambda: [r for r in read_records(record_file, "work") if r["body"] == "hello"]
    )
    assert row["dequeue_count"] == 1
    assert row["id"] and row["inserted"]
    # The output binding wrote base64, as the host does by default.
    done = eventually(lambda: peek_all(queues, "work-done"))
    assert base64.b64decode(done[0]).decode() == "done:hello"


def test_failing_message_is_retried_then_poisoned_after_max_dequeue_count(
    devhost: DevhostProcess, queues: QueueServiceClient, queue_tap: StorageTap, record_file: Path
) -> None:
    queues.get_queue_client("work").send_message(b64("fail-1"))
    poison = eventually(lambda: peek_all(queues, "work-poison"), timeout=30)
    attempts = [
        r["dequeue_count"] for r in read_records(record_file, "work") if r["body"] == "fail-1"
    ]
    assert attempts == [1, 2, 3]  # maxDequeueCount is 3 in this app's host.json
    assert base64.b64decode(poison[0]).decode() == "fail-1"  # content kept as it was
    # The original is deleted, not left to come back, and the listener has polled the queue
    # since: there is no fourth attempt to wait for.
    message_id = read_records(record_file, "work")[-1]["id"]
    (deleted,) = eventually(
        lambda: queue_tap.exchanges("DELETE", f"/{AZURITE_ACCOUNT}/work/messages/{message_id}")
    )
    assert deleted.status == 204
    eventually(lambda: [p for p in polls(queue_tap, "work") if p.sent > deleted.answered])
    assert len([r for r in read_records(record_file, "work") if r["body"] == "fail-1"]) == 3


def test_message_that_is_not_base64_goes_straight_to_poison(
    devhost: DevhostProcess, queues: QueueServiceClient, record_file: Path
) -> None:
    queues.get_queue_client("work").send_message("this is not base64!")
    poison = eventually(
        lambda: [m for m in peek_all(queues, "work-poison") if m == "this is not base64!"]
    )
    assert poison
    assert not [r for r in read_records(record_file, "work") if "not base64" in r["body"]]


def test_an_app_enqueue_wakes_the_listener_at_once(
    devhost: DevhostProcess, queue_tap: StorageTap, record_file: Path
) -> None:
    def backed_off() -> bool:
        sent = [p.sent for p in polls(queue_tap, "echoed")]
        return len(sent) >= 2 and sent[-1] - sent[-2] >= 2.0

    # Idle until the polling backoff has grown: the empty queue's last two polls 2 s apart,
    # so the next one is over 3 s away. Enqueue right after that poll.
    eventually(backed_off, timeout=30, interval=0.02)
    with httpx.Client(base_url=devhost.base_url) as client:
        assert client.post("/api/enqueue/ping").status_code == 202
    eventually(lambda: [r for r in read_records(record_file, "echoed") if r["body"] == "ping"])

    (send,) = queue_tap.exchanges("POST", f"/{AZURITE_ACCOUNT}/echoed/messages")
    idle = [p for p in polls(queue_tap, "echoed") if p.sent < send.answered]
    woken = next(p for p in polls(queue_tap, "echoed") if p.sent > send.answered)
    assert b64("ping") in woken.body.decode()  # the first poll after the enqueue took it
    # Each backoff wait is at least 1.6 times the one before (up to maxPollingInterval, a
    # minute here), so a poll that comes sooner after the last idle one than that one came
    # after its predecessor was not the timer's: the enqueue cut the wait short.
    waited, backoff = woken.sent - idle[-1].sent, idle[-1].sent - idle[-2].sent
    assert waited < backoff, (
        f"polled {waited:.2f} s after the last idle poll, backoff {backoff:.2f}"
    )


def test_a_function_disabled_by_its_app_setting_is_not_started(
    app_env: dict[str, str],
    emulators: Emulators,
    queue_tap: StorageTap,
    queues: QueueServiceClient,
    record_file: Path,
    tmp_path: Path,
) -> None:
    ports = Ports(
        blob=emulators.ports.blob,
        queue=queue_tap.port,
        table=emulators.ports.table,
        cosmos=emulators.ports.cosmos,
    )
    env = {
        **app_env,
        "AzureWebJobsStorage": storage_connection_string(ports),
        "RECORD_FILE": str(record_file),
        # As the host reads it (AzureWebJobs.<FUNCTION_NAME>.Disabled): no listener, no route.
        "AzureWebJobs.work.Disabled": "true",
        "AzureWebJobs.get_item.Disabled": "1",
        "AzureWebJobs.echoed.Disabled": "false",
    }
    host = DevhostProcess(APPS / "semantics", env, tmp_path / "devhost.log").start()
    try:
        with httpx.Client(base_url=host.base_url) as client:
            assert client.get("/api/items/42").status_code == 404
            assert client.get("/api/things/9").status_code == 200
        # The listeners start together: once `echoed` was polled twice, `work` would have been.
        eventually(lambda: len(polls(queue_tap, "echoed")) >= 2)
        assert polls(queue_tap, "work") == []
    finally:
        host.stop()
    assert "work is disabled" in (tmp_path / "devhost.log").read_text()


# Blobs


def _container(blobs: BlobServiceClient, name: str):
    container = blobs.get_container_client(name)
    if not container.exists():
        container.create_container()
    return container


def _blob_rows(record_file: Path, name: str) -> list[dict]:
    return [r for r in read_records(record_file, "blob") if r["name"] == name]


def _downloads(blob_tap: StorageTap, name: str) -> list[Exchange]:
    return blob_tap.exchanges("GET", f"/{AZURITE_ACCOUNT}/{name}")


def _found_done(blob_tap: StorageTap, etag: str, name: str) -> int:
    """How often a scan looked up the receipt of this blob version and found it complete."""
    version = etag.strip('"')
    receipts = f"/{AZURITE_ACCOUNT}/azure-webjobs-hosts/blobreceipts/"
    looks = blob_tap.exchanges(
        "HEAD", lambda p: p.startswith(receipts) and p.endswith(f"/uploaded/{version}/{name}")
    )
    return len([e for e in looks if e.status == 200 and "x-ms-meta-incomplete" not in e.headers])


def _wait_rescanned(blob_tap: StorageTap, etag: str, name: str, since: int = 0) -> None:
    """Until two more scans have found this version done. A scan skips a version whose task
    from an earlier scan still runs, so the second look means the first look's task has
    ended, and it ended without a call (a call is recorded before the task ends)."""
    eventually(lambda: _found_done(blob_tap, etag, name) >= since + 2)


def test_blob_fires_once_per_version_survives_restart_and_fires_on_overwrite(
    devhost: DevhostProcess, blob_tap: StorageTap, blobs: BlobServiceClient, record_file: Path
) -> None:
    container = _container(blobs, "uploads")
    container.upload_blob("a/one.txt", b"version one", overwrite=True)

    (first,) = eventually(lambda: _blob_rows(record_file, "uploads/a/one.txt"))
    assert first["length"] == first["size"] == len(b"version one")
    assert first["content"] == "version one"
    _wait_rescanned(blob_tap, first["etag"], "uploads/a/one.txt")  # later scans, still once
    assert len(_blob_rows(record_file, "uploads/a/one.txt")) == 1
    assert len(_downloads(blob_tap, "uploads/a/one.txt")) == 1

    devhost.stop()
    looked = _found_done(blob_tap, first["etag"], "uploads/a/one.txt")
    devhost.start()
    _wait_rescanned(blob_tap, first["etag"], "uploads/a/one.txt", since=looked)
    assert len(_blob_rows(record_file, "uploads/a/one.txt")) == 1  # receipts survived
    assert len(_downloads(blob_tap, "uploads/a/one.txt")) == 1

    container.upload_blob("a/one.txt", b"version two!", overwrite=True)
    rows = eventually(lambda: [r for r in _blob_rows(record_file, "uploads/a/one.txt")][1:])
    assert rows[0]["content"] == "version two!"
    assert rows[0]["etag"] != first["etag"]
    _wait_rescanned(blob_tap, rows[0]["etag"], "uploads/a/one.txt")
    assert len(_blob_rows(record_file, "uploads/a/one.txt")) == 2
    assert len(_downloads(blob_tap, "uploads/a/one.txt")) == 2


def test_failing_blob_is_retried_then_poisoned(
    devhost: DevhostProcess,
    blob_tap: StorageTap,
    blobs: BlobServiceClient,
    queues: QueueServiceClient,
    record_file: Path,
) -> None:
    container = _container(blobs, "uploads")
    container.upload_blob("fail/broken.txt", b"x", overwrite=True)

    def poisoned() -> list[dict]:
        bodies = [
            json.loads(base64.b64decode(m)) for m in peek_all(queues, "webjobs-blobtrigger-poison")
        ]
        return [b for b in bodies if b["BlobName"] == "fail/broken.txt"]

    (poison,) = eventually(poisoned, timeout=30)
    assert poison["ContainerName"] == "uploads"
    assert poison["FunctionId"] == "uploaded"
    _wait_rescanned(blob_tap, poison["ETag"], "uploads/fail/broken.txt")
    assert len(_blob_rows(record_file, "uploads/fail/broken.txt")) == 3  # maxDequeueCount


def test_event_grid_source_runs_from_the_publishers_events_and_blob_output_is_written(
    devhost: DevhostProcess, queue_tap: StorageTap, blobs: BlobServiceClient, record_file: Path
) -> None:
    container = _container(blobs, "grid")
    container.upload_blob("note.txt", b"shout", overwrite=True)
    eventually(
        lambda: [r for r in read_records(record_file, "grid") if r["name"] == "grid/note.txt"]
    )
    copy = blobs.get_blob_client("grid-copies", "note.txt")
    eventually(copy.exists)
    assert copy.download_blob().readall() == b"SHOUT"
    # The way it came: the local Event Grid posted to the blobs webhook, which put the event
    # on the host's blob trigger queue, whose listener ran the function.
    log = devhost.log_path.read_text()
    assert "Event Grid subscription validated for Host.Functions.grid" in log
    assert "Event Grid: grid/note.txt queued for Host.Functions.grid" in log
    host_id = devhost.env["AzureFunctionsWebHost__hostid"]
    host_queue = f"/{AZURITE_ACCOUNT}/azure-webjobs-blobtrigger-{host_id}/messages"
    assert queue_tap.exchanges("POST", host_queue)


# Loading and checking


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        ("broken_param", "parameter 'message' has no binding"),
        ("broken_out", "not azure.functions.Out"),
        ("broken_http", "azurefunctions.extensions.http.fastapi.Request"),
        ("broken_mcp", "inputSchema must be a JSON schema of type object"),
    ],
)
def test_check_rejects_an_app_the_worker_would_not_load(
    app: str, expected: str, app_env: dict[str, str]
) -> None:
    result = run_devhost_check(APPS / app, app_env)
    assert result.returncode == 1
    assert expected in result.stderr


def test_check_accepts_the_real_app_and_the_semantics_app(app_env: dict[str, str]) -> None:
    for app_dir in (REPO, APPS / "semantics"):
        result = run_devhost_check(app_dir, app_env)
        assert result.returncode == 0, result.stderr
        assert "ok  " in result.stdout
