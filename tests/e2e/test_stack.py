"""`python -m devhost stack` (what `make dev` runs): says "ready" only once a capture would be
classified at full speed, serves the web app's build on its own origin, which the API's and
Blob storage's CORS let in wherever DEVHOST_WEB_PORT puts it, with the local Event Grid
subscribed to the voice-notes trigger's webhook; Ctrl-C stops everything it started."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from devhost.__main__ import _web_app, _web_app_lines
from devhost.cors import CorsPolicy
from devhost.emulators import AZURITE_ACCOUNT, Ports, free_port
from devhost.webapp import WebAppServer
from testkit.support import KEY, REPO, eventually, run_input
from tests.sse import post_run


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def a_build(folder: Path) -> Path:
    """What a PWA build holds, small."""
    folder.mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html><title>Capture</title>")
    (folder / "sw.js").write_text("self.addEventListener('fetch', () => {});")
    (folder / "manifest.webmanifest").write_text('{"name": "Capture"}')
    (folder / "assets").mkdir()
    (folder / "assets" / "app-3f2a.js").write_text("console.log('capture');")
    (folder / "assets" / "app-3f2a.css").write_text("body{margin:0}")
    (folder / "icon-192.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return folder


def a_fresh_clone(folder: Path) -> Path:
    """The app as `make` leaves a fresh clone: local.settings.json is the sample, untouched."""
    folder.mkdir(parents=True)
    for name in ("function_app.py", "host.json", "local.settings.sample.json"):
        shutil.copy(REPO / name, folder / name)
    shutil.copy(REPO / "local.settings.sample.json", folder / "local.settings.json")
    return folder


def test_stack_is_ready_when_a_capture_files_at_once_and_ctrl_c_stops_everything(
    tmp_path: Path,
) -> None:
    ports, http_port, web_port = Ports.free(), free_port(), free_port()
    # The web app moved off 7072 by DEVHOST_WEB_PORT alone: no --cors, no edited settings.
    web, web_by_name = f"http://127.0.0.1:{web_port}", f"http://localhost:{web_port}"
    api = f"http://127.0.0.1:{http_port}/api"
    env = {
        **os.environ,
        "DEVHOST_PORT": str(http_port),
        "DEVHOST_WEB_PORT": str(web_port),
        "AZURITE_BLOB_PORT": str(ports.blob),
        "AZURITE_QUEUE_PORT": str(ports.queue),
        "AZURITE_TABLE_PORT": str(ports.table),
        "COSMOS_PORT": str(ports.cosmos),
        # The offline models, as `make dev` without a model setting (empty: none from a shell).
        "AZURE_OPENAI_ENDPOINT": "",
        "OPENAI_BASE_URL": "",
    }
    log_path = tmp_path / "stack.log"
    log = open(log_path, "wb")  # noqa: SIM115
    cmd = [sys.executable, "-m", "devhost", "stack", "--data-dir", str(tmp_path / "data")]
    cmd += ["--app-dir", str(a_fresh_clone(tmp_path / "app"))]
    cmd += ["--web-dir", str(a_build(tmp_path / "dist"))]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        # "Ready" only once the offline models have warmed up; it said so meanwhile.
        eventually(lambda: "Ready in " in log_path.read_text(), timeout=300, interval=0.5)
        output = log_path.read_text()
        assert "Warming the offline models (classifier and transcriber and embedder)" in output
        assert output.index("Warming the offline models") < output.index("Ready in ")
        assert "local-dev-key" in output and "curl" in output
        assert f"web app: {web}\n" in output and "not among the CORS origins" not in output
        health = httpx.get(f"{api}/health", timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "ok", health.text
        # A capture sent right after "ready" is classified in its own run.
        with httpx.Client(timeout=60) as client:
            run = post_run(
                client,
                f"{api}/capture",
                run_input("Call Sarah about the budget review"),
                headers=KEY,
            )
        assert run.last()["result"]["outcome"] == "CLASSIFIED", run.raw[-500:]
        page = httpx.get(f"{web}/")
        assert page.text.startswith("<!doctype html>")
        # The page's moved origin (either name) may call the API, and PUT a voice note to Blob
        # storage: its origins followed the port into the API's CORS and Azurite's rules.
        for origin in (web, web_by_name):
            preflight = httpx.options(
                f"{api}/capture",
                headers={"Origin": origin, "Access-Control-Request-Method": "POST"},
            )
            assert preflight.status_code == 204
            assert preflight.headers["access-control-allow-origin"] == origin
            blob = httpx.options(
                f"http://127.0.0.1:{ports.blob}/{AZURITE_ACCOUNT}/voice-notes/dev/x.webm",
                headers={"Origin": origin, "Access-Control-Request-Method": "PUT"},
            )
            assert blob.status_code == 200 and blob.headers["access-control-allow-origin"] == origin
        # ... and the default port's origin no longer may.
        stale = httpx.options(
            f"{api}/capture",
            headers={"Origin": "http://127.0.0.1:7072", "Access-Control-Request-Method": "POST"},
        )
        assert "access-control-allow-origin" not in stale.headers
        # The local Event Grid runs with it: subscribed to voice notes through the webhook.
        validated = "Event Grid subscription validated for Host.Functions.voice_note_uploaded"
        eventually(lambda: validated in log_path.read_text())
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        log.close()
    for port in (http_port, web_port, ports.blob, ports.queue, ports.cosmos):
        assert not _listening(port), f"port {port} still open after Ctrl-C"
    assert (tmp_path / "data" / "azurite").is_dir()  # data kept where it was asked to be


def test_the_web_app_is_served_with_the_types_and_caching_a_pwa_needs(tmp_path: Path) -> None:
    server = WebAppServer(a_build(tmp_path / "dist"), "127.0.0.1", free_port()).start()
    try:
        with httpx.Client(base_url=server.url) as client:
            expected = {
                "/": "text/html; charset=utf-8",
                "/sw.js": "text/javascript; charset=utf-8",
                "/assets/app-3f2a.js": "text/javascript; charset=utf-8",
                "/assets/app-3f2a.css": "text/css; charset=utf-8",
                "/manifest.webmanifest": "application/manifest+json",
                "/icon-192.png": "image/png",
            }
            for path, content_type in expected.items():
                response = client.get(path)
                assert response.status_code == 200, path
                assert response.headers["content-type"] == content_type, path
                # A rebuilt index.html or service worker is picked up on the next load.
                assert response.headers["cache-control"] == "no-cache", path
                assert response.headers["x-content-type-options"] == "nosniff"
            # Revalidating an unchanged file costs no body.
            modified = client.get("/sw.js").headers["last-modified"]
            assert client.get("/sw.js", headers={"If-Modified-Since": modified}).status_code == 304
            assert client.get("/assets/").status_code == 404  # no folder listings
            assert client.get("/missing.js").status_code == 404
    finally:
        server.stop()


def test_without_a_build_the_stack_says_so_in_one_line(tmp_path: Path) -> None:
    assert _web_app(tmp_path / "dist", "127.0.0.1", free_port()) is None
    line = _web_app_lines(None, tmp_path / "dist", CorsPolicy(("http://127.0.0.1:7072",)))
    assert line.count("\n") == 1 and "npm run build:web" in line


def test_a_web_app_its_api_would_refuse_is_pointed_out(tmp_path: Path) -> None:
    server = WebAppServer(a_build(tmp_path / "dist"), "127.0.0.1", free_port()).start()
    try:
        allowed = _web_app_lines(server, tmp_path / "dist", CorsPolicy((server.url,)))
        assert allowed == f"  web app: {server.url}\n"
        refused = _web_app_lines(server, tmp_path / "dist", CorsPolicy(("http://other",)))
        assert "not among the CORS origins" in refused
        assert "not among the CORS origins" in _web_app_lines(server, tmp_path / "dist", None)
    finally:
        server.stop()
