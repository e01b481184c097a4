"""CORS the platform's way, as the phone web app meets it: a devhost given the app's origins
(as `func start --cors` or Host.CORS), and Azurite's Blob service given the rules provisioning
sets, answering the browser's preflights and requests.

What the host does (devhost/cors.py, from Core Tools' and the Flex host's policy): preflights
answered 204 before routing, any method and header echoed, no max-age, Vary: Origin only with
several origins, nothing at all for another origin. What a browser may read besides the
safelisted headers (Location, Retry-After, ETag, Content-Disposition) the app exposes itself
(shared/http/edge.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from devhost.cors import stack_cors_policy, web_app_origins
from devhost.emulators import free_port
from shared.http.contract import ROUTES
from testkit import fake_openai
from testkit.support import KEY, REPO, DevhostProcess, run_input, running_devhost
from tests.sse import assert_valid_run, get_run, post_run

APP = "http://127.0.0.1:7072"  # the web app as `make dev` serves it
APP_BY_NAME = "http://localhost:7072"  # the same page opened as localhost
STRANGER = "https://elsewhere.example"
# What the web app sends on API calls, as a browser lists them in a preflight.
APP_HEADERS = "authorization,content-type,idempotency-key,traceparent,x-api-key"


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-")}


def preflight(client: httpx.Client, path: str, origin: str, method: str = "POST", **headers):
    return client.options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": APP_HEADERS,
            **headers,
        },
    )


def exposed(headers: httpx.Headers) -> set[str]:
    value = headers.get("access-control-expose-headers", "")
    return {h.strip().lower() for h in value.split(",") if h.strip()}


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    log_dir = tmp_path_factory.mktemp("cors")
    with running_devhost(scripted_env, log_dir, cors=f"{APP},{APP_BY_NAME}") as url:
        yield url


# Preflights


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.route}")
def test_a_preflight_from_the_app_allows_every_route_with_what_the_app_sends(client, route):
    path = route.path.replace("{id}", str(uuid.uuid4()))
    response = preflight(client, path, APP, route.method)
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == APP
    assert response.headers["access-control-allow-methods"] == route.method
    allowed = set(response.headers["access-control-allow-headers"].split(","))
    assert allowed == set(APP_HEADERS.split(","))
    assert "access-control-allow-credentials" not in response.headers  # not configured
    # Two origins configured: the answer depends on who asks, so caches must know.
    assert response.headers["vary"] == "Origin"
    assert response.content == b""


def test_every_configured_origin_is_answered_with_itself(client) -> None:
    response = preflight(client, "/api/capture", APP_BY_NAME)
    assert response.headers["access-control-allow-origin"] == APP_BY_NAME


def test_a_preflight_from_another_origin_gets_no_cors_headers(client) -> None:
    response = preflight(client, "/api/capture", STRANGER)
    # Answered by the CORS middleware all the same, but without a single header the browser
    # would need: it refuses the request.
    assert response.status_code == 204
    assert cors_headers(response) == {}
    assert "vary" not in response.headers


def test_an_options_request_that_is_no_preflight_reaches_routing(client) -> None:
    # Without Access-Control-Request-Method it is a plain OPTIONS: no function takes it.
    response = client.options("/api/capture", headers={"Origin": APP})
    assert response.status_code == 405
    assert response.headers["access-control-allow-origin"] == APP


# Actual requests


def test_a_text_capture_stream_carries_the_cors_headers(client, fake) -> None:
    run = post_run(
        client,
        "/api/capture",
        run_input("Call Sarah about the budget review"),
        headers={**KEY, "Origin": APP, "Idempotency-Key": f"cors-{uuid.uuid4()}"},
    )
    assert_valid_run(run)
    assert run.events[-1]["type"] == "RUN_FINISHED"
    assert run.headers["access-control-allow-origin"] == APP
    assert run.headers["vary"] == "Origin"
    assert {"location", "retry-after"} <= exposed(run.headers)


def test_an_events_feed_carries_the_cors_headers(client, fake) -> None:
    done = post_run(client, "/api/capture", run_input("Call Sarah about it"), headers=KEY)
    capture_id = done.custom()["value"]["inboxItemId"]
    feed = get_run(client, f"/api/captures/{capture_id}/events", headers={**KEY, "Origin": APP})
    assert_valid_run(feed)
    assert feed.events[-1]["type"] == "RUN_FINISHED"
    assert feed.headers["access-control-allow-origin"] == APP


def test_a_new_voice_note_exposes_its_location(client) -> None:
    response = client.post(
        "/api/voice-notes", json={"contentType": "audio/webm"}, headers={**KEY, "Origin": APP}
    )
    assert response.status_code == 201
    assert response.headers["location"] == f"/api/captures/{response.json()['captureId']}"
    assert response.headers["access-control-allow-origin"] == APP
    assert "location" in exposed(response.headers)


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("POST", "/api/capture", {}, 401),  # no key
        ("GET", f"/api/captures/{uuid.uuid4()}", KEY, 404),
        ("POST", "/api/voice-notes", {**KEY, "Content-Type": "text/plain"}, 415),
    ],
)
def test_a_problem_carries_the_cors_headers(client, method, path, headers, status) -> None:
    response = client.request(method, path, headers={**headers, "Origin": APP}, content=b"{}")
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["access-control-allow-origin"] == APP
    assert {"location", "retry-after"} <= exposed(response.headers)


def test_the_hosts_own_answers_carry_them_too(client) -> None:
    response = client.get("/api/no-such-route", headers={"Origin": APP})
    assert response.status_code == 404
    assert response.headers["access-control-allow-origin"] == APP


def test_another_origin_is_never_allowed_to_read_an_answer(client) -> None:
    response = client.post("/api/voice-notes", json={}, headers={**KEY, "Origin": STRANGER})
    assert response.status_code == 422  # served: CORS is the browser's to enforce
    assert "access-control-allow-origin" not in response.headers
    assert "access-control-allow-credentials" not in response.headers
    # The app's own list of exposed headers grants nothing without an allowed origin.
    assert set(cors_headers(response)) == {"access-control-expose-headers"}


def test_a_caller_without_origin_gets_no_allow_origin(client) -> None:
    response = client.get("/api/health")
    assert "access-control-allow-origin" not in response.headers


# Azurite's Blob service: the browser PUTs a voice note straight to its upload URL


@pytest.fixture(scope="module")
async def blob_cors(provisioned: dict[str, str]) -> tuple[str, ...]:
    """Blob CORS as `make dev` provisions it for the app's origins."""
    from devhost.provision import provision

    origins = (APP, APP_BY_NAME)
    await provision(origins)
    return origins


