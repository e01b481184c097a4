"""The devhost itself: loads the app, then serves HTTP and runs queue, blob and timer
triggers, and the admin endpoint that runs a function by hand."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import uvicorn

from . import master_key
from .admin import AdminFunctions
from .blob_queue import HOST_CONNECTION, BlobTriggerQueue
from .blob_webhook import BlobWebhook
from .blobs import BlobScanner, is_event_grid_source
from .config import HostConfig, is_disabled, load_host_config, load_local_settings
from .cors import CorsMiddleware, CorsPolicy
from .http import HttpGateway, build_routes
from .invoke import Invoker
from .listener_lock import ListenerLock
from .loader import LoadedFunction, import_app
from .mcp_webhook import McpWebhook, has_mcp
from .queues import QueueListener, watch_app_enqueues
from .storage import StorageClients
from .timer_schedule import TimerSpec
from .timers import HOSTS_CONTAINER, BlobStatusStore, Clock, SystemClock, TimerListener

log = logging.getLogger("devhost")


def run(main: Coroutine[Any, Any, Any]) -> Any:
    """Run the host's event loop to the end of `main`: uvloop's where it is installed (it is
    in requirements-dev.txt, but for Windows, which it does not support), as the Functions
    Python worker's can be: its loop, written in C, costs the host less CPU a capture than
    asyncio's own (bench/HISTORY.md, issue 32)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def load(app_dir: Path) -> tuple[HostConfig, list[LoadedFunction]]:
    """Settings first (the app may read them at import), then host.json, then the app."""
    load_local_settings(app_dir)
    config = load_host_config(app_dir)
    return config, import_app(app_dir)


# As the host checks a configured id: it names queues and blobs, so their rules apply.
_HOST_ID = re.compile(r"^(?=.{1,32}$)[a-z0-9]+(?:-[a-z0-9]+)*$")


def host_id(app_dir: Path) -> str:
    # The real host derives its id from the site name; locally the app folder stands in.
    configured = os.environ.get("AzureFunctionsWebHost__hostid")  # noqa: SIM112  (host name)
    if configured:
        if not _HOST_ID.match(configured):
            raise ValueError(
                f"AzureFunctionsWebHost__hostid {configured!r}: at most 32 lowercase letters, "
                "digits and single dashes, not at either end"
            )
        return configured
    return "devhost-" + hashlib.sha256(str(app_dir.resolve()).encode()).hexdigest()[:16]


def enabled(functions: list[LoadedFunction]) -> list[LoadedFunction]:
    for f in functions:
        if is_disabled(f.name, os.environ):
            log.info("%s is disabled (AzureWebJobs.%s.Disabled)", f.name, f.name)
    return [f for f in functions if not is_disabled(f.name, os.environ)]


class DevHost:
    def __init__(
        self,
        app_dir: Path,
        config: HostConfig,
        functions: list[LoadedFunction],
        cors: CorsPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        functions = enabled(functions)
        self.storage = StorageClients()
        self.invoker = Invoker(self.storage, config.queues.message_encoding, self._woken)
        self.queue_listeners = [
            QueueListener.for_function(f, config.queues, self.storage, self.invoker)
            for f in functions
            if f.trigger.type == "queueTrigger"
        ]
        hid = host_id(app_dir)
        blob_triggers = [f for f in functions if f.trigger.type == "blobTrigger"]
        # The default source is scanned; the Event Grid source waits for its webhook.
        self.blob_scanners = [
            BlobScanner(f, config.blobs, self.storage, self.invoker, hid)
            for f in blob_triggers
            if not is_event_grid_source(f)
        ]
        self.blob_queue = BlobTriggerQueue(
            blob_triggers, config.queues, self.storage, self.invoker, hid
        )
        hosts = self.storage.blob_service(HOST_CONNECTION).get_container_client(HOSTS_CONTAINER)
        status = BlobStatusStore(hosts, hid)
        self.timers = {
            f.name: TimerListener(
                f,
                TimerSpec.from_binding(f.trigger.raw),
                self.invoker.call,
                status,
                clock or SystemClock(),
            )
            for f in functions
            if f.trigger.type == "timerTrigger"
        }
        # Each timer listens only while this host holds its listener lock, as in the host.
        self.timer_locks = [
            (ListenerLock(hosts, hid, name, config.singleton), timer)
            for name, timer in self.timers.items()
        ]
        watch_app_enqueues(self._woken)
        webhooks: dict[str, Any] = {"blobs": BlobWebhook(self.blob_queue)}
        # The MCP extension's webhook, when the app has MCP functions (without, 404 as any
        # extension that is not there).
        self.mcp = McpWebhook(functions, self.invoker, config.mcp) if has_mcp(functions) else None
        if self.mcp is not None:
            webhooks["mcp"] = self.mcp
        self.gateway = HttpGateway(
            build_routes(functions),
            config.route_prefix,
            self.invoker,
            webhooks=webhooks,
            admin=AdminFunctions(
                functions, self.invoker, self.storage, self.timers, master_key.configured()
            ),
        )
        # Like the host's CORS middleware: in front of routing, only when origins are set.
        self.http = CorsMiddleware(self.gateway, cors) if cors else self.gateway

    def _woken(self, queue_name: str) -> None:
        for listener in self.queue_listeners:
            if listener.queue_name == queue_name:
                listener.wake()

    async def serve(self, host: str, port: int) -> None:
        """Serve until SIGINT/SIGTERM, then stop triggers and close clients in order."""
        server = _Server(
            uvicorn.Config(
                self.http,
                host=host,
                port=port,
                log_level="warning",
                lifespan="off",
                timeout_graceful_shutdown=2,
            )
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, server.stop)
        triggers: list[QueueListener | BlobScanner] = [*self.queue_listeners, *self.blob_scanners]
        if self.blob_queue.listener is not None:
            triggers.append(self.blob_queue.listener)
        workers = [asyncio.create_task(t.run()) for t in triggers]
        workers += [asyncio.create_task(lock.hold_while(t.run)) for lock, t in self.timer_locks]
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.mcp is not None:
                    await stack.enter_async_context(self.mcp.lifespan())
                await server.serve()
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await self.storage.close()


class _Server(uvicorn.Server):
    """uvicorn without its own signal capture: the devhost owns shutdown, so that
    trigger workers and SDK clients close cleanly instead of meeting a re-raised Ctrl-C."""

    @contextlib.contextmanager
    def capture_signals(self):
        yield

    def stop(self) -> None:
        self.should_exit = True
