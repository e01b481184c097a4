"""Application Insights with local auth off, as infra/ deploys it: the app's exporter sends its
spans with a bearer token of the managed identity that APPLICATIONINSIGHTS_AUTHENTICATION_STRING
names (the exporter reads that setting itself; shared/telemetry.py must not get in its way).

The ingestion endpoint is a loopback HTTPS server of ours (azure-core refuses bearer tokens
over plain HTTP); the identity is a stand-in token credential, since Entra ID is not
reachable here. Everything between (settings, telemetry.configure, azure-monitor's
exporter, azure-core's bearer policy) is the real code, in a fresh interpreter because the
tracer provider is process-wide.
"""

from __future__ import annotations

import gzip
import json
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from testkit.support import REPO
from tests.azurite_oauth import _write_tls_files


class Ingestion(NamedTuple):
    url: str
    ca: Path
    requests: list[tuple[str, dict[str, str], bytes]]  # path, headers, body (decoded)


class TLSServer(ThreadingHTTPServer):
    """HTTPS with the handshake in each connection's own thread (on first read), so one slow
    client cannot hold up accepting the next."""

    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        return self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address


@pytest.fixture
def ingestion() -> Iterator[Ingestion]:
    received: list[tuple[str, dict[str, str], bytes]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            received.append((self.path, dict(self.headers), body))
            items = body.count(b'"iKey"')
            reply = json.dumps({"itemsReceived": items, "itemsAccepted": items, "errors": []})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(reply.encode())

        def log_message(self, *args: object) -> None:
            pass

    with tempfile.TemporaryDirectory(prefix="ingestion-") as tmp:
        ca, cert, key = _write_tls_files(Path(tmp))
        server = TLSServer(("127.0.0.1", 0), Handler)
        server.tls.load_cert_chain(cert, key)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield Ingestion(f"https://127.0.0.1:{server.server_port}/", ca, received)
        finally:
            server.shutdown()
            server.server_close()


# Runs in a fresh interpreter: stands in for Entra ID, then does what an invocation does.
PROBE = """
import json
import logging
logging.basicConfig(level=logging.WARNING)  # the exporter's complaints reach stderr
import azure.identity
from azure.core.credentials import AccessToken

asked = {"identity": [], "scopes": []}

class ManagedIdentityCredential:
    def __init__(self, **kwargs):
        asked["identity"].append(kwargs)

    def get_token(self, *scopes, **kwargs):
        asked["scopes"].extend(scopes)
        return AccessToken("entra-token-for-the-app", 4102444800)

azure.identity.ManagedIdentityCredential = ManagedIdentityCredential

from opentelemetry import trace
from shared import telemetry

telemetry.configure()
with trace.get_tracer("probe").start_as_current_span("capture.probe"):
    pass
asked["flushed"] = trace.get_tracer_provider().force_flush()
print(json.dumps(asked))
"""


def run_probe(
    ingestion: Ingestion, authentication: str | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Run PROBE; what it asked the identity for, and the headers of the one export of its span."""
    env = {
        "PATH": "/usr/bin:/bin",
        "COSMOS_ENDPOINT": "https://127.0.0.1:9/",  # required by the settings, never called
        "APPLICATIONINSIGHTS_CONNECTION_STRING": (
            f"InstrumentationKey={uuid.uuid4()};IngestionEndpoint={ingestion.url}"
        ),
        "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",  # no calls to Microsoft's hosts
        "REQUESTS_CA_BUNDLE": str(ingestion.ca),  # trust our loopback ingestion endpoint
    }
    if authentication:
        env["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"] = authentication
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    asked = json.loads(done.stdout.strip().splitlines()[-1])
    sent = [
        headers
        for path, headers, body in ingestion.requests
        if path.endswith("/track") and b"capture.probe" in body
    ]
    received = [path for path, _, _ in ingestion.requests]
    assert len(sent) == 1, (asked, received, done.stderr[-3000:])
    return asked, sent[0]


def test_with_local_auth_off_spans_go_with_the_identity_s_bearer_token(
    ingestion: Ingestion,
) -> None:
    authentication = "ClientId=client-id-from-the-host-setting;Authorization=AAD"
    asked, headers = run_probe(ingestion, authentication)

    assert headers["Authorization"] == "Bearer entra-token-for-the-app"
    # The identity the host's own setting names (one credential per exporter: traces, logs,
    # metrics), for Azure Monitor's audience.
    named = {"client_id": "client-id-from-the-host-setting"}
    assert asked["identity"] and all(kwargs == named for kwargs in asked["identity"])
    scopes = asked["scopes"]
    assert scopes and all(scope.startswith("https://monitor.azure.com") for scope in scopes)


def test_with_the_key_alone_no_token_is_asked_for(ingestion: Ingestion) -> None:
    asked, headers = run_probe(ingestion, None)

    assert "Authorization" not in headers
    assert asked["identity"] == [] and asked["scopes"] == []