def start_voice_note(client: httpx.Client) -> dict:
    response = client.post(
        "/api/voice-notes", json={"contentType": "audio/webm"}, headers={**KEY, "Origin": APP}
    )
    assert response.status_code == 201, response.text
    return response.json()


def upload_preflight(upload: dict, origin: str, method: str = "PUT") -> httpx.Response:
    requested = ",".join(sorted(h.lower() for h in upload["uploadHeaders"]))
    return httpx.options(
        upload["uploadUrl"],
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": requested,
        },
    )


def test_the_blob_service_allows_the_apps_upload(client, blob_cors) -> None:
    upload = start_voice_note(client)
    # Traced requests add x-ms-meta-traceparent: the rule must take any x-ms-meta-* too.
    upload["uploadHeaders"]["x-ms-meta-traceparent"] = (
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    )
    response = upload_preflight(upload, APP)
    assert response.status_code == 200, response.text
    assert response.headers["access-control-allow-origin"] == APP
    assert response.headers["access-control-allow-methods"] == "PUT"
    allowed = set(response.headers["access-control-allow-headers"].split(","))
    assert allowed == {"content-type", "x-ms-blob-type", "x-ms-meta-traceparent"}

    put = httpx.put(
        upload["uploadUrl"],
        content=b"not really audio",
        headers={**upload["uploadHeaders"], "Origin": APP},
    )
    assert put.status_code == 201, put.text
    assert put.headers["access-control-allow-origin"] == APP
    assert {"etag", "x-ms-request-id"} <= exposed(put.headers)


