"""Storage clients for the devhost's triggers and output bindings, one pair per connection."""

from __future__ import annotations

import base64
import os
from typing import Any

from azure.storage.blob.aio import BlobServiceClient
from azure.storage.queue.aio import QueueServiceClient

# The host's storage clients retry about 3 times within seconds (the .NET SDK's defaults);
# the Python SDK's default waits over a minute, which would hide a recovery from the triggers.
# (The clients build their ExponentialRetry from these.)
_RETRY: dict[str, Any] = {
    "initial_backoff": 0.8,
    "increment_base": 2,
    "retry_total": 3,
    "random_jitter_range": 1,
}


def proxy_options() -> dict[str, Any]:
    """The environment's proxy settings only when it has any: with them on, aiohttp looks up
    the proxy and reads ~/.netrc in a thread on every call, and the listeners and the Event
    Grid publisher call several times a second (as shared/adapters/clients.py, issue 32)."""
    return {"use_env_settings": any(name.lower().endswith("_proxy") for name in os.environ)}


class StorageClients:
    """Lazily made clients, keyed by the app setting a binding's `connection` names."""

    def __init__(self) -> None:
        self._blobs: dict[str, BlobServiceClient] = {}
        self._queues: dict[str, QueueServiceClient] = {}

    def blob_service(self, connection: str) -> BlobServiceClient:
        if connection not in self._blobs:
            self._blobs[connection] = BlobServiceClient.from_connection_string(
                connection_string(connection), **_RETRY, **proxy_options()
            )
        return self._blobs[connection]

    def queue_service(self, connection: str) -> QueueServiceClient:
        # Raw text in and out: the host's encoding is applied by encode/decode_message.
        if connection not in self._queues:
            self._queues[connection] = QueueServiceClient.from_connection_string(
                connection_string(connection), **_RETRY, **proxy_options()
            )
        return self._queues[connection]

    async def close(self) -> None:
        clients: list[BlobServiceClient | QueueServiceClient] = [
            *self._blobs.values(),
            *self._queues.values(),
        ]
        for client in clients:
            await client.close()
        self._blobs.clear()
        self._queues.clear()


def connection_string(connection: str) -> str:
    value = os.environ.get(connection or "AzureWebJobsStorage")
    if not value:
        raise RuntimeError(f"app setting {connection!r} (a storage connection string) is not set")
    return value


def encode_message(body: bytes, encoding: str) -> str:
    if encoding == "base64":
        return base64.b64encode(body).decode("ascii")
    return body.decode("utf-8")


def decode_message(content: str, encoding: str) -> bytes:
    """Decode like the host; raises ValueError for a message that is not valid base64."""
    if encoding == "base64":
        return base64.b64decode(content.encode("ascii"), validate=True)
    return content.encode("utf-8")
