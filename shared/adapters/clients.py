"""The process's SDK clients, opened from the settings on first use and reused across
invocations; the composition root (shared/bootstrap.py) holds them and hands them to the
adapters.

Importing this module imports no SDK: cold start pays only for what a function uses.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Any

from shared.settings import Settings

if TYPE_CHECKING:
    import openai
    from azure.core.credentials_async import AsyncTokenCredential
    from azure.cosmos.aio import CosmosClient, DatabaseProxy
    from azure.storage.blob.aio import BlobServiceClient
    from azure.storage.queue.aio import QueueClient


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


class Clients:
    """Each SDK client built on first use from `settings`, then kept until `close`."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._queues: dict[str, QueueClient] = {}

    @cached_property
    def credential(self) -> AsyncTokenCredential:
        """The process's one Entra ID credential: the managed identity in Azure (AZURE_CLIENT_ID
        picks a user-assigned one), the developer's login locally."""
        from azure.identity.aio import DefaultAzureCredential

        return DefaultAzureCredential(managed_identity_client_id=self._settings.azure_client_id)

    @cached_property
    def cosmos(self) -> CosmosClient:
        from azure.core.pipeline.transport import AioHttpTransport
        from azure.cosmos.aio import CosmosClient

        s = self._settings
        credential = s.cosmos_key.get_secret_value() if s.cosmos_key else self.credential
        # The SDK's own transport but for the proxy lookup (see _uses_proxy); its timeouts and
        # certificate checks are passed with each request, so nothing else changes.
        transport = AioHttpTransport(use_env_settings=_uses_proxy())
        return CosmosClient(s.cosmos_endpoint, credential=credential, transport=transport)

    def cosmos_database(self) -> DatabaseProxy:
        return self.cosmos.get_database_client(self._settings.cosmos_database)

    @cached_property
    def blob_service(self) -> BlobServiceClient:
        from azure.storage.blob.aio import BlobServiceClient

        s = self._settings
        if s.storage_connection_string:
            return BlobServiceClient.from_connection_string(
                s.storage_connection_string.get_secret_value(), **_storage_options()
            )
        if not s.blob_service_uri:
            raise RuntimeError(f"set AzureWebJobsStorage or {_IDENTITY_SETTINGS}")
        options = _storage_options()
        return BlobServiceClient(s.blob_service_uri, credential=self.credential, **options)

    def queue(self, queue_name: str) -> QueueClient:
        """One client per queue: the service client does not pass encode policies down."""
        if queue_name not in self._queues:
            self._queues[queue_name] = self._make_queue_client(queue_name)
        return self._queues[queue_name]

    def _make_queue_client(self, queue_name: str) -> QueueClient:
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
        s = self._settings
        if s.storage_connection_string:
            return QueueClient.from_connection_string(
                s.storage_connection_string.get_secret_value(), queue_name, **policies
            )
        if not s.queue_service_uri:
            raise RuntimeError(f"set AzureWebJobsStorage or {_IDENTITY_SETTINGS}")
        return QueueClient(s.queue_service_uri, queue_name, credential=self.credential, **policies)

    @cached_property
    def openai(self) -> openai.AsyncOpenAI:
        """The one model client (Azure OpenAI or any OpenAI-compatible server): the classifier,
        the transcriber and the review share its connection pool."""
        from shared.adapters.openai_client import build_openai_client

        s = self._settings
        key = s.azure_openai_api_key if s.azure_openai_endpoint else s.openai_api_key
        keyless_azure = bool(s.azure_openai_endpoint) and key is None
        return build_openai_client(
            azure_endpoint=s.azure_openai_endpoint,
            api_key=key.get_secret_value() if key else None,
            base_url=s.openai_base_url,
            api_version=s.azure_openai_api_version,
            timeout_s=s.model_timeout_s,
            max_retries=s.model_max_retries,
            credential=self.credential if keyless_azure else None,
        )

    async def close(self) -> None:
        """Close what was opened (shutdown, and between test setups)."""
        opened = vars(self)
        if "openai" in opened:
            await self.openai.close()  # its connection pool, like the SDK clients below
        if "cosmos" in opened:
            await self.cosmos.close()
        if "blob_service" in opened:
            await self.blob_service.close()
        for queue in self._queues.values():
            await queue.close()
        if "credential" in opened:
            await self.credential.close()
        self._queues.clear()
        for name in ("openai", "cosmos", "blob_service", "credential"):
            opened.pop(name, None)