@pytest.mark.parametrize(("origin", "method"), [(STRANGER, "PUT"), (APP, "GET"), (APP, "DELETE")])
def test_the_blob_service_refuses_other_origins_and_methods(client, blob_cors, origin, method):
    response = upload_preflight(start_voice_note(client), origin, method)
    assert response.status_code == 403
    assert "access-control-allow-origin" not in response.headers


async def test_provisioning_without_origins_leaves_the_blob_service_no_rule(client, blob_cors):
    from devhost.provision import provision

    upload = start_voice_note(client)
    try:
        await provision(())  # as `make dev` with CORS off: stale rules go too
        assert upload_preflight(upload, APP).status_code == 403
    finally:
        await provision(blob_cors)
    assert upload_preflight(upload, APP).status_code == 200


# The policy itself: from local.settings.json or the command line, as `func start` takes it


@pytest.fixture
def small_app(app_env: dict[str, str], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The devhost's small test app in a folder of its own, to give it a local.settings.json."""
    app_dir = tmp_path / "app"
    shutil.copytree(REPO / "tests" / "apps" / "semantics", app_dir)
    env = {**app_env, "RECORD_FILE": str(tmp_path / "records.jsonl")}
    env["AzureFunctionsWebHost__hostid"] = f"cors-{uuid.uuid4().hex[:12]}"
    return app_dir, env


def write_host_settings(app_dir: Path, **host: object) -> None:
    (app_dir / "local.settings.json").write_text(json.dumps({"Values": {}, "Host": host}))


def started(app_dir: Path, env: dict[str, str], log_dir: Path, **cors) -> DevhostProcess:
    return DevhostProcess(app_dir, env, log_dir / "devhost.log", **cors).start()


def test_host_cors_and_credentials_are_read_from_local_settings(small_app, tmp_path) -> None:
    app_dir, env = small_app
    write_host_settings(app_dir, CORS=APP, CORSCredentials=True)
    host = started(app_dir, env, tmp_path)
    try:
        with httpx.Client(base_url=host.base_url, timeout=30) as c:
            response = preflight(c, "/api/items/1", APP, "GET")
            assert response.status_code == 204
            assert response.headers["access-control-allow-origin"] == APP
            assert response.headers["access-control-allow-credentials"] == "true"
            assert "vary" not in response.headers  # one origin: every allowed caller alike
            got = c.get("/api/items/1", headers={"Origin": APP})
            assert got.json()["id"] == "1"
            assert got.headers["access-control-allow-origin"] == APP
            assert got.headers["access-control-allow-credentials"] == "true"
    finally:
        host.stop()


def test_the_command_line_overrides_the_origins_of_local_settings(small_app, tmp_path) -> None:
    app_dir, env = small_app
    write_host_settings(app_dir, CORS=APP, CORSCredentials=True)
    host = started(app_dir, env, tmp_path, cors=STRANGER)
    try:
        with httpx.Client(base_url=host.base_url, timeout=30) as c:
            assert cors_headers(preflight(c, "/api/items/1", APP, "GET")) == {}
            response = preflight(c, "/api/items/1", STRANGER, "GET")
            assert response.headers["access-control-allow-origin"] == STRANGER
            # Not overridden, so the file's: as `func start`, whose --cors-credentials
            # defaults to Host.CORSCredentials.
            assert response.headers["access-control-allow-credentials"] == "true"
    finally:
        host.stop()


def test_any_origin_is_answered_with_a_star(small_app, tmp_path) -> None:
    app_dir, env = small_app
    host = started(app_dir, env, tmp_path, cors="*")
    try:
        with httpx.Client(base_url=host.base_url, timeout=30) as c:
            response = preflight(c, "/api/items/1", STRANGER, "GET")
            assert response.headers["access-control-allow-origin"] == "*"
            assert "vary" not in response.headers
            got = c.get("/api/items/1", headers={"Origin": STRANGER})
            assert got.headers["access-control-allow-origin"] == "*"
            assert "access-control-allow-credentials" not in got.headers
    finally:
        host.stop()


def test_without_origins_there_is_no_cors_at_all(small_app, tmp_path) -> None:
    app_dir, env = small_app
    write_host_settings(app_dir, CORS=APP)
    host = started(app_dir, env, tmp_path, cors="")  # `--cors ''` turns the file's off
    try:
        with httpx.Client(base_url=host.base_url, timeout=30) as c:
            response = preflight(c, "/api/items/1", APP, "GET")
            assert response.status_code == 405  # no function takes OPTIONS
            assert cors_headers(response) == {}
    finally:
        host.stop()


@pytest.mark.parametrize("cors", [["--cors", "*", "--cors-credentials"], ["--cors", f"*,{APP}"]])
def test_a_policy_the_host_would_not_take_stops_the_devhost(small_app, cors) -> None:
    app_dir, env = small_app
    result = subprocess.run(
        [sys.executable, "-m", "devhost", "serve", "--app-dir", str(app_dir), *cors],
        cwd=REPO,
        env={**os.environ, **env, "DEVHOST_PORT": str(free_port())},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "devhost: CORS: '*'" in result.stderr


# The stack's policy: Host.CORS as the sample has it follows the web app's port


def settings_with_cors(app_dir: Path, cors: str | None) -> Path:
    """An app folder with the sample settings, and local.settings.json's Host.CORS as given
    (None: a local.settings.json without it, as made before CORS existed)."""
    app_dir.mkdir()
    shutil.copy(REPO / "local.settings.sample.json", app_dir / "local.settings.sample.json")
    host = {} if cors is None else {"CORS": cors}
    (app_dir / "local.settings.json").write_text(json.dumps({"Values": {}, "Host": host}))
    return app_dir


def sample_cors() -> str:
    return json.loads((REPO / "local.settings.sample.json").read_text())["Host"]["CORS"]


@pytest.mark.parametrize("cors", [sample_cors(), None], ids=["the sample's", "none"])
def test_the_stacks_origins_follow_the_web_apps_port(tmp_path, cors) -> None:
    app_dir = settings_with_cors(tmp_path / "app", cors)
    moved = web_app_origins("127.0.0.1", 7090)
    assert moved == ("http://127.0.0.1:7090", "http://localhost:7090")
    policy = stack_cors_policy(app_dir, moved)
    assert policy is not None and policy.origins == moved
    assert not policy.allows(APP)


def test_the_stack_keeps_origins_of_ones_own_and_the_command_line(tmp_path) -> None:
    app_dir = settings_with_cors(tmp_path / "app", STRANGER)
    moved = web_app_origins("127.0.0.1", 7090)
    policy = stack_cors_policy(app_dir, moved)
    assert policy is not None and policy.origins == (STRANGER,)
    policy = stack_cors_policy(settings_with_cors(tmp_path / "other", None), moved, APP)
    assert policy is not None and policy.origins == (APP,)
    assert stack_cors_policy(app_dir, moved, "") is None  # `--cors ''`: off, as with serve


def test_an_edit_exposes_its_etag_and_the_export_its_file_name(client, fake) -> None:
    fake.enqueue(fake_openai.classification("Projects", 0.9, "Shed"))
    done = post_run(client, "/api/capture", run_input(f"plan the shed {uuid.uuid4()}"), headers=KEY)
    capture_id = done.custom()["value"]["inboxItemId"]
    items = client.get("/api/buckets/projects?limit=100", headers=KEY).json()["items"]
    (item,) = [i for i in items if i["id"] == capture_id]
    ask = preflight(client, f"/api/captures/{capture_id}", APP, "PATCH")
    assert ask.status_code == 204 and ask.headers["access-control-allow-methods"] == "PATCH"
    edit = client.patch(
        f"/api/captures/{capture_id}",
        json={"done": True},
        headers={**KEY, "Origin": APP, "If-Match": item["etag"]},
    )
    assert edit.status_code == 200 and edit.headers["etag"]
    assert edit.headers["access-control-allow-origin"] == APP
    assert "etag" in exposed(edit.headers)
    with client.stream("GET", "/api/export", headers={**KEY, "Origin": APP}) as export:
        assert export.headers["access-control-allow-origin"] == APP
        assert "content-disposition" in exposed(export.headers)
