"""SDK clients, created lazily on first use and reused across invocations.

Importing this module imports no SDK: cold start pays only for what a function uses.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Any

from shared.settings import get_settings

if TYPE_CHECKING:
    from azure.core.credentials_async import AsyncTokenCredential
    from azure.cosmos.aio import CosmosClient, DatabaseProxy
    from azure.storage.blob.aio import BlobServiceClient
    from azure.storage.queue.aio import QueueClient


@cache
def azure_credential() -> AsyncTokenCredential:
    """The process's one Entra ID credential: the managed identity in Azure (AZURE_CLIENT_ID
    picks a user-assigned one), the developer's login locally."""
    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential(managed_identity_client_id=get_settings().azure_client_id)


@cache
def cosmos_client() -> CosmosClient:
    from azure.core.pipeline.transport import AioHttpTransport
    from azure.cosmos.aio import CosmosClient

    s = get_settings()
    credential = s.cosmos_key.get_secret_value() if s.cosmos_key else azure_credential()
    # The SDK's own transport but for the proxy lookup (see _uses_proxy); its timeouts and
    # certificate checks are passed with each request, so nothing else changes.
    transport = AioHttpTransport(use_env_settings=_uses_proxy())
    return CosmosClient(s.cosmos_endpoint, credential=credential, transport=transport)


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
    # A socket that stops answering fails the try (calls are also bounded as a whole, see
    # storage_errors.bounded; a long upload is not, so these bound each of its reads).
    "connection_timeout": 5,
    "read_timeout": 20,
}


def _uses_proxy() -> bool:
    """Whether the environment names a proxy. Only then are the SDKs' sessions told to read
    the environment: with that on, aiohttp looks up the proxy and reads ~/.netrc in a thread
    on every call (a sixth of a capture's CPU in the devhost's profile, issue 32), to find
    nothing in Azure."""
    return any(name.lower().endswith("_proxy") for name in os.environ)


def _storage_options() -> dict[str, Any]:
    """The retry above, and the environment's proxy settings only when it has any."""
    return {**_STORAGE_RETRY, "use_env_settings": _uses_proxy()}


_IDENTITY_SETTINGS = "AzureWebJobsStorage__blobServiceUri and __queueServiceUri (or __accountName)"


@cache
def blob_service() -> BlobServiceClient:
    from azure.storage.blob.aio import BlobServiceClient

    s = get_settings()
    if s.storage_connection_string:
        return BlobServiceClient.from_connection_string(
            s.storage_connection_string.get_secret_value(), **_storage_options()
        )
    if not s.blob_service_uri:
        raise RuntimeError(f"set AzureWebJobsStorage or {_IDENTITY_SETTINGS}")
    options = _storage_options()
    return BlobServiceClient(s.blob_service_uri, credential=azure_credential(), **options)


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
        **_storage_options(),
    }
    s = get_settings()
    if s.storage_connection_string:
        return QueueClient.from_connection_string(
            s.storage_connection_string.get_secret_value(), queue_name, **policies
        )
    if not s.queue_service_uri:
        raise RuntimeError(f"set AzureWebJobsStorage or {_IDENTITY_SETTINGS}")
    return QueueClient(s.queue_service_uri, queue_name, credential=azure_credential(), **policies)


async def close_clients() -> None:
    """Close what was opened (tests and the devhost's shutdown); the next use reopens."""
    if cosmos_client.cache_info().currsize:
        await cosmos_client().close()
    if blob_service.cache_info().currsize:
        await blob_service().close()
    for queue in _queues.values():
        await queue.close()
    if azure_credential.cache_info().currsize:
        await azure_credential().close()
    _queues.clear()
    cosmos_client.cache_clear()
    blob_service.cache_clear()
    azure_credential.cache_clear()
