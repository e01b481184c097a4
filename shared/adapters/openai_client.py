"""The model client built: Azure OpenAI or any OpenAI-compatible server, as the settings say.
The process holds one (clients.Clients.openai): the classifier and the transcriber share it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shared.settings import Settings

if TYPE_CHECKING:
    import openai
    from azure.core.credentials_async import AsyncTokenCredential

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"


def model_configured(settings: Settings) -> bool:
    """True when the settings name a model server; False means the offline models."""
    return bool(settings.azure_openai_endpoint or settings.openai_base_url)


def build_openai_client(
    *,
    azure_endpoint: str | None,
    api_key: str | None,
    base_url: str | None,
    api_version: str,
    timeout_s: float,
    max_retries: int,
    credential: AsyncTokenCredential | None = None,
) -> openai.AsyncOpenAI:
    """Build the async client: Azure OpenAI when `azure_endpoint` is set (API key if given, else
    Entra ID with the process's managed identity), otherwise any OpenAI-compatible server at
    `base_url`. Without a key, Azure OpenAI is called with `credential`'s tokens (the process's
    one, shared/adapters/clients.py).

    `max_retries` and `timeout_s` are the client's own: it backs off on 408/409/429/5xx and
    connection errors, honouring retry-after(-ms).

    Over aiohttp (the SDK's `DefaultAioHttpClient`), the HTTP client the Azure SDKs already
    use: two thirds of the CPU of its default pool per call, and under half with dozens of
    calls in flight (issue 32: the worker's CPU a capture 16.0 → 13.3 ms, BENCHMARKS).
    """
    import openai  # here, not at the top: importing the app must not load the SDK

    http: dict[str, Any] = {"http_client": openai.DefaultAioHttpClient()}

    if azure_endpoint:
        auth: dict[str, Any] = {"api_key": api_key} if api_key else {}
        if not api_key:
            if credential is None:
                raise ValueError("build_openai_client needs api_key or credential for Azure")
            # Imported here: azure.identity is heavy and only the keyless path needs it.
            from azure.identity.aio import get_bearer_token_provider

            auth["azure_ad_token_provider"] = get_bearer_token_provider(credential, AZURE_SCOPE)
        return openai.AsyncAzureOpenAI(
            azure_endpoint=azure_endpoint,
            api_version=api_version,
            timeout=timeout_s,
            max_retries=max_retries,
            **auth,
            **http,
        )
    if base_url:
        return openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=max_retries,
            **http,
        )
    raise ValueError("build_openai_client needs azure_endpoint or base_url")
