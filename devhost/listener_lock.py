"""The host's singleton listener lock, which keeps a timer to one host of an app: a blob
lease on `azure-webjobs-hosts/locks/<hostId>/Host.Functions.<name>.Listener`.

As the WebJobs SDK does it (host.json `singleton`): the host that takes the lease starts the
timer's listener and renews the lease at half its `listenerLockPeriod`; another host with the
same host id tries again every `listenerLockRecoveryPollingInterval` and starts the listener
(with its past-due check and `runOnStartup`) once it gets the lease. A host that stops
releases it; one that dies lets it expire. A lost lease stops the listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceExistsError
from azure.storage.blob.aio import BlobLeaseClient, ContainerClient

from .config import SingletonOptions

log = logging.getLogger("devhost.listener_lock")


class ListenerLock:
    def __init__(
        self,
        container: ContainerClient,
        host_id: str,
        function_name: str,
        options: SingletonOptions,
    ) -> None:
        self.blob_name = f"locks/{host_id}/Host.Functions.{function_name}.Listener"
        self._blob = container.get_blob_client(self.blob_name)
        self._container = container
        self._name = function_name
        self._period = round(options.listener_lock_period.total_seconds())
        self._retry = options.listener_lock_recovery_polling_interval.total_seconds()

    async def hold_while(self, listen: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run `listen` while this host holds the lock; wait for the lock until it does."""
        said = False
        while True:
            try:
                lease = await self._acquire()
            except Exception as exc:  # storage down: as for another host's lease, try again
                log.warning("timer %s: taking its listener lock failed: %r", self._name, exc)
                lease = None
            if lease is None:
                if not said:
                    log.info(
                        "timer %s: listener lock not taken (held by another host of this "
                        "host id?); trying every %gs",
                        self._name,
                        self._retry,
                    )
                    said = True
                await asyncio.sleep(self._retry)
                continue
            said = False
            log.info("timer %s: listener lock taken", self._name)
            listener = asyncio.create_task(listen())
            keeper = asyncio.create_task(self._renew(lease))
            try:
                await asyncio.wait({listener, keeper}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                lost = keeper.done() and not keeper.cancelled() and keeper.exception() is not None
                for task in (listener, keeper):
                    task.cancel()
                await asyncio.gather(listener, keeper, return_exceptions=True)
                if not lost:
                    with contextlib.suppress(Exception):
                        await lease.release()
            if not lost:
                return  # the listener ended by itself: a schedule that never fires

    async def _acquire(self) -> BlobLeaseClient | None:
        with contextlib.suppress(ResourceExistsError):
            await self._container.create_container()
        with contextlib.suppress(ResourceExistsError):
            await self._blob.upload_blob(b"", overwrite=False)
        try:
            return await self._blob.acquire_lease(lease_duration=self._period)
        except HttpResponseError as exc:
            if exc.status_code == 409:
                return None  # leased by another host
            raise

    async def _renew(self, lease: BlobLeaseClient) -> None:
        """Renew at half the period; a renewal refused means the lock is lost, and ends this."""
        while True:
            await asyncio.sleep(self._period / 2)
            try:
                await lease.renew()
            except HttpResponseError as exc:
                if exc.status_code == 409:
                    log.warning("timer %s: listener lock lost; its listener stops", self._name)
                    raise
                log.warning("timer %s: renewing the listener lock failed: %r", self._name, exc)
