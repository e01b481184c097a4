"""The one OpenAI client of the process: Azure OpenAI or any OpenAI-compatible server, as the
settings say. The classifier and the transcriber share it (one connection pool)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from shared.settings import get_settings

if TYPE_CHECKING:
    import openai

AZURE_SCOPE = "https://cognitiveservices.azure.com/.default"


def model_configured() -> bool:
    """True when the settings name a model server; False means the offline models."""
    s = get_settings()
    return bool(s.azure_openai_endpoint or s.openai_base_url)


@cache
def openai_client() -> openai.AsyncOpenAI:
    s = get_settings()
    key = s.azure_openai_api_key if s.azure_openai_endpoint else s.openai_api_key
    return build_openai_client(
        azure_endpoint=s.azure_openai_endpoint,
        api_key=key.get_secret_value() if key else None,
        base_url=s.openai_base_url,
        api_version=s.azure_openai_api_version,
        timeout_s=s.model_timeout_s,
        max_retries=s.model_max_retries,
    )


def build_openai_client(
    *,
    azure_endpoint: str | None,
    api_key: str | None,
    base_url: str | None,
    api_version: str,
    timeout_s: float,
    max_retries: int,
) -> openai.AsyncOpenAI:
    """Build the async client: Azure OpenAI when `azure_endpoint` is set (API key if given, else
    Entra ID with the process's managed identity), otherwise any OpenAI-compatible server at
    `base_url`.

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
            # Imported here: azure.identity is heavy and only the keyless path needs it.
            from azure.identity.aio import get_bearer_token_provider

            from shared.adapters.clients import azure_credential

            auth["azure_ad_token_provider"] = get_bearer_token_provider(
                azure_credential(), AZURE_SCOPE
            )
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
