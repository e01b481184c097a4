"""GET /api/health through the devhost: honest about each dependency."""

from __future__ import annotations

from pathlib import Path

import httpx

from devhost.emulators import free_port
from testkit.support import REPO, DevhostProcess


def _health(env: dict[str, str], log: Path) -> httpx.Response:
    host = DevhostProcess(REPO, env, log).start()
    try:
        return httpx.get(f"{host.base_url}/api/health", timeout=20)
    finally:
        host.stop()


def test_health_is_ok_when_cosmos_and_storage_are_up(
    provisioned: dict[str, str], tmp_path: Path
) -> None:
    response = _health(provisioned, tmp_path / "devhost.log")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert {name: c["status"] for name, c in body["checks"].items()} == {
        "cosmos": "ok",
        "blobs": "ok",
        "queues": "ok",
    }


def test_health_is_503_and_names_the_dependency_that_is_down(
    provisioned: dict[str, str], tmp_path: Path
) -> None:
    dead = f"https://127.0.0.1:{free_port()}"  # nothing listens there
    env = {**provisioned, "COSMOS_ENDPOINT": dead, "HEALTH_TIMEOUT_S": "2"}
    response = _health(env, tmp_path / "devhost.log")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy"
    assert body["checks"]["cosmos"]["status"] == "down"
    assert body["checks"]["blobs"]["status"] == "ok"
    assert provisioned["COSMOS_KEY"] not in response.text
    assert "AccountKey" not in response.text
