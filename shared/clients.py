"""SDK clients, created lazily on first use and reused across invocations.

Importing this module imports no SDK: cold start pays only for what a function uses.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from .settings import get_settings

if TYPE_CHECKING:
    from azure.cosmos.aio import CosmosClient, DatabaseProxy
    from azure.storage.blob.aio import BlobServiceClient
    from azure.storage.queue.aio import QueueServiceClient


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


@cache
def blob_service() -> BlobServiceClient:
    from azure.storage.blob.aio import BlobServiceClient

    s = get_settings()
    if s.storage_connection_string:
        return BlobServiceClient.from_connection_string(
            s.storage_connection_string.get_secret_value()
        )
    if not s.storage_blob_uri:
        raise RuntimeError("set AzureWebJobsStorage or AzureWebJobsStorage__blobServiceUri")
    return BlobServiceClient(s.storage_blob_uri, credential=_credential())


@cache
def queue_service() -> QueueServiceClient:
    from azure.storage.queue import BinaryBase64DecodePolicy, BinaryBase64EncodePolicy
    from azure.storage.queue.aio import QueueServiceClient

    # The Functions queue trigger expects base64 by default; the SDK sends plain text.
    policies = {
        "message_encode_policy": BinaryBase64EncodePolicy(),
        "message_decode_policy": BinaryBase64DecodePolicy(),
    }
    s = get_settings()
    if s.storage_connection_string:
        return QueueServiceClient.from_connection_string(
            s.storage_connection_string.get_secret_value(), **policies
        )
    if not s.storage_queue_uri:
        raise RuntimeError("set AzureWebJobsStorage or AzureWebJobsStorage__queueServiceUri")
    return QueueServiceClient(s.storage_queue_uri, credential=_credential(), **policies)


async def close_clients() -> None:
    """Close what was opened (tests and the devhost's shutdown); the next use reopens."""
    for factory in (cosmos_client, blob_service, queue_service):
        if factory.cache_info().currsize:
            await factory().close()
            factory.cache_clear()
