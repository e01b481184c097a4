"""Event Grid-source blob triggers the way Azure runs them: Event Grid posts to the blob
extension's webhook on the devhost, by hand here or from the local publisher
(`python -m devhost eventgrid`), against real Azurite."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import BlobServiceClient, ContainerClient
from azure.storage.queue import QueueClient

from devhost.eventgrid import STATE_CONTAINER, Subscription
from testkit.support import (
    DEV_KEYS,
    KEY,
    LOOKING_AT_OUTCOMES,
    REPO,
    SARAH,
    DevhostProcess,
    blob_created,
    clear_queue,
    docs,
    eventually,
    read_records,
    running_devhost,
    warmed,
)

APPS = REPO / "tests" / "apps"
GRID = "Host.Functions.grid"


@pytest.fixture
def devhost(app_env: dict[str, str], record_file: Path, tmp_path: Path) -> Iterator[DevhostProcess]:
    """The semantics app, without a publisher: only what a test posts reaches the webhook."""
    env = {**app_env, "RECORD_FILE": str(record_file)}
    host = DevhostProcess(APPS / "semantics", env, tmp_path / "devhost.log", event_grid=False)
    yield host.start()
    host.stop()


@pytest.fixture
def grid(storage_conn: str) -> ContainerClient:
    container = BlobServiceClient.from_connection_string(storage_conn).get_container_client("grid")
    if not container.exists():
        container.create_container()
    return container


def webhook(host: DevhostProcess, function_id: str = GRID) -> str:
    return f"{host.base_url}/runtime/webhooks/blobs?functionName={function_id}"


def notify(host: DevhostProcess, events: list[dict], function_id: str = GRID) -> httpx.Response:
    headers = {"aeg-event-type": "Notification", "aeg-delivery-count": "0"}
    return httpx.post(webhook(host, function_id), json=events, headers=headers)


def grid_rows(record_file: Path, name: str) -> list[dict]:
    return [r for r in read_records(record_file, "grid") if r["name"] == f"grid/{name}"]


def test_the_subscription_validation_handshake_echoes_the_code(devhost: DevhostProcess) -> None:
    validation = [
        {
            "id": str(uuid.uuid4()),
            "topic": "/subscriptions/x",
            "subject": "",
            "data": {"validationCode": "512d38b6-c7b8-40c8-89fe-f46f9e9622b6"},
            "eventType": "Microsoft.EventGrid.SubscriptionValidationEvent",
            "eventTime": "2026-11-23T09:00:00Z",
            "metadataVersion": "1",
            "dataVersion": "2",
        }
    ]
    headers = {"aeg-event-type": "SubscriptionValidation"}
    r = httpx.post(webhook(devhost), json=validation, headers=headers)
    assert r.status_code == 200
    assert r.json() == {"validationResponse": "512d38b6-c7b8-40c8-89fe-f46f9e9622b6"}
    # A CloudEvents subscription sends one object whose data is a JSON string.
    cloud = {"id": "1", "type": "x", "data": json.dumps({"validationCode": "abc"})}
    r = httpx.post(webhook(devhost), json=cloud, headers=headers)
    assert r.json() == {"validationResponse": "abc"}


def test_a_posted_blob_created_event_runs_the_function_and_a_redelivery_runs_it_again(
    devhost: DevhostProcess, grid: ContainerClient, record_file: Path, storage_conn: str
) -> None:
    name = f"{uuid.uuid4()}.txt"
    grid.upload_blob(name, b"shout", overwrite=True)
    # Not scanned: the host waits for Event Grid. (The scan it used to do came every 250 ms.)
    time.sleep(1.5)
    assert grid_rows(record_file, name) == []

    event = blob_created(grid, name)
    assert notify(devhost, [event]).status_code == 202
    eventually(lambda: grid_rows(record_file, name))
    copy = BlobServiceClient.from_connection_string(storage_conn).get_blob_client(
        "grid-copies", name
    )
    assert eventually(copy.exists)
    assert copy.download_blob().readall() == b"SHOUT"
    # No receipts on the Event Grid path, in the host either: the same event delivered
    # again runs the function again. (Handlers must be idempotent; the voice one is.)
    assert notify(devhost, [event]).status_code == 202
    assert len(eventually(lambda: grid_rows(record_file, name)[1:])) == 1
    log = Path(devhost.log_path).read_text()
    assert log.count(f"Event Grid: grid/{name} queued for {GRID}") == 2


def test_an_event_for_a_blob_that_is_gone_runs_nothing(
    devhost: DevhostProcess, grid: ContainerClient, record_file: Path
) -> None:
    gone, there = f"{uuid.uuid4()}.txt", f"{uuid.uuid4()}.txt"
    for name in (gone, there):
        grid.upload_blob(name, b"x", overwrite=True)
    events = [blob_created(grid, gone), blob_created(grid, there)]
    grid.delete_blob(gone)
    assert notify(devhost, events).status_code == 202  # one delivery, two events
    eventually(lambda: grid_rows(record_file, there))
    eventually(lambda: f"blob grid/{gone} is gone" in Path(devhost.log_path).read_text())
    assert grid_rows(record_file, gone) == []


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (b"not json", {"aeg-event-type": "Notification"}),
        (b'[{"id": "1", "data": {"eTag": "0x1", "blobType": "BlockBlob"}}]', {}),  # no header
        (b'[{"id": "1", "data": {"eTag": "0x1", "blobType": "BlockBlob"}}]', None),  # no url
        (b'[{"id": "1", "data": {"url": "http://127.0.0.1:1/devstoreaccount1/grid"}}]', None),
        (b'"an event"', {"aeg-event-type": "Notification"}),
        (b'[{"id": "1", "data": {}}]', {"aeg-event-type": "SubscriptionValidation"}),
    ],
)
def test_a_body_that_is_not_event_grid_events_is_400(
    devhost: DevhostProcess, body: bytes, headers: dict | None
) -> None:
    headers = {"aeg-event-type": "Notification"} if headers is None else headers
    r = httpx.post(webhook(devhost), content=body, headers=headers)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert "queued for" not in Path(devhost.log_path).read_text()


def test_a_function_that_is_no_event_grid_blob_trigger_is_404(devhost: DevhostProcess) -> None:
    headers = {"aeg-event-type": "SubscriptionValidation"}
    body = [{"id": "1", "data": {"validationCode": "c"}}]
    for function_id in ("Host.Functions.nothing", "grid", "Host.Functions.uploaded", ""):
        r = httpx.post(webhook(devhost, function_id), json=body, headers=headers)
        assert r.status_code == 404, function_id
        assert GRID in r.json()["detail"]  # it says which there are
    other = f"{devhost.base_url}/runtime/webhooks/eventgrid?functionName={GRID}"
    assert httpx.post(other, json=body, headers=headers).status_code == 404
    assert httpx.get(webhook(devhost)).status_code == 405
    # Outside the routePrefix, as in the host: /api/runtime/... is no webhook.
    api = f"{devhost.base_url}/api/runtime/webhooks/blobs?functionName={GRID}"
    assert httpx.post(api, json=body, headers=headers).status_code == 404


# The local publisher, as a process of its own (as docs/local.md runs it against `func start`)


def publisher_cmd(url: str) -> list[str]:
    cmd = [sys.executable, "-m", "devhost", "eventgrid", "--webhook", url, "--container", "grid"]
    return [*cmd, "--app-dir", str(APPS / "semantics")]


DELIVERING = "delivering BlobCreated events"  # logged once, past the handshake
# As a non-interactive shell starts a background job (`make test &`): the publisher inherits
# SIGINT ignored, and must stop on it all the same. `exec` keeps the process the same.
IGNORING_SIGINT = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"]


def start_publisher(env: dict[str, str], url: str, log_path: Path) -> subprocess.Popen[bytes]:
    """The publisher in a process of its own, delivering (past its handshake)."""
    started = log_path.read_text().count(DELIVERING) if log_path.exists() else 0
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [*IGNORING_SIGINT, *publisher_cmd(url)],
            cwd=REPO,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        eventually(lambda: log_path.read_text().count(DELIVERING) > started)
    except BaseException:
        stop_publisher(proc)
        raise
    return proc


def stop_publisher(proc: subprocess.Popen[bytes], sig: int = signal.SIGINT) -> int | None:
    """Its exit code on `sig`, or None when it did not stop in time (then it is killed): no
    test leaves a publisher behind, whatever it asserts."""
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


@contextmanager
def publishing(env: dict[str, str], url: str, log_path: Path) -> Iterator[None]:
    """The publisher, delivering, for the block; Ctrl-C after, which it must obey."""
    proc = start_publisher(env, url, log_path)
    try:
        yield
    finally:
        code = stop_publisher(proc)
    assert code == 0, f"the publisher exited with {code} on SIGINT"


def forget_subscription(storage_conn: str, url: str) -> None:
    """Start as a new subscription: a subscription is named by its webhook's URL, port
    included, and a devhost of an earlier test (with its own publisher) may have had this
    free port and left what it delivered, which would be taken up as this one's."""
    blob = BlobServiceClient.from_connection_string(storage_conn).get_blob_client(
        STATE_CONTAINER, Subscription("grid", url).state_blob
    )
    with contextlib.suppress(ResourceNotFoundError):
        blob.delete_blob()


