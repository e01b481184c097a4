"""The devhost's timer triggers and its admin endpoint, through a real devhost against
Azurite: an every-second timer, runOnStartup, a monitored timer that missed its occurrence,
and functions run by hand with POST /admin/functions/{name}."""

from __future__ import annotations

import base64
import contextlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from azure.core.exceptions import ResourceExistsError
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueServiceClient

from testkit.support import (
    ADMIN_KEY,
    REPO,
    DevhostProcess,
    eventually,
    read_records,
    run_devhost_check,
)

APPS = REPO / "tests" / "apps"
YEARLY_STATUS = "timers/{host}/Host.Functions.yearly/status"


@pytest.fixture
def devhost(app_env: dict[str, str], record_file: Path, tmp_path: Path) -> Iterator[DevhostProcess]:
    """The timers app; not started, so a test can prepare the host's storage first."""
    unique = re.sub(r"[^a-z0-9]+", "-", tmp_path.name.lower()).strip("-")
    host = DevhostProcess(
        APPS / "timers",
        {
            **app_env,
            "RECORD_FILE": str(record_file),
            "STARTUP_SCHEDULE": "0 0 0 1 1 *",
            # A fresh host id per test: schedule status is kept per host id.
            "AzureFunctionsWebHost__hostid": f"timers-{unique}"[:32].rstrip("-"),
        },
        tmp_path / "devhost.log",
        event_grid=False,
    )
    yield host
    host.stop()


@pytest.fixture
def blobs(storage_conn: str) -> BlobServiceClient:
    return BlobServiceClient.from_connection_string(storage_conn)


@pytest.fixture
def queues(storage_conn: str) -> QueueServiceClient:
    return QueueServiceClient.from_connection_string(storage_conn)


def yearly_status(blobs: BlobServiceClient, devhost: DevhostProcess):
    name = YEARLY_STATUS.format(host=devhost.env["AzureFunctionsWebHost__hostid"])
    return blobs.get_blob_client("azure-webjobs-hosts", name)


def status_of(blobs: BlobServiceClient, devhost: DevhostProcess) -> dict | None:
    blob = yearly_status(blobs, devhost)
    return json.loads(blob.download_blob().readall()) if blob.exists() else None


def next_new_year(after: datetime) -> datetime:
    return datetime(after.year + 1, 1, 1, tzinfo=UTC)


def test_an_every_second_timer_runs_and_a_run_on_startup_timer_runs_once(
    devhost: DevhostProcess, blobs: BlobServiceClient, record_file: Path
) -> None:
    started = datetime.now(UTC)
    devhost.start()
    ticks = eventually(lambda: read_records(record_file, "every_second")[2:], timeout=20)
    assert all(t["past_due"] is False for t in ticks)
    assert ticks[0]["status"] == {}  # sub-minute: not monitored, so no status is shown
    # Its schedule (from the app setting) is yearly: only the startup run, seconds later.
    (startup,) = read_records(record_file, "on_startup")
    assert startup["past_due"] is False
    # A new monitored timer records its next occurrence, and does not run.
    status = eventually(lambda: status_of(blobs, devhost))
    assert datetime.fromisoformat(status["Next"]) == next_new_year(started)
    assert status["Last"].startswith("0001-01-01")
    assert read_records(record_file, "yearly") == []


def test_a_monitored_timer_that_missed_its_occurrence_runs_once_past_due(
    devhost: DevhostProcess, blobs: BlobServiceClient, queues: QueueServiceClient, record_file: Path
) -> None:
    # The host last ran it on New Year's Day 2025 and was down on New Year's Day 2026.
    yearly_status(blobs, devhost).upload_blob(
        json.dumps(
            {
                "Last": "2025-01-01T00:00:00+00:00",
                "Next": "2026-01-01T00:00:00+00:00",
                "LastUpdated": "2025-01-01T00:00:00+00:00",
            }
        ),
        overwrite=True,
    )
    _clear(queues, "yearly-ran")
    devhost.start()
    (run,) = eventually(lambda: read_records(record_file, "yearly"), timeout=20)
    assert run["past_due"] is True
    assert run["status"]["Next"] == "2026-01-01T00:00:00+00:00"  # the occurrence it missed
    # Its output binding was written, and the status now counts from this run.
    message = eventually(lambda: _peek(queues, "yearly-ran"))
    assert base64.b64decode(message[0]).decode() == "yearly ran"
    status = eventually(
        lambda: _ran_since(status_of(blobs, devhost), datetime(2026, 1, 2, tzinfo=UTC))
    )
    assert datetime.fromisoformat(status["Next"]) == next_new_year(datetime.now(UTC))

    # A restart is not past due again: it logs its decision and does not run.
    devhost.stop()
    devhost.start()
    eventually(lambda: devhost.log_path.read_text().count("timer yearly: not past due") == 1)
    assert len(read_records(record_file, "yearly")) == 1


