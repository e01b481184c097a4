"""The composition root: the production adapters, chosen by the settings and built once per
process. Only entrypoints (and the local tools) import it; services get `Adapters` passed in,
the outbox (what follows a write) among them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

from shared.adapters import clients, warm_up
from shared.adapters.digest_store import CosmosDigestLog, CosmosPreferences
from shared.adapters.filed_items import CosmosFiledItems
from shared.adapters.openai_client import model_configured, openai_client
from shared.adapters.push_subscriptions import CosmosPushSubscriptions
from shared.adapters.queues import StorageQueues
from shared.adapters.repository import CosmosCaptureRepository
from shared.adapters.review_summary import OpenAIReviewSummarizer
from shared.adapters.search import CosmosCaptureSearch
from shared.adapters.voice_blobs import BlobVoiceNotes
from shared.adapters.warm_up import ModelCheck
from shared.adapters.web_push import WebPushSender
from shared.domain.ports import Adapters, Classifier, DigestAdapters, PushAdapters, Transcriber
from shared.services.outbox import QueueOutbox
from shared.settings import get_settings

if TYPE_CHECKING:
    from openai.types import CompletionUsage

    from shared.adapters.classifier.openai_chat import OpenAIClassifier


@cache
def adapters() -> Adapters:
    policy = get_settings().policy()
    repo = CosmosCaptureRepository(clients.cosmos_database())
    queues = StorageQueues(outcome_delay_s=policy.push_delay_s)
    return Adapters(
        repo=repo,
        classifier=build_classifier(),
        queues=queues,
        voice=BlobVoiceNotes(clients.blob_service),
        transcriber=build_transcriber(),
        filed=CosmosFiledItems(clients.cosmos_database()),
        search=CosmosCaptureSearch(
            clients.cosmos_database(), full_text=get_settings().cosmos_full_text
        ),
        policy=policy,
        # One per process: it holds the outcomes this process's live runs have not delivered.
        outbox=QueueOutbox(queues, repo),
    )


@cache
def push_adapters() -> PushAdapters:
    """Web Push, for the push routes and the push worker only (Adapters stays as it is)."""
    return PushAdapters(
        subscriptions=CosmosPushSubscriptions(clients.cosmos_database()),
        sender=web_push_sender(),
        push_services=get_settings().push_services,
    )


@cache
def digest_adapters() -> DigestAdapters:
    """The digest's stores, its queue and the review's model (none: the rules' summary)."""
    return DigestAdapters(
        preferences=CosmosPreferences(clients.cosmos_database()),
        digests=CosmosDigestLog(clients.cosmos_database()),
        queue=StorageQueues(),
        summarizer=(
            OpenAIReviewSummarizer(openai_client(), get_settings().chat_model)
            if model_configured()
            else None
        ),
    )


@cache
def web_push_sender() -> WebPushSender:
    s = get_settings()
    private = s.vapid_private_key.get_secret_value() if s.vapid_private_key else None
    return WebPushSender(s.vapid_public_key, private, s.vapid_subject, s.push_services)


def build_classifier() -> Classifier:
    if model_configured():
        return openai_classifier()
    with _offline_model():
        from shared.adapters.classifier.minilm import MiniLMClassifier

    return MiniLMClassifier()


def openai_classifier(
    on_usage: Callable[[CompletionUsage], None] | None = None,
) -> OpenAIClassifier:
    """The configured model server's classifier; `on_usage` hears each call's token counts
    (the benchmark's cost figures)."""
    from shared.adapters.classifier.openai_chat import OpenAIClassifier

    s = get_settings()
    return OpenAIClassifier(
        openai_client(),
        s.chat_model,
        max_completion_tokens=s.model_max_completion_tokens,
        on_usage=on_usage,
    )


def build_transcriber() -> Transcriber:
    if model_configured():
        from shared.adapters.transcriber.openai_audio import OpenAITranscriber

        return OpenAITranscriber(openai_client(), get_settings().transcribe_model)
    with _offline_model():
        from shared.adapters.transcriber.whisper_local import LocalWhisperTranscriber

    return LocalWhisperTranscriber()


def warm_models() -> dict[str, ModelCheck]:
    """Start warming the offline models (once per process) and say how far they have got.
    With a model server there is nothing to load, so nothing is built or imported for it:
    a health probe stays as cheap as it was."""
    if model_configured():
        return {}
    try:
        built = adapters()
    except RuntimeError as exc:  # no model server and no offline models: a missing setting
        return {"models": ModelCheck(status="down", seconds=0, error=type(exc).__name__)}
    warm_up.start({"classifier": built.classifier, "transcriber": built.transcriber})
    return warm_up.checks()


@contextmanager
def _offline_model() -> Iterator[None]:
    # The offline models are local only: .funcignore leaves them out of the package and
    # requirements.txt leaves out what they need. In Azure that means a missing setting.
    try:
        yield
    except ImportError as exc:
        raise RuntimeError(
            "no model server is configured: set AZURE_OPENAI_ENDPOINT (or OPENAI_BASE_URL); "
            "the offline models are for local use (requirements-local.txt)"
        ) from exc


async def reset() -> None:
    """Close the SDK clients and forget the adapters (shutdown, and between test setups)."""
    adapters.cache_clear()
    if openai_client.cache_info().currsize:
        await openai_client().close()  # its connection pool, like the SDK clients below
    openai_client.cache_clear()
    push_adapters.cache_clear()
    digest_adapters.cache_clear()
    if web_push_sender.cache_info().currsize:
        await web_push_sender().close()
    web_push_sender.cache_clear()
    await clients.close_clients()
