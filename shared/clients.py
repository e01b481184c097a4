"""SDK clients, created lazily on first use and reused across invocations.

Importing this module imports no SDK: cold start pays only for what a function uses.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from .settings import get_settings

if TYPE_CHECKING:
    from azure.cosmos.aio import CosmosClient, DatabaseProxy
    from azure.storage.blob.aio import BlobServiceClient
    from azure.storage.queue.aio import QueueClient


@cache
def _credential():
    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential()


@cache
def cosmos_client() -> CosmosClient:
    from azure.cosmos.aio import CosmosClient

    s = get_settings()
    credential = s.cosmos_key.get_secret_value() if s.cosmos_key else _credential()
    return CosmosClient(s.cosmos_endpoint, credential=credential)


def cosmos_database() -> DatabaseProxy:
    return cosmos_client().get_database_client(get_settings().cosmos_database)


# Storage calls run inside requests a client is waiting on. The SDK's default retry (15 s
# backoff, growing, three times: over a minute) outlasts them; fail within seconds instead
# and let the caller's own retry (the client's, or the queue's redelivery) take over. (The
# clients build their ExponentialRetry from these.)
_STORAGE_RETRY: dict[str, Any] = {
    "initial_backoff": 0.5,
    "increment_base": 2,
    "retry_total": 2,
    "random_jitter_range": 0.5,
}


@cache
def blob_service() -> BlobServiceClient:
    from azure.storage.blob.aio import BlobServiceClient

    s = get_settings()
    if s.storage_connection_string:
        return BlobServiceClient.from_connection_string(
            s.storage_connection_string.get_secret_value(), **_STORAGE_RETRY
        )
    if not s.storage_blob_uri:
        raise RuntimeError("set AzureWebJobsStorage or AzureWebJobsStorage__blobServiceUri")
    return BlobServiceClient(s.storage_blob_uri, credential=_credential(), **_STORAGE_RETRY)


_queues: dict[str, QueueClient] = {}


def queue_client(queue_name: str) -> QueueClient:
    """One client per queue: the service client does not pass encode policies down."""
    if queue_name not in _queues:
        _queues[queue_name] = _make_queue_client(queue_name)
    return _queues[queue_name]


def _make_queue_client(queue_name: str) -> QueueClient:
    from azure.storage.queue import (
        BinaryBase64DecodePolicy,
        BinaryBase64EncodePolicy,
    )
    from azure.storage.queue.aio import QueueClient

    # The Functions queue trigger expects base64 by default; the SDK sends plain text.
    policies = {
        "message_encode_policy": BinaryBase64EncodePolicy(),
        "message_decode_policy": BinaryBase64DecodePolicy(),
        **_STORAGE_RETRY,
    }
    s = get_settings()
    if s.storage_connection_string:
        return QueueClient.from_connection_string(
            s.storage_connection_string.get_secret_value(), queue_name, **policies
        )
    if not s.storage_queue_uri:
        raise RuntimeError("set AzureWebJobsStorage or AzureWebJobsStorage__queueServiceUri")
    return QueueClient(s.storage_queue_uri, queue_name, credential=_credential(), **policies)


async def close_clients() -> None:
    """Close what was opened (tests and the devhost's shutdown); the next use reopens."""
    if cosmos_client.cache_info().currsize:
        await cosmos_client().close()
    if blob_service.cache_info().currsize:
        await blob_service().close()
    for queue in _queues.values():
        await queue.close()
    _queues.clear()
    cosmos_client.cache_clear()
    blob_service.cache_clear()