def test_the_admin_endpoint_runs_a_queue_function_and_a_timer_by_hand(
    devhost: DevhostProcess, blobs: BlobServiceClient, record_file: Path
) -> None:
    devhost.start()
    status_before = eventually(lambda: status_of(blobs, devhost))
    with httpx.Client(base_url=devhost.base_url, timeout=15, headers=ADMIN_KEY) as client:
        queued = client.post("/admin/functions/by_hand", json={"input": "note-1"})
        assert queued.status_code == 202
        # The name is matched whatever its case, as in the host.
        assert client.post("/admin/functions/YEARLY", json={"input": ""}).status_code == 202

        (row,) = eventually(lambda: read_records(record_file, "by_hand"))
        assert row == {**row, "body": "note-1", "dequeue_count": 0}
        copy = blobs.get_blob_client("handled", "note-1.txt")
        eventually(copy.exists)
        assert (
            copy.download_blob().readall() == b"NOTE-1"
        )  # its output binding, with {QueueTrigger}
        (timer,) = eventually(lambda: read_records(record_file, "yearly"))
        assert timer["past_due"] is False
        assert timer["status"]["Next"] == status_before["Next"]
        assert status_of(blobs, devhost) == status_before  # a run by hand leaves the schedule

        unknown = client.post("/admin/functions/nothing", json={"input": "x"})
        assert unknown.status_code == 404
        assert "by_hand" in unknown.json()["detail"]
        assert client.post("/admin/functions/ping", json={}).status_code == 400  # HTTP: its route
        assert client.post("/admin/functions/by_hand", content=b"not json").status_code == 400
        assert client.post("/admin/functions/by_hand", json={}).status_code == 400  # no message
        assert client.get("/admin/functions/by_hand").status_code == 405
        assert client.get("/api/ping").json() == {"pong": True}


def test_the_admin_endpoint_runs_nothing_without_the_hosts_master_key(
    devhost: DevhostProcess, record_file: Path
) -> None:
    devhost.start()
    with httpx.Client(base_url=devhost.base_url, timeout=15) as client:
        for headers in ({}, {"x-functions-key": "not-the-key"}, {"x-functions-key": ""}):
            for name in ("by_hand", "nothing"):
                refused = client.post(
                    f"/admin/functions/{name}", json={"input": "x"}, headers=headers
                )
                assert refused.status_code == 401, (headers, name)
                assert refused.headers["content-type"] == "application/problem+json"
                assert "by_hand" not in refused.text  # names no function
        assert (
            client.post("/admin/functions/by_hand?code=wrong", json={"input": "x"}).status_code
            == 401
        )
        # The key in x-functions-key or ?code=, as Azure takes it.
        ran = client.post("/admin/functions/by_hand", json={"input": "keyed"}, headers=ADMIN_KEY)
        assert ran.status_code == 202
        code = ADMIN_KEY["x-functions-key"]
        ran = client.post(f"/admin/functions/by_hand?code={code}", json={"input": "coded"})
        assert ran.status_code == 202
        rows = eventually(
            lambda: (
                len(read_records(record_file, "by_hand")) == 2
                and read_records(record_file, "by_hand")
            )
        )
        assert sorted(r["body"] for r in rows) == ["coded", "keyed"]


