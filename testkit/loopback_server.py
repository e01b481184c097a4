"""The life of the stand-in servers tests run on loopback (the scripted model server, the push
service): started from the running event loop, or from a thread of their own for sync tests and
for an app in another process."""

from __future__ import annotations

import asyncio
import threading
from typing import Self

from aiohttp import web


class LoopbackServer:
    """`async with Server() as s:` serves from the running loop; `with Server() as s:` from a
    background thread. Subclasses say what they serve in `make_app`."""

    thread_name = "loopback-server"
    # A client that timed out hangs up; its delayed handler should stop with it rather than
    # hold shutdown.
    cancel_handlers = False

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def make_app(self) -> web.Application:
        raise NotImplementedError

    async def start(self) -> Self:
        # No access log: URLs reach it verbatim, and a push endpoint's path is a credential.
        runner = web.AppRunner(
            self.make_app(),
            handler_cancellation=self.cancel_handlers,
            access_log=None,
            shutdown_timeout=1.0,
        )
        await runner.setup()
        await web.TCPSite(runner, self.host, self.port).start()
        self._runner = runner
        if self.port == 0:
            self.port = runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __enter__(self) -> Self:
        loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        self._loop = loop
        asyncio.run_coroutine_threadsafe(self.start(), loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
        self._loop = self._thread = None
