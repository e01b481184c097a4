"""Test helpers: a devhost in a child process, and waiting for things to happen."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import httpx

from devhost import master_key
from devhost.emulators import REPO, free_port
from shared.settings import BUCKET_CONTAINERS

if TYPE_CHECKING:
    from azure.storage.blob import ContainerClient

T = TypeVar("T")

BUCKETS = BUCKET_CONTAINERS
# A real voice note: "Call Sarah about the budget review", spoken, in an m4a container.
SARAH = (REPO / "tests" / "data" / "audio" / "call_sarah.m4a").read_bytes()

# The sample settings' dev user (key `local-dev-key`) and a second user for isolation tests.
KEY = {"X-API-Key": "local-dev-key"}
OTHER_KEY = {"X-API-Key": "other-user-key"}
DEV_KEYS = (
    "dev:ed5a18fb8f807f996d649e379d3f35f39c543a91bdbf88c492f2ebd10d4df86c,"
    f"other:{hashlib.sha256(b'other-user-key').hexdigest()}"
)

# The master key of the devhosts a test session starts (made anew each session, written
# nowhere): the admin endpoint runs nothing without it.
MASTER_KEY = secrets.token_urlsafe(32)
ADMIN_KEY = {master_key.HEADER: MASTER_KEY}


# For a devhost whose tests peek at captures-outcomes themselves: the push worker, which reads
# the queue, is off, and the messages are visible at once.
LOOKING_AT_OUTCOMES = {"AzureWebJobs.push_worker.Disabled": "true", "PUSH_DELAY_S": "0"}


def run_input(text: object, *, run_id: str | None = None, thread_id: str = "t1") -> dict:
    """An AG-UI RunAgentInput whose last user message is `text` (a string or content parts)."""
    return {
        "threadId": thread_id,
        "runId": run_id or f"r-{uuid.uuid4()}",
        "messages": [{"id": "m1", "role": "user", "content": text}],
    }


def eventually(probe: Callable[[], T], timeout: float = 15.0, interval: float = 0.1) -> T:
    """Poll until `probe` returns something truthy; fail with its last value otherwise."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not value:
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last value: {value!r})")
        time.sleep(interval)
        value = probe()
    return value