def test_the_admin_endpoint_runs_a_blob_function_on_the_blob_it_names(
    devhost: DevhostProcess, blobs: BlobServiceClient, record_file: Path
) -> None:
    container = blobs.get_container_client("by-hand-blobs")
    with contextlib.suppress(ResourceExistsError):
        container.create_container()
    container.upload_blob("b1.txt", b"by hand", overwrite=True)
    devhost.start()
    with httpx.Client(base_url=devhost.base_url, timeout=15, headers=ADMIN_KEY) as client:
        ran = client.post("/admin/functions/blob_by_hand", json={"input": "by-hand-blobs/b1.txt"})
        assert ran.status_code == 202
        (row,) = eventually(lambda: read_records(record_file, "blob_by_hand"))
        assert row["name"] == "by-hand-blobs/b1.txt" and row["content"] == "by hand"
        for wrong in ("elsewhere/b1.txt", "by-hand-blobs/missing.txt", "b1.txt"):
            refused = client.post("/admin/functions/blob_by_hand", json={"input": wrong})
            assert refused.status_code == 400, wrong
    assert len(read_records(record_file, "blob_by_hand")) == 1


def test_two_hosts_of_one_app_run_a_timer_on_one_of_them(
    devhost: DevhostProcess, record_file: Path, tmp_path: Path
) -> None:
    # The host's listener lock: shorter periods than the host's minute, so the test is short.
    lock = {
        "AzureFunctionsJobHost__singleton__listenerLockPeriod": "00:00:15",
        "AzureFunctionsJobHost__singleton__listenerLockRecoveryPollingInterval": "00:00:01",
    }
    devhost.env.update(lock)
    first = devhost.start()
    second = DevhostProcess(devhost.app_dir, devhost.env, tmp_path / "second.log", event_grid=False)

    def ticks(host: DevhostProcess) -> list[dict]:
        pid = host.proc.pid if host.proc else None
        return [t for t in read_records(record_file, "every_second") if t["pid"] == pid]

    eventually(lambda: ticks(first))
    second.start()
    second_pid = second.proc.pid
    try:
        waiting = "timer every_second: listener lock not taken"
        eventually(lambda: waiting in second.log_path.read_text(), timeout=20)
        seen = len(ticks(first))
        eventually(lambda: len(ticks(first)) >= seen + 3, timeout=20)
        assert ticks(second) == []
        # The first host stops and lets the lock go: the second takes the timers over, and its
        # runOnStartup timer runs as its listener starts.
        first.stop()
        eventually(
            lambda: [
                t for t in read_records(record_file, "every_second") if t["pid"] == second_pid
            ],
            timeout=20,
        )
        startups = [r["pid"] for r in read_records(record_file, "on_startup")]
        assert startups[-1] == second_pid and len(startups) == 2
    finally:
        second.stop()


def test_check_accepts_timers_and_refuses_a_schedule_the_host_would_not_read(
    app_env: dict[str, str],
) -> None:
    accepted = run_devhost_check(APPS / "timers", {**app_env, "STARTUP_SCHEDULE": "0 0 7 * * *"})
    assert accepted.returncode == 0, accepted.stderr
    (yearly,) = [line for line in accepted.stdout.splitlines() if "yearly" in line]
    assert "timerTrigger  '0 0 0 1 Jan *' in UTC, next " in yearly
    assert f"next {datetime.now(UTC).year + 1}-01-01T00:00:00+00:00" in yearly
    refused = run_devhost_check(APPS / "broken_schedule", app_env)
    assert refused.returncode == 1
    assert "must have six fields" in refused.stderr
    unset = run_devhost_check(APPS / "timers", {**app_env, "STARTUP_SCHEDULE": ""})
    assert unset.returncode == 1


def _ran_since(status: dict | None, since: datetime) -> dict | None:
    return status if status and datetime.fromisoformat(status["Last"]) > since else None


def _clear(queues: QueueServiceClient, name: str) -> None:
    queue = queues.get_queue_client(name)
    with contextlib.suppress(ResourceExistsError):
        queue.create_queue()
    queue.clear_messages()


def _exists(queues: QueueServiceClient, name: str) -> bool:
    return any(q.name == name for q in queues.list_queues(name_starts_with=name))


def _peek(queues: QueueServiceClient, name: str) -> list[str]:
    if not _exists(queues, name):
        return []
    return [m.content for m in queues.get_queue_client(name).peek_messages(max_messages=32)]