def test_the_publisher_delivers_new_blobs_and_after_a_restart_those_it_missed(
    devhost: DevhostProcess,
    grid: ContainerClient,
    record_file: Path,
    app_env: dict[str, str],
    storage_conn: str,
    tmp_path: Path,
) -> None:
    forget_subscription(storage_conn, webhook(devhost))
    before = f"before-{uuid.uuid4()}.txt"
    grid.upload_blob(before, b"there before the subscription", overwrite=True)
    new, missed = f"new-{uuid.uuid4()}.txt", f"missed-{uuid.uuid4()}.txt"
    log = tmp_path / "publisher.log"
    with publishing(app_env, webhook(devhost), log):
        validated = f"Event Grid subscription validated for {GRID}"
        assert validated in Path(devhost.log_path).read_text()
        grid.upload_blob(new, b"new", overwrite=True)
        eventually(lambda: grid_rows(record_file, new))
    grid.upload_blob(missed, b"uploaded while the publisher was down", overwrite=True)
    with publishing(app_env, webhook(devhost), log):
        eventually(lambda: grid_rows(record_file, missed))
        grid.upload_blob(new, b"overwritten", overwrite=True)  # a new version: a new event
        eventually(lambda: grid_rows(record_file, new)[1:])
    # Like a new subscription in Azure: what was there before it began is not told of.
    assert grid_rows(record_file, before) == []
    assert len(grid_rows(record_file, new)) == 2 and len(grid_rows(record_file, missed)) == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_publisher_stops_on_sigint_or_sigterm_and_saves_what_it_delivered(
    devhost: DevhostProcess,
    grid: ContainerClient,
    record_file: Path,
    app_env: dict[str, str],
    storage_conn: str,
    tmp_path: Path,
    sig: int,
) -> None:
    url = webhook(devhost)
    forget_subscription(storage_conn, url)
    log = tmp_path / "publisher.log"
    proc = start_publisher(app_env, url, log)  # SIGINT ignored, as it inherits it
    name = f"told-{uuid.uuid4()}.txt"
    try:
        grid.upload_blob(name, b"told of once", overwrite=True)
        eventually(lambda: grid_rows(record_file, name))
    finally:
        code = stop_publisher(proc, sig)
    assert code == 0, f"the publisher exited with {code} on {signal.Signals(sig).name}"
    assert "local Event Grid stopped" in log.read_text()
    # What it delivered was saved on the way out: started again, it does not tell of it twice.
    with publishing(app_env, url, log):
        other = f"after-{uuid.uuid4()}.txt"
        grid.upload_blob(other, b"x", overwrite=True)
        eventually(lambda: grid_rows(record_file, other))
    assert len(grid_rows(record_file, name)) == 1


