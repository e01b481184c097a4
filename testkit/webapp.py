"""The capture app (web/) in a real browser: building it, serving web/dist on a loopback
origin, finding Chromium, letting the app's origin PUT voice notes to Azurite, and running a
scenario of tests/browser/drive.mjs (Playwright driving headless Chromium). Shared by the
browser tests and the benchmark."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from devhost.emulators import REPO, free_port
from devhost.provision import blob_cors_rules
from devhost.webapp import WebAppServer

DIST = REPO / "web" / "dist"
DRIVER = REPO / "tests" / "browser" / "drive.mjs"
SCREENSHOTS = REPO / "docs" / "screenshots"
SPEECH = REPO / "tests" / "data" / "audio" / "call_sarah.wav"

NO_CHROMIUM = (
    "No Chromium found for the browser tests. Install Debian's chromium package "
    "(`make chromium`, or `sudo apt-get install chromium`), or point CHROMIUM at a "
    "Chromium or Chrome binary (CHROMIUM=/path/to/chrome make test)."
)


def find_chromium() -> str | None:
    """$CHROMIUM if set, else Debian's `chromium` (or another distribution's name for it)."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    return None


def build() -> None:
    """`npm run build:web`: web/dist from the sources as they are now."""
    done = subprocess.run(
        ["npm", "run", "--silent", "build:web"], cwd=REPO, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"npm run build:web failed:\n{done.stdout}\n{done.stderr}")


@contextmanager
def serving(directory: Path = DIST) -> Iterator[str]:
    """`directory` served on a free loopback port by the stack's own web server (127.0.0.1 is
    a secure context, as the service worker and the microphone need); its origin."""
    server = WebAppServer(directory, "127.0.0.1", free_port()).start()
    try:
        yield server.url
    finally:
        server.stop()


def allow_uploads_from(storage_conn: str, origin: str) -> None:
    """Adds provisioning's Blob CORS rule for `origin` (a browser PUTs a voice note to its
    upload URL), keeping the rules already there (those of local.settings.json's origins)."""
    from azure.storage.blob import BlobServiceClient

    service = BlobServiceClient.from_connection_string(storage_conn)
    rules = service.get_service_properties()["cors"] or []
    if not any(origin in rule.allowed_origins.split(",") for rule in rules):
        service.set_service_properties(cors=[*rules, *blob_cors_rules([origin])])


def drive(scenario: str, env: dict[str, str], timeout: float = 240) -> dict:
    """Runs one scenario of drive.mjs; what it saw, as JSON."""
    done = subprocess.run(
        ["node", str(DRIVER), scenario],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise AssertionError(f"drive.mjs {scenario} failed:\n{done.stderr[-6000:]}")
    return json.loads(done.stdout)
