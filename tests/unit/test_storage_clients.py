"""The storage clients leave the environment's proxy settings alone unless it has some: with
them on, aiohttp reads ~/.netrc in a thread on every call (issue 32's profile)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.adapters.clients import Clients
from shared.settings import get_settings

AZURITE = (
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
    "QueueEndpoint=http://127.0.0.1:1/devstoreaccount1;BlobEndpoint=http://127.0.0.1:1/devstoreaccount1"
)


@pytest.fixture
def storage(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("AzureWebJobsStorage", AZURITE)
    monkeypatch.setenv("COSMOS_ENDPOINT", "https://127.0.0.1:1/")
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


def _trusts_env(client: object) -> bool:
    return client._client._client._pipeline._transport._use_env_settings  # type: ignore[attr-defined]  # the SDK's private transport


def test_no_proxy_in_the_environment_means_no_lookup_per_call(storage: pytest.MonkeyPatch) -> None:
    assert _trusts_env(Clients(get_settings())._make_queue_client("captures-classify")) is False


def test_a_proxy_in_the_environment_is_still_used(storage: pytest.MonkeyPatch) -> None:
    storage.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    assert _trusts_env(Clients(get_settings())._make_queue_client("captures-classify")) is True


def test_the_cosmos_client_skips_the_lookup_too(storage: pytest.MonkeyPatch) -> None:
    client = Clients(get_settings()).cosmos
    transport = client.client_connection.pipeline_client._pipeline._transport
    assert transport._use_env_settings is False
