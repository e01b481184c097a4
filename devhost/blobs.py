"""Blob triggers of the default source (LogsAndContainerScan) by scanning, with receipts like
the host's so each blob version runs once.

A receipt `blobreceipts/{hostId}/{function}/{etag}/{container}/{blob}` in the
`azure-webjobs-hosts` container records a version as done; it is written as incomplete
before the call (counting attempts) and completed after success or once the blob goes to
the `webjobs-blobtrigger-poison` queue. A restart therefore skips finished versions and an
overwrite (new ETag) runs again. Event Grid-source triggers are not scanned: they run when
an event reaches the blobs webhook (blob_webhook.py, blob_queue.py), as in the host.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import re

from azure.core import MatchConditions
from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.functions.blob import InputStream  # the concrete class; func.InputStream is abstract
from azure.storage.blob.aio import BlobServiceClient, ContainerClient
from azure.storage.queue.aio import QueueClient

from .config import BlobOptions
from .invoke import Invoker
from .loader import LoadedFunction
from .storage import StorageClients

log = logging.getLogger("devhost.blobs")

HOSTS_CONTAINER = "azure-webjobs-hosts"
POISON_QUEUE = "webjobs-blobtrigger-poison"


def compile_blob_path(path: str) -> tuple[str, str, re.Pattern[str]]:
    """`voice-notes/{userId}/{name}` → container, literal name prefix, pattern for the name."""
    container, _, name_template = path.partition("/")
    if not container or "{" in container:
        raise ValueError(f"blob path {path!r} must start with a literal container name")
    prefix = name_template.split("{", 1)[0]
    regex, pos = "", 0
    for m in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", name_template):
        regex += re.escape(name_template[pos : m.start()])
        last = m.end() == len(name_template)
        # As in the host, the last expression may span folders; earlier ones stop at '/'.
        regex += f"(?P<{m.group(1)}>{'.+' if last else '[^/]+'})"
        pos = m.end()
    regex += re.escape(name_template[pos:])
    return container, prefix, re.compile(regex)


def is_event_grid_source(function: LoadedFunction) -> bool:
    return str(function.trigger.raw.get("source", "")).lower() == "eventgrid"


async def read_input_stream(
    container: ContainerClient, name: str, etag: str | None = None
) -> InputStream:
    """The blob as the worker binds it to a `func.InputStream`; with `etag`, that version only.
    Raises ResourceNotFoundError, or ResourceModifiedError when the version is gone."""
    blob = container.get_blob_client(name)
    if etag is None:
        downloader = await blob.download_blob()
    else:
        downloader = await blob.download_blob(
            etag=etag, match_condition=MatchConditions.IfNotModified
        )
    data = await downloader.readall()
    props = downloader.properties
    return InputStream(
        data=data,
        name=f"{container.container_name}/{name}",
        uri=blob.url,
        length=props.size,
        blob_properties={
            "ETag": props.etag,
            "ContentType": props.content_settings.content_type,
            "ContentLength": props.size,
            "LastModified": props.last_modified.isoformat() if props.last_modified else None,
            "CreatedOn": props.creation_time.isoformat() if props.creation_time else None,
        },
        metadata=dict(props.metadata or {}),
    )


class BlobScanner:
    def __init__(
        self,
        function: LoadedFunction,
        options: BlobOptions,
        storage: StorageClients,
        invoker: Invoker,
        host_id: str,
    ) -> None:
        self.function = function
        raw = function.trigger.raw
        self.container_name, self._prefix, self._pattern = compile_blob_path(raw["path"])
        connection = raw.get("connection") or "AzureWebJobsStorage"
        service: BlobServiceClient = storage.blob_service(connection)
        self._container: ContainerClient = service.get_container_client(self.container_name)
        self._receipts: ContainerClient = service.get_container_client(HOSTS_CONTAINER)
        self._poison: QueueClient = storage.queue_service(connection).get_queue_client(POISON_QUEUE)
        self._options = options
        self._interval = options.poll_interval.total_seconds()
        self._invoker = invoker
        self._receipt_root = f"blobreceipts/{host_id}/{function.name}"
        self._busy: set[tuple[str, str]] = set()
        self._slots = asyncio.Semaphore(options.max_degree_of_parallelism)
        self._wake = asyncio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        for container in (self._container, self._receipts):
            with contextlib.suppress(ResourceExistsError):
                await container.create_container()
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                try:
                    await self.scan(tasks)
                except Exception as exc:  # storage down: keep scanning, like the host
                    log.warning("scanning %s failed: %r", self.container_name, exc)
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self._interval)
        finally:
            for task in tasks:
                task.cancel()

    async def scan(self, tasks: set[asyncio.Task[None]]) -> None:
        async for props in self._container.list_blobs(name_starts_with=self._prefix or None):
            match = self._pattern.fullmatch(props.name)
            key = (props.name, props.etag)
            if not match or key in self._busy:
                continue
            self._busy.add(key)
            task = asyncio.create_task(self._handle(props.name, props.etag, match.groupdict()))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def _handle(self, name: str, etag: str, binding_data: dict[str, str]) -> None:
        try:
            async with self._slots:
                await self._try(name, etag, binding_data)
        except Exception:
            # Storage trouble in the host itself: the receipt stays incomplete, so the
            # next scan tries again.
            log.exception("devhost could not process blob %s/%s", self.container_name, name)
        finally:
            self._busy.discard((name, etag))

    async def _try(self, name: str, etag: str, binding_data: dict[str, str]) -> None:
        receipt = self._receipts.get_blob_client(
            f"{self._receipt_root}/{etag.strip(chr(34))}/{self.container_name}/{name}"
        )
        attempts = await self._begin(receipt)
        if attempts is None:
            return  # finished before (or by another scanner)
        if attempts > self._options.max_dequeue_count:
            await self._to_poison(name, etag)
            await self._complete(receipt)
            return
        try:
            stream = await read_input_stream(self._container, name, etag)
        except (ResourceNotFoundError, ResourceModifiedError):
            await self._complete(receipt)  # deleted or overwritten meanwhile: the new version runs
            return
        try:
            await self._invoker.call(self.function, stream, {**binding_data, "BlobTrigger": name})
        except Exception:
            log.exception(
                "function %s failed on blob %s/%s (attempt %d of %d)",
                self.function.name,
                self.container_name,
                name,
                attempts,
                self._options.max_dequeue_count,
            )
            if attempts >= self._options.max_dequeue_count:
                await self._to_poison(name, etag)
                await self._complete(receipt)
            else:
                self._wake.set()  # retry on the next scan, as the host's internal queue would
            return
        await self._complete(receipt)

    async def _begin(self, receipt) -> int | None:
        """Mark the receipt incomplete with one more attempt; None when it is complete."""
        try:
            props = await receipt.get_blob_properties()
        except ResourceNotFoundError:
            with contextlib.suppress(ResourceExistsError):
                await receipt.upload_blob(
                    b"", overwrite=False, metadata={"Incomplete": "true", "Attempts": "1"}
                )
                return 1
            return None  # another scanner created it just now
        meta = props.metadata or {}
        if meta.get("Incomplete") != "true":
            return None
        attempts = int(meta.get("Attempts", "0")) + 1
        try:
            await receipt.set_blob_metadata(
                {"Incomplete": "true", "Attempts": str(attempts)},
                etag=props.etag,
                match_condition=MatchConditions.IfNotModified,
            )
        except ResourceModifiedError:
            return None
        return attempts

    async def _complete(self, receipt) -> None:
        await receipt.set_blob_metadata({})

    async def _to_poison(self, name: str, etag: str) -> None:
        log.warning("blob %s/%s goes to %s", self.container_name, name, POISON_QUEUE)
        with contextlib.suppress(ResourceExistsError):
            await self._poison.create_queue()
        body = {
            "Type": "BlobTrigger",
            "FunctionId": self.function.name,
            "BlobType": "BlockBlob",
            "ContainerName": self.container_name,
            "BlobName": name,
            "ETag": etag,
        }
        await self._poison.send_message(base64.b64encode(json.dumps(body).encode()).decode())