class DevhostProcess:
    """`python -m devhost serve` for one app folder, on a free port, as CI would run it.

    `cors` and `cors_credentials` are passed as `--cors` / `--cors-credentials`, so the host's
    CORS is the test's whatever local.settings.json says; `cors=None` leaves that file's.
    `event_grid` runs the local Event Grid publisher with it (`--event-grid`), as `make dev`
    does, so Event Grid-source blob triggers fire through the host's webhook."""

    def __init__(
        self,
        app_dir: Path,
        env: dict[str, str],
        log_path: Path,
        *,
        cors: str | None = None,
        cors_credentials: bool = False,
        event_grid: bool = True,
    ) -> None:
        self.app_dir = app_dir
        self.env = env
        self.port = free_port()
        self.log_path = log_path
        self.cors = cors
        self.cors_credentials = cors_credentials
        self.event_grid = event_grid
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        """The running devhost's process id."""
        if self.proc is None:
            raise RuntimeError("devhost is not running")
        return self.proc.pid

    def start(self, timeout: float = 30.0) -> DevhostProcess:
        log = open(self.log_path, "ab")  # noqa: SIM115  (lives with the process)
        cmd = [sys.executable, "-m", "devhost", "serve", "--app-dir", str(self.app_dir)]
        if self.cors is not None:
            cmd += ["--cors", self.cors]
        if self.cors_credentials:
            cmd += ["--cors-credentials"]
        if self.event_grid:
            cmd += ["--event-grid"]
        self.proc = subprocess.Popen(
            [*cmd, "--port", str(self.port)],
            cwd=REPO,
            env={**os.environ, master_key.SETTING: MASTER_KEY, **self.env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"devhost exited early:\n{self.log_path.read_text()[-3000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("devhost did not start listening in time")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


@contextmanager
def running_devhost(
    env: dict[str, str],
    log_dir: Path,
    *,
    cors: str | None = None,
    cors_credentials: bool = False,
    event_grid: bool = True,
) -> Iterator[str]:
    """The app served by a devhost child process with `env` (and CORS origins, if given);
    its base URL."""
    devhost = DevhostProcess(
        REPO,
        env,
        log_dir / "devhost.log",
        cors=cors,
        cors_credentials=cors_credentials,
        event_grid=event_grid,
    ).start()
    try:
        yield devhost.base_url
    finally:
        devhost.stop()


def devhost_setup(command: str, app_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m devhost COMMAND --app-dir APP_DIR ARGS`, as `make install` runs the set-up
    steps (`vapid`, `master-key`) over an app folder's local.settings.json."""
    return subprocess.run(
        [sys.executable, "-m", "devhost", command, "--app-dir", str(app_dir), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def local_values(app_dir: Path) -> dict[str, str]:
    """The `Values` of `app_dir`'s local.settings.json."""
    return json.loads((app_dir / "local.settings.json").read_text())["Values"]


def warmed(base_url: str, timeout: float = 240) -> str:
    """`base_url` once its offline models are warm (`/api/health` 200): a capture sent before
    waits for them, and on a loaded machine the warm-up alone can outlast a test's wait for
    what the test is about. Returns `base_url`."""
    eventually(
        lambda: httpx.get(f"{base_url}/api/health", timeout=30).status_code == 200,
        timeout=timeout,
        interval=1,
    )
    return base_url


def blob_created(container: ContainerClient, name: str) -> dict:
    """A Microsoft.Storage.BlobCreated event (Event Grid schema) for the blob as it is now,
    written out the way Azure's documentation shows one."""
    blob = container.get_blob_client(name)
    props = blob.get_blob_properties()
    return {
        "topic": "/subscriptions/x/resourceGroups/r/providers/Microsoft.Storage/"
        "storageAccounts/devstoreaccount1",
        "subject": f"/blobServices/default/containers/{container.container_name}/blobs/{name}",
        "eventType": "Microsoft.Storage.BlobCreated",
        "eventTime": "2026-11-23T09:00:00.0000000Z",
        "id": str(uuid.uuid4()),
        "data": {
            "api": "PutBlob",
            "clientRequestId": str(uuid.uuid4()),
            "requestId": str(uuid.uuid4()),
            "eTag": props.etag.strip('"'),
            "contentType": props.content_settings.content_type,
            "contentLength": props.size,
            "blobType": "BlockBlob",
            "url": blob.url,
            "sequencer": "00000000000004420000000000028963",
            "storageDiagnostics": {"batchId": str(uuid.uuid4())},
        },
        "dataVersion": "",
        "metadataVersion": "1",
    }


def read_records(path: Path, kind: str | None = None) -> list[dict]:
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if kind is None or r["kind"] == kind]


def docs(cosmos, container: str, capture_id: str) -> list[dict]:
    """Every document with this id in a container, whatever its partition."""
    return list(
        cosmos.get_container_client(container).query_items(
            "SELECT * FROM c WHERE c.id = @id",
            parameters=[{"name": "@id", "value": capture_id}],
            enable_cross_partition_query=True,
        )
    )


def clear_queue(storage_conn: str, name: str) -> None:
    """Empty a queue, so a module's checks (which peek at most 32 messages) see only its own."""
    from azure.storage.queue import QueueClient

    QueueClient.from_connection_string(storage_conn, name).clear_messages()


def run_devhost_check(app_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "devhost", "check", "--app-dir", str(app_dir)],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def bench_classify(
    model_url: str,
    rows: list[dict],
    tmp: Path,
    *extra: str,
    model: str | None = None,
    settings: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict | None]:
    """`python -m bench classify --model openai` over `rows` (a labelled set), with the model
    server at `model_url` as the only app setting in the environment (an operator's shell),
    besides `settings`, and `model` as its chat model (None: the app's default). The run, and
    its results file."""
    from shared.settings import Settings

    labelled = tmp / "set.jsonl"
    labelled.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp / "result.json"
    names = {
        name
        for setting in Settings.model_fields.values()
        for name in getattr(setting.validation_alias, "choices", ())
    }
    env = {k: v for k, v in os.environ.items() if k not in names}
    # Empty rather than unset: local.settings.json, which the harness reads, must not add one.
    env |= {"AZURE_OPENAI_ENDPOINT": "", "OPENAI_BASE_URL": model_url, "MODEL_MAX_RETRIES": "0"}
    if model is not None:
        env["OPENAI_CHAT_MODEL"] = model
    env |= settings or {}
    command = ["classify", "--model", "openai", "--set", str(labelled), "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "bench", *command, *extra],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, json.loads(out.read_text()) if done.returncode == 0 else None


__all__ = [
    "BUCKETS",
    "DEV_KEYS",
    "KEY",
    "LOOKING_AT_OUTCOMES",
    "OTHER_KEY",
    "REPO",
    "SARAH",
    "DevhostProcess",
    "bench_classify",
    "blob_created",
    "clear_queue",
    "docs",
    "eventually",
    "read_records",
    "run_devhost_check",
    "run_input",
    "running_devhost",
]
