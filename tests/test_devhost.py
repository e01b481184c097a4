"""The devhost behaves like the Functions host, against real Azurite."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueServiceClient

from tests.support import REPO, DevhostProcess, eventually, read_records, run_devhost_check

APPS = REPO / "tests" / "apps"


@pytest.fixture
def devhost(app_env: dict[str, str], record_file: Path, tmp_path: Path) -> Iterator[DevhostProcess]:
    host = DevhostProcess(
        APPS / "semantics",
        {**app_env, "RECORD_FILE": str(record_file)},
        tmp_path / "devhost.log",
    )
    # A fresh host id per test, so blob receipts from other tests do not apply here.
    host.env["AzureFunctionsWebHost__hostid"] = f"test-{tmp_path.name}"[:32]
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
    devhost: DevhostProcess, queues: QueueServiceClient, record_file: Path
) -> None:
    queues.get_queue_client("work").send_message(b64("fail-1"))
    poison = eventually(lambda: peek_all(queues, "work-poison"), timeout=30)
    attempts = [
        r["dequeue_count"] for r in read_records(record_file, "work") if r["body"] == "fail-1"
    ]
    assert attempts == [1, 2, 3]  # maxDequeueCount is 3 in this app's host.json
    assert base64.b64decode(poison[0]).decode() == "fail-1"  # content kept as it was
    time.sleep(1)
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
    devhost: DevhostProcess, record_file: Path
) -> None:
    # Idle long enough for the polling backoff to grow past several seconds.
    time.sleep(10)
    with httpx.Client(base_url=devhost.base_url) as client:
        sent = time.monotonic()
        assert client.post("/api/enqueue/ping").status_code == 202
    eventually(lambda: [r for r in read_records(record_file, "echoed") if r["body"] == "ping"])
    # Without the wake-up the next poll would be 6-13 s away at this point.
    assert time.monotonic() - sent < 3


# Blobs


def _container(blobs: BlobServiceClient, name: str):
    container = blobs.get_container_client(name)
    if not container.exists():
        container.create_container()
    return container


def _blob_rows(record_file: Path, name: str) -> list[dict]:
    return [r for r in read_records(record_file, "blob") if r["name"] == name]


def test_blob_fires_once_per_version_survives_restart_and_fires_on_overwrite(
    devhost: DevhostProcess, blobs: BlobServiceClient, record_file: Path
) -> None:
    container = _container(blobs, "uploads")
    container.upload_blob("a/one.txt", b"version one", overwrite=True)

    (first,) = eventually(lambda: _blob_rows(record_file, "uploads/a/one.txt"))
    assert first["length"] == first["size"] == len(b"version one")
    assert first["content"] == "version one"
    time.sleep(3)  # several scans later, still once
    assert len(_blob_rows(record_file, "uploads/a/one.txt")) == 1

    devhost.stop()
    devhost.start()
    time.sleep(3)
    assert len(_blob_rows(record_file, "uploads/a/one.txt")) == 1  # receipts survived

    container.upload_blob("a/one.txt", b"version two!", overwrite=True)
    rows = eventually(lambda: [r for r in _blob_rows(record_file, "uploads/a/one.txt")][1:])
    assert rows[0]["content"] == "version two!"
    assert rows[0]["etag"] != first["etag"]
    time.sleep(2)
    assert len(_blob_rows(record_file, "uploads/a/one.txt")) == 2


def test_failing_blob_is_retried_then_poisoned(
    devhost: DevhostProcess, blobs: BlobServiceClient, queues: QueueServiceClient, record_file: Path
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
    time.sleep(2)
    assert len(_blob_rows(record_file, "uploads/fail/broken.txt")) == 3  # maxDequeueCount


def test_event_grid_source_is_scanned_and_blob_output_is_written(
    devhost: DevhostProcess, blobs: BlobServiceClient, record_file: Path
) -> None:
    container = _container(blobs, "grid")
    container.upload_blob("note.txt", b"shout", overwrite=True)
    eventually(
        lambda: [r for r in read_records(record_file, "grid") if r["name"] == "grid/note.txt"]
    )
    copy = blobs.get_blob_client("grid-copies", "note.txt")
    eventually(copy.exists)
    assert copy.download_blob().readall() == b"SHOUT"


# Loading and checking


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        ("broken_param", "parameter 'message' has no binding"),
        ("broken_out", "not azure.functions.Out"),
        ("broken_http", "azurefunctions.extensions.http.fastapi.Request"),
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
