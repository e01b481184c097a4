"""The phone web app's build (web/dist) served on its own loopback port, next to the API.

Its own port makes it a different origin from the API, as in Azure (Static Web Apps and the
Function App), so the API's CORS is exercised locally exactly as it will be there. Plain files
from a thread: the API's event loop never waits on a disk read.
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .emulators import REPO

WEB_DIST = REPO / "web" / "dist"
# Its origins at this port are local.settings.sample.json's Host.CORS; the stack moves them
# with the port (DEVHOST_WEB_PORT) while Host.CORS is left as that (devhost/cors.py).
WEB_PORT = 7072

# Fixed types for what a PWA build holds: Python's own table depends on its version (3.11 says
# application/javascript) and on the machine's /etc/mime.types, and lacks .webmanifest.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webp": "image/webp",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
    ".wasm": "application/wasm",
}


class _Handler(SimpleHTTPRequestHandler):
    extensions_map = CONTENT_TYPES  # others: Python's guess, else application/octet-stream
    protocol_version = "HTTP/1.1"  # keep-alive: a page load is many small files

    def end_headers(self) -> None:
        # Revalidate everything: files change with every build, and a stale index.html or
        # service worker would keep serving the last one. Unchanged files cost a 304.
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def list_directory(self, path):  # no listings: a folder without index.html is a 404
        self.send_error(404)
        return None

    def log_message(self, format: str, *args: object) -> None:  # the API's lines are enough
        pass


class WebAppServer:
    """Serves one folder on host:port from a daemon thread until `stop()`."""

    def __init__(self, root: Path, host: str, port: int) -> None:
        self._server = ThreadingHTTPServer((host, port), partial(_Handler, directory=str(root)))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://{host}:{port}"

    def start(self) -> WebAppServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
