"""A proxy on 127.0.0.1 between the app and the local Cosmos server that reads the HTTP it
relays (it ends TLS with a certificate of its own, which the Cosmos SDK accepts for a local
endpoint as it does the server's), so that a test can stop a process at an exact point of a
use case: `hold_write` makes it hold one write of one document (never sent on), and `held`
is set once that request came, for the test to kill the process there.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
import threading
from pathlib import Path
from typing import Self

from devhost.emulators import free_port

WRITES = {"PUT", "POST", "PATCH"}  # a replace, a create or upsert, a patch: not reads, deletes


class HoldingProxy:
    def __init__(self, upstream_port: int, cert_dir: Path) -> None:
        self.upstream_port = upstream_port
        self._server_tls = _server_context(cert_dir)
        self._client_tls = ssl.create_default_context()
        self._client_tls.check_hostname = False
        self._client_tls.verify_mode = ssl.CERT_NONE  # the local server's own self-signed one
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="holding-proxy")
        self._thread.daemon = True
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._holding: list[asyncio.Event] = []  # one per held request, set when it is dropped
        self._lock = threading.Lock()
        self._target: str | None = None
        self._skip = 0
        self.held = threading.Event()

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def hold_write(self, document_id: str, *, after: int) -> None:
        """Pass `after` writes that name `document_id` (in the path or the body), then hold
        the next one: it is never sent on, and its connection stays open until `release`."""
        with self._lock:
            self._target, self._skip = document_id, after
            self.held.clear()

    def release(self) -> None:
        """Drop the held request's connection (and every other), and hold nothing more."""
        with self._lock:
            self._target = None
        asyncio.run_coroutine_threadsafe(self._drop_all(), self._loop).result(timeout=10)

    def start(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- on the proxy's loop -------------------------------------------------------------------

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, ssl=self._server_tls, reuse_address=True
        )

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        await self._drop_all()

    async def _drop_all(self) -> None:
        for freed in self._holding:
            freed.set()
        self._holding.clear()
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._writers.clear()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            upstream_r, upstream_w = await asyncio.open_connection(
                "127.0.0.1", self.upstream_port, ssl=self._client_tls
            )
        except OSError:
            client_w.transport.abort()
            return
        self._writers |= {client_w, upstream_w}
        back = asyncio.ensure_future(_pipe(upstream_r, client_w))
        try:
            while True:
                head = await client_r.readuntil(b"\r\n\r\n")
                body = await client_r.readexactly(_content_length(head))
                if self._holds(head, body):
                    freed = asyncio.Event()
                    self._holding.append(freed)
                    self.held.set()
                    await freed.wait()  # never sent on: release() drops the connection
                    return
                upstream_w.write(head + body)
                await upstream_w.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            back.cancel()
            for writer in (client_w, upstream_w):
                self._writers.discard(writer)
                with contextlib.suppress(Exception):
                    writer.transport.abort()

    def _holds(self, head: bytes, body: bytes) -> bool:
        method, path = head.split(b" ", 2)[:2]
        with self._lock:
            target = self._target
            if target is None or method.decode() not in WRITES:
                return False
            if target.encode() not in path and target.encode() not in body:
                return False
            if self._skip > 0:
                self._skip -= 1
                return False
            self._target = None
            return True


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.CancelledError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0  # the SDK sends its bodies with a length


def _server_context(cert_dir: Path) -> ssl.SSLContext:
    """A self-signed certificate for 127.0.0.1, made for this proxy."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = cert_dir / "proxy-cert.pem", cert_dir / "proxy-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return context
