"""Production adapters, chosen by settings and made once per process."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from . import clients
from .classifier.protocol import Classifier
from .queues import CaptureQueues, StorageQueues
from .repository import CaptureRepository, CosmosCaptureRepository
from .settings import get_settings


@dataclass(frozen=True)
class Adapters:
    repo: CaptureRepository
    classifier: Classifier
    queues: CaptureQueues


@cache
def adapters() -> Adapters:
    return Adapters(
        repo=CosmosCaptureRepository(clients.cosmos_database()),
        classifier=build_classifier(),
        queues=StorageQueues(),
    )


def build_classifier() -> Classifier:
    s = get_settings()
    if s.azure_openai_endpoint or s.openai_base_url:
        from .classifier.openai_chat import OpenAIClassifier, build_openai_client

        key = s.azure_openai_api_key if s.azure_openai_endpoint else s.openai_api_key
        client = build_openai_client(
            azure_endpoint=s.azure_openai_endpoint,
            api_key=key.get_secret_value() if key else None,
            base_url=s.openai_base_url,
            api_version=s.azure_openai_api_version,
            timeout_s=s.model_timeout_s,
            max_retries=s.model_max_retries,
        )
        return OpenAIClassifier(client, s.chat_model)
    from .classifier.minilm import MiniLMClassifier

    return MiniLMClassifier()


async def reset() -> None:
    """Close the SDK clients and forget the adapters (shutdown, and between test setups)."""
    adapters.cache_clear()
    await clients.close_clients()