def test_the_publisher_refuses_a_webhook_that_fails_the_handshake(
    devhost: DevhostProcess, app_env: dict[str, str]
) -> None:
    result = subprocess.run(
        publisher_cmd(webhook(devhost, "Host.Functions.nothing")),
        cwd=REPO,
        env={**os.environ, **app_env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "failed the validation handshake: 404" in result.stderr


# Event Grid delivers at least once: a voice note told of twice is filed once

VOICE_FUNCTION = "Host.Functions.voice_note_uploaded"
QUIET_HOST_ID = "voice-quiet"


@pytest.fixture(scope="module")
def quiet_host(provisioned: dict[str, str], tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """The app with no local Event Grid: only the events a test posts reach its webhook. It
    keeps the audio (every user does by default), so a second delivery finds the blob and runs
    the function again."""
    env = {
        **provisioned,
        "API_KEYS": DEV_KEYS,
        "AzureFunctionsWebHost__hostid": QUIET_HOST_ID,
        **LOOKING_AT_OUTCOMES,
    }
    log_dir = tmp_path_factory.mktemp("voice-quiet")
    clear_queue(provisioned["AzureWebJobsStorage"], "captures-outcomes")
    with running_devhost(env, log_dir, event_grid=False) as url:
        yield warmed(url), log_dir / "devhost.log"


def test_a_voice_note_delivered_twice_at_once_is_filed_once(
    quiet_host: tuple[str, Path], cosmos, storage_conn: str
) -> None:
    url, log_path = quiet_host
    with httpx.Client(base_url=url, timeout=60) as client:
        r = client.post("/api/voice-notes", json={"contentType": "audio/mp4"}, headers=KEY)
        upload = r.json()
        capture_id = upload["captureId"]
        put = httpx.put(upload["uploadUrl"], content=SARAH, headers=upload["uploadHeaders"])
        assert put.status_code == 201
        notes = BlobServiceClient.from_connection_string(storage_conn).get_container_client(
            "voice-notes"
        )
        event = blob_created(notes, f"dev/{capture_id}.m4a")
        # One delivery holding the event twice: both go on the host's queue and run together.
        r = httpx.post(
            f"{url}/runtime/webhooks/blobs?functionName={VOICE_FUNCTION}",
            json=[event, event],
            headers={"aeg-event-type": "Notification"},
        )
        assert r.status_code == 202

        def settled() -> dict | None:
            item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
            return item if item["status"] not in ("awaiting_upload", "transcribing") else None

        item = eventually(settled, timeout=60, interval=0.2)
    host_queue = QueueClient.from_connection_string(
        storage_conn, f"azure-webjobs-blobtrigger-{QUIET_HOST_ID}"
    )
    # Both runs over (a message is deleted once its run succeeded), neither poisoned.
    eventually(lambda: host_queue.get_queue_properties().approximate_message_count == 0)
    assert log_path.read_text().count(f"Event Grid: voice-notes/dev/{capture_id}.m4a queued") == 2
    assert item["source"] == "voice"
    filed = eventually(lambda: docs(cosmos, "People", capture_id), timeout=30)
    assert len(filed) == 1
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["status"] == "filed" and "sarah" in inbox["text"].lower()
    assert not [
        m for m in peek(storage_conn, "webjobs-blobtrigger-poison") if f"dev/{capture_id}.m4a" in m
    ]
    outcomes = eventually(
        lambda: [m for m in peek(storage_conn, "captures-outcomes") if capture_id in m]
    )
    assert len(outcomes) == 1


def peek(storage_conn: str, queue: str) -> list[str]:
    """The bodies (base64-decoded) of the first 32 messages of a queue."""
    client = QueueClient.from_connection_string(storage_conn, queue)
    try:
        messages = client.peek_messages(max_messages=32)
    except ResourceNotFoundError:
        return []
    return [base64.b64decode(m.content).decode() for m in messages]
