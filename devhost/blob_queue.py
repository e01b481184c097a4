"""The host's blob trigger queue, `azure-webjobs-blobtrigger-{hostId}`: where the blobs
webhook puts a message per Event Grid event, and whose listener runs the function on the blob.

As in the host's blob extension, a message names the function, the container, the blob and
the ETag the event told of; the listener reads the blob as it is now (an Event Grid-source
trigger does not compare ETags) and skips a blob that is gone or a function that is not
there. There are no receipts on this path: an event delivered twice runs the function twice,
as in Azure. A failed call is retried through the queue (visibilityTimeout, maxDequeueCount
of extensions.queues) and then copied to `webjobs-blobtrigger-poison`.
"""

from __future__ import annotations

import contextlib
import logging

from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.storage.queue import QueueMessage as SdkMessage
from azure.storage.queue.aio import QueueClient
from pydantic import BaseModel, ConfigDict, Field

from .blobs import POISON_QUEUE, compile_blob_path, is_event_grid_source, read_input_stream
from .config import QueueOptions
from .invoke import Invoker
from .loader import LoadedFunction
from .queues import QueueListener
from .storage import StorageClients, encode_message

log = logging.getLogger("devhost.blob_queue")

HOST_CONNECTION = "AzureWebJobsStorage"
# The id the host gives a function of a script app, which the webhook's functionName names.
FUNCTION_ID_PREFIX = "Host.Functions."


class BlobTriggerMessage(BaseModel):
    """The host's message on its blob trigger queue (and, unchanged, on the poison queue)."""

    model_config = ConfigDict(populate_by_name=True)

    type: str = Field(default="BlobTrigger", alias="Type")
    function_id: str = Field(alias="FunctionId")
    blob_type: str = Field(default="BlockBlob", alias="BlobType")
    container_name: str = Field(alias="ContainerName")
    blob_name: str = Field(alias="BlobName")
    etag: str = Field(alias="ETag")


def function_id(function: LoadedFunction) -> str:
    return FUNCTION_ID_PREFIX + function.name


class BlobTriggerQueue:
    """The Event Grid-source blob triggers of the app, run from the host's queue."""

    def __init__(
        self,
        functions: list[LoadedFunction],
        options: QueueOptions,
        storage: StorageClients,
        invoker: Invoker,
        host_id: str,
    ) -> None:
        self.functions = {function_id(f): f for f in functions if is_event_grid_source(f)}
        self._storage = storage
        self._invoker = invoker
        self._encoding = options.message_encoding
        self._queue: QueueClient | None = None
        self.listener: QueueListener | None = None  # none without such triggers, as in the host
        if self.functions:
            service = storage.queue_service(HOST_CONNECTION)
            self._queue = service.get_queue_client(f"azure-webjobs-blobtrigger-{host_id}")
            self.listener = QueueListener(
                self._queue,
                service.get_queue_client(POISON_QUEUE),
                options,
                self._run,
                "blob trigger queue",
            )

    async def enqueue(self, message: BlobTriggerMessage) -> None:
        assert self._queue is not None and self.listener is not None, "no such triggers"
        body = encode_message(message.model_dump_json(by_alias=True).encode(), self._encoding)
        try:
            await self._queue.send_message(body)
        except ResourceNotFoundError:  # the listener creates it, but may not have yet
            with contextlib.suppress(ResourceExistsError):
                await self._queue.create_queue()
            await self._queue.send_message(body)
        self.listener.wake()

    async def _run(self, _: SdkMessage, body: bytes) -> None:
        message = BlobTriggerMessage.model_validate_json(body)
        function = self.functions.get(message.function_id)
        if function is None:
            log.warning("blob trigger message for unknown function %s ignored", message.function_id)
            return
        container_name, _prefix, pattern = compile_blob_path(function.trigger.raw["path"])
        match = pattern.fullmatch(message.blob_name)
        if message.container_name != container_name or match is None:
            log.warning(
                "blob %s/%s does not match %s's path %s; ignored",
                message.container_name,
                message.blob_name,
                function.name,
                function.trigger.raw["path"],
            )
            return
        connection = function.trigger.raw.get("connection") or HOST_CONNECTION
        container = self._storage.blob_service(connection).get_container_client(container_name)
        try:
            stream = await read_input_stream(container, message.blob_name)
        except ResourceNotFoundError:
            log.info("blob %s/%s is gone; nothing to run", container_name, message.blob_name)
            return
        binding_data = {**match.groupdict(), "BlobTrigger": message.blob_name}
        await self._invoker.call(function, stream, binding_data)
