"""A FaultProxy that also reads the HTTP it relays (plain HTTP only, i.e. Azurite).

Put between the devhost and Azurite, it records every request and its answer as an
`Exchange`, so a test can wait for what the devhost demonstrably did (a container scan, a queue
poll, a receipt check, a delete) instead of sleeping and hoping it happened. The bytes still
pass through untouched; a stream the tap cannot parse stops being recorded, never relayed.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from testkit.fault_proxy import FaultProxy, Observer

BODY_KEPT = 64 * 1024  # bytes of each response body kept for assertions (queue polls are small)


@dataclass(frozen=True)
class Exchange:
    """One request and the head (and first BODY_KEPT bytes) of its response."""

    method: str
    path: str  # unquoted, without the query: /devstoreaccount1/<container or queue>/...
    query: dict[str, str]
    status: int
    headers: dict[str, str]  # the response's, names lower-cased
    sent: float  # time.monotonic() when the request's head went up
    answered: float  # time.monotonic() when the response's head came back
    body: bytes = b""


class StorageTap(FaultProxy):
    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        super().__init__(upstream_port, upstream_host)
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []
        self.unparsed = 0  # connections whose HTTP the tap lost track of (should stay 0)

    def exchanges(
        self, method: str | None = None, path: str | Callable[[str], bool] | None = None
    ) -> list[Exchange]:
        """Completed exchanges in the order their responses came back; `path` is an exact
        path or a predicate on it."""
        with self._lock:
            found = list(self._exchanges)
        if method is not None:
            found = [e for e in found if e.method == method]
        if isinstance(path, str):
            found = [e for e in found if e.path == path]
        elif path is not None:
            found = [e for e in found if path(e.path)]
        return found

    def _observers(self) -> tuple[Observer, Observer]:
        connection = _Connection(self)
        return connection.up.feed, connection.down.feed

    def _record(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)


@dataclass
class _Request:
    method: str
    target: str
    sent: float


@dataclass
class _Response:
    request: _Request
    status: int
    headers: dict[str, str]
    answered: float
    body: bytearray = field(default_factory=bytearray)


class _Connection:
    """Both directions of one proxied connection. HTTP/1.1 without pipelining, as the Azure
    SDKs speak it: responses come back in the order of their requests."""

    def __init__(self, tap: StorageTap) -> None:
        self.tap = tap
        self.pending: deque[_Request] = deque()
        self.up = _Framer(self._request_head, on_failure=self._lost)
        self.down = _Framer(
            self._response_head, self._response_body, self._response_end, on_failure=self._lost
        )
        self.response: _Response | None = None

    def _lost(self) -> None:
        self.tap.unparsed += 1

    def _request_head(self, start: str, headers: dict[str, str]) -> str | int:
        method, target, _ = start.split(" ", 2)
        self.pending.append(_Request(method, target, time.monotonic()))
        return _body_kind(headers)

    def _response_head(self, start: str, headers: dict[str, str]) -> str | int:
        status = int(start.split(" ", 2)[1])
        if 100 <= status < 200:
            return 0  # interim (100 Continue): the request's real answer follows
        request = self.pending.popleft()
        self.response = _Response(request, status, headers, time.monotonic())
        if request.method == "HEAD" or status in (204, 304):
            return 0
        return _body_kind(headers, until_close=True)

    def _response_body(self, data: bytes) -> None:
        if self.response is not None and len(self.response.body) < BODY_KEPT:
            self.response.body += data[: BODY_KEPT - len(self.response.body)]

    def _response_end(self) -> None:
        response, self.response = self.response, None
        if response is None:
            return
        request = response.request
        url = urlsplit(request.target)
        self.tap._record(
            Exchange(
                method=request.method,
                path=unquote(url.path),
                query=dict(parse_qsl(url.query)),
                status=response.status,
                headers=response.headers,
                sent=request.sent,
                answered=response.answered,
                body=bytes(response.body),
            )
        )


def _body_kind(headers: dict[str, str], *, until_close: bool = False) -> str | int:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return "chunked"
    if "content-length" in headers:
        return int(headers["content-length"])
    return "close" if until_close else 0


class _Framer:
    """Splits one direction's bytes into HTTP messages: a head, then a body framed by
    Content-Length or chunked encoding. (A response body that runs until the connection
    closes never ends here, so it is not recorded; Azurite frames all of its bodies.)"""

    def __init__(
        self,
        on_head: Callable[[str, dict[str, str]], str | int],
        on_body: Callable[[bytes], None] = lambda data: None,
        on_end: Callable[[], None] = lambda: None,
        on_failure: Callable[[], None] = lambda: None,
    ) -> None:
        self.on_head, self.on_body, self.on_end = on_head, on_body, on_end
        self.on_failure = on_failure
        self.buf = bytearray()
        self.state = "head"
        self.remaining = 0
        self.failed = False

    def feed(self, data: bytes) -> None:
        if self.failed:
            return
        self.buf += data
        try:
            while self._step():
                pass
        except Exception:  # the relay goes on regardless; only the record stops
            self.failed = True
            self.buf.clear()
            self.on_failure()

    def _step(self) -> bool:
        """Consume what can be consumed now; False when more bytes are needed."""
        if self.state == "head":
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return False
            start, *lines = self.buf[:end].decode("latin-1").split("\r\n")
            del self.buf[: end + 4]
            headers = {}
            for line in lines:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            kind = self.on_head(start, headers)
            if kind == "chunked":
                self.state = "chunk-size"
            elif kind == "close":
                self.state = "until-close"
            elif kind:
                self.state, self.remaining = "body", int(kind)
            else:
                self._end()
            return True
        if self.state in ("body", "chunk-data"):
            if not self.buf:
                return False
            take = bytes(self.buf[: self.remaining])
            del self.buf[: len(take)]
            self.remaining -= len(take)
            self.on_body(take)
            if self.remaining:
                return False
            if self.state == "body":
                self._end()
            else:
                self.state = "chunk-end"
            return True
        if self.state in ("chunk-size", "chunk-end", "trailer"):
            end = self.buf.find(b"\r\n")
            if end < 0:
                return False
            size_line = bytes(self.buf[:end])
            del self.buf[: end + 2]
            if self.state == "chunk-end":  # the CRLF after a chunk's data
                self.state = "chunk-size"
            elif self.state == "trailer":
                if not size_line:
                    self._end()
            elif (size := int(size_line.split(b";", 1)[0], 16)) == 0:
                self.state = "trailer"
            else:
                self.state, self.remaining = "chunk-data", size
            return True
        # until-close: everything left is body; the message ends with the connection.
        self.on_body(bytes(self.buf))
        self.buf.clear()
        return False

    def _end(self) -> None:
        self.state = "head"
        self.on_end()
