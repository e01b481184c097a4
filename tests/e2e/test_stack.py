"""`python -m devhost stack` (what `make dev` runs): serves a healthy app, and Ctrl-C stops
everything it started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from devhost.emulators import Ports, free_port
from tests.support import REPO, eventually


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_stack_serves_health_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    ports, http_port = Ports.free(), free_port()
    env = {
        **os.environ,
        "DEVHOST_PORT": str(http_port),
        "AZURITE_BLOB_PORT": str(ports.blob),
        "AZURITE_QUEUE_PORT": str(ports.queue),
        "AZURITE_TABLE_PORT": str(ports.table),
        "COSMOS_PORT": str(ports.cosmos),
    }
    log = open(tmp_path / "stack.log", "wb")  # noqa: SIM115
    cmd = [sys.executable, "-m", "devhost", "stack", "--data-dir", str(tmp_path / "data")]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:

        def healthy() -> dict | None:
            try:
                r = httpx.get(f"http://127.0.0.1:{http_port}/api/health", timeout=5)
            except httpx.TransportError:
                return None
            return r.json() if r.status_code == 200 else None

        assert eventually(healthy, timeout=60)["status"] == "ok"
        output = (tmp_path / "stack.log").read_text()
        assert "local-dev-key" in output and "curl" in output
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        log.close()
    for port in (http_port, ports.blob, ports.queue, ports.cosmos):
        assert not _listening(port), f"port {port} still open after Ctrl-C"
    assert (tmp_path / "data" / "azurite").is_dir()  # data kept where it was asked to be
