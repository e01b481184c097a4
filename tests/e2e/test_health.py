"""GET /api/health through the devhost: honest about each dependency, and about the offline
models, which are "warming" (503, Retry-After) until a capture would be classified at full
speed."""

from __future__ import annotations

from pathlib import Path

import httpx

from devhost.emulators import free_port
from testkit.support import KEY, REPO, DevhostProcess, eventually, run_input
from tests.sse import post_run

# Empty rather than unset, so that no local.settings.json can name a model server.
OFFLINE_MODELS = {"AZURE_OPENAI_ENDPOINT": "", "OPENAI_BASE_URL": ""}


def _health(env: dict[str, str], log: Path) -> httpx.Response:
    host = DevhostProcess(REPO, env, log).start()
    try:
        return httpx.get(f"{host.base_url}/api/health", timeout=20)
    finally:
        host.stop()


def test_health_is_ok_when_cosmos_and_storage_are_up(
    scripted_env: dict[str, str], tmp_path: Path
) -> None:
    response = _health(scripted_env, tmp_path / "devhost.log")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert {name: c["status"] for name, c in body["checks"].items()} == {
        "cosmos": "ok",
        "blobs": "ok",
        "queues": "ok",
    }
    # A model server (Azure OpenAI in Azure) has nothing to load: no models, ready at once.
    assert "models" not in body
    assert "retry-after" not in response.headers


def test_health_is_503_and_names_the_dependency_that_is_down(
    scripted_env: dict[str, str], tmp_path: Path
) -> None:
    dead = f"https://127.0.0.1:{free_port()}"  # nothing listens there
    env = {**scripted_env, "COSMOS_ENDPOINT": dead, "HEALTH_TIMEOUT_S": "2"}
    response = _health(env, tmp_path / "devhost.log")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy"
    assert body["checks"]["cosmos"]["status"] == "down"
    assert body["checks"]["blobs"]["status"] == "ok"
    assert scripted_env["COSMOS_KEY"] not in response.text
    assert "AccountKey" not in response.text


def test_a_fresh_host_is_warming_until_its_offline_models_classify_then_files_at_once(
    provisioned: dict[str, str], tmp_path: Path
) -> None:
    host = DevhostProcess(REPO, {**provisioned, **OFFLINE_MODELS}, tmp_path / "devhost.log")
    host.start()
    try:
        with httpx.Client(base_url=host.base_url, timeout=30) as client:
            # The first call starts the warm-up: the models cannot be loaded yet.
            first = client.get("/api/health")
            assert first.status_code == 503, first.text
            assert first.headers["retry-after"] == "3"
            body = first.json()
            assert body["status"] == "warming"
            assert {c["status"] for c in body["checks"].values()} == {"ok"}
            assert set(body["models"]) == {"classifier", "transcriber", "embedder"}
            assert "warming" in {m["status"] for m in body["models"].values()}

            def ready() -> dict | None:
                response = client.get("/api/health")
                return response.json() if response.status_code == 200 else None

            body = eventually(ready, timeout=240, interval=0.5)
            assert body["status"] == "ok"
            assert {m["status"] for m in body["models"].values()} == {"ok"}
            # Ready means a capture sent now is classified, in this run, not queued.
            run = post_run(
                client, "/api/capture", run_input("Call Sarah about the budget review"), headers=KEY
            )
            assert run.status == 200, run.raw[:500]
            assert run.last()["type"] == "RUN_FINISHED"
            result = run.last()["result"]
            assert result["outcome"] == "CLASSIFIED" and result["bucket"] == "People", result
    finally:
        host.stop()
