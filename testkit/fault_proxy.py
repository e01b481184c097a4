"""A TCP proxy on 127.0.0.1 that tests put between the app and an emulator, to cut the line.

`cut()` drops every live connection and refuses new ones (the port stops listening), as when
a service goes away; `hang()` keeps every connection open and accepts new ones but answers
nothing, as when a service stops responding; `restore()` ends either. Bytes pass through
untouched, so TLS (the Cosmos server) works end to end: the real emulator answers behind it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Self

from devhost.emulators import free_port


class FaultProxy:
    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy")
        self._thread.daemon = True
        self._server: asyncio.Server | None = None
        self._live: set[asyncio.StreamWriter] = set()
        self._hung = False
        self.connections = 0  # accepted since start, for tests that check traffic went through

    # -- control, from the test's thread -------------------------------------------------------

    def start(self) -> Self:
        self._thread.start()
        self._call(self._listen())
        return self

    def cut(self) -> None:
        """Stop listening (new connections are refused) and drop the live ones."""
        self._call(self._cut())

    def hang(self) -> None:
        """Keep listening and accept connections, but never answer: bytes from either side
        are swallowed, on live connections too, and the proxy closes nothing. A client sees
        requests that are sent and never answered, until its own timeout gives up."""
        self._call(self._hang())

    def restore(self) -> None:
        """End a cut (listen again) or a hang (drop the connections it held, whose streams
        lost bytes, so that clients reconnect and are answered)."""
        self._call(self._restore())

    @property
    def is_cut(self) -> bool:
        return self._server is None

    @property
    def is_hung(self) -> bool:
        return self._hung

    def stop(self) -> None:
        self._call(self._cut())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, coro) -> None:
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    # -- serving, on the proxy's loop ----------------------------------------------------------

    async def _listen(self) -> None:
        if self._server is None:
            # reuse_address: the port was ours a moment ago and may hold TIME_WAIT sockets.
            self._server = await asyncio.start_server(
                self._serve, "127.0.0.1", self.port, reuse_address=True
            )

    async def _hang(self) -> None:
        self._hung = True
        await self._listen()

    async def _restore(self) -> None:
        if self._hung:
            self._hung = False
            for writer in list(self._live):
                _abort(writer)
            self._live.clear()
        await self._listen()

    async def _cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._live):
            _abort(writer)
        self._live.clear()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self._hung:
            await self._swallow(client_r, client_w)
            return
        try:
            upstream_r, upstream_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            _abort(client_w)
            return
        pair = {client_w, upstream_w}
        self._live |= pair
        to_upstream, to_client = self._observers()
        try:
            await asyncio.gather(
                self._pipe(client_r, upstream_w, to_upstream),
                self._pipe(upstream_r, client_w, to_client),
            )
        finally:
            for writer in pair:
                self._live.discard(writer)
                _abort(writer)

    def _observers(self) -> tuple[Observer | None, Observer | None]:
        """What sees each connection's bytes on their way up and back (a subclass's hook)."""
        return None, None

    async def _swallow(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A connection made while hung: read and drop until the client or `restore` ends it."""
        self._live.add(writer)
        try:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while await reader.read(65536):
                    pass
        finally:
            self._live.discard(writer)
            _abort(writer)

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        observe: Observer | None = None,
    ) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                if self._hung:
                    continue  # swallowed: neither side hears from the other
                if observe is not None:
                    observe(data)
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(OSError):
            if writer.can_write_eof() and not self._hung:
                writer.write_eof()


Observer = Callable[[bytes], None]


def _abort(writer: asyncio.StreamWriter) -> None:
    # A reset, not a polite close: what a client sees when the far side goes away.
    with contextlib.suppress(Exception):
        writer.transport.abort()
