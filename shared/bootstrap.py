"""The composition root: the production adapters, built from the settings once per process and
handed to the entrypoints, which pass them to the services. Only entrypoints (and the local
tools) import it; no adapter and no service reads a setting itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, cached_property
from typing import TYPE_CHECKING

from shared.adapters import warm_up
from shared.adapters.ask_threads import CosmosAskThreads
from shared.adapters.clients import Clients
from shared.adapters.digest_store import CosmosDigestLog, CosmosPreferences
from shared.adapters.filed_items import CosmosFiledItems
from shared.adapters.health import HealthReport, check_health
from shared.adapters.openai_client import model_configured
from shared.adapters.push_subscriptions import CosmosPushSubscriptions
from shared.adapters.queues import StorageQueues
from shared.adapters.repository import CosmosCaptureRepository
from shared.adapters.review_summary import OpenAIReviewSummarizer
from shared.adapters.search import CosmosCaptureSearch, LocalHybridSearch
from shared.adapters.voice_blobs import BlobVoiceNotes
from shared.adapters.warm_up import ModelCheck
from shared.adapters.web_push import WebPushSender
from shared.domain.ports import (
    Adapters,
    AskModel,
    BackfillQueue,
    CaptureSearch,
    Classifier,
    DigestAdapters,
    Embedder,
    PushAdapters,
    Transcriber,
)
from shared.services.outbox import QueueOutbox
from shared.services.recall import rank_by_words
from shared.settings import Settings, get_settings

if TYPE_CHECKING:
    from openai.types import CompletionUsage

    from shared.adapters.classifier.openai_chat import OpenAIClassifier


class Root:
    """The process's adapters, each bundle built from `settings` on its first use (a push
    route builds no classifier) over the process's SDK clients, and kept until `close`. Add a
    component as one more property (or one more field of a bundle) built here."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.clients = Clients(settings)

    @cached_property
    def adapters(self) -> Adapters:
        s, clients = self.settings, self.clients
        policy = s.policy()
        database, timeout_s = clients.cosmos_database(), s.storage_timeout_s
        repo = CosmosCaptureRepository(database, timeout_s=timeout_s)
        queues = StorageQueues(
            clients.queue, outcome_delay_s=policy.push_delay_s, timeout_s=timeout_s
        )
        return Adapters(
            repo=repo,
            classifier=self.build_classifier(),
            queues=queues,
            # The blob SDK loads when a voice note first needs it.
            voice=BlobVoiceNotes(lambda: clients.blob_service, timeout_s=timeout_s),
            transcriber=self.build_transcriber(),
            filed=CosmosFiledItems(database, timeout_s=timeout_s),
            search=self.build_search(),
            policy=policy,
            # One per process: it holds the outcomes this process's live runs have not delivered.
            outbox=QueueOutbox(queues, repo),
            embedder=self.build_embedder(),
        )

    def build_search(self) -> CaptureSearch:
        """SEARCH_ENGINE: Cosmos DB's own hybrid search ("cosmos", infra/'s containers), or the
        stand-in the local server can run ("local", the default)."""
        s = self.settings
        database, timeout_s = self.clients.cosmos_database(), s.storage_timeout_s
        if s.search_engine == "cosmos":
            return CosmosCaptureSearch(database, full_text=s.cosmos_full_text, timeout_s=timeout_s)
        return LocalHybridSearch(database, rank_words=rank_by_words, timeout_s=timeout_s)

    def build_embedder(self) -> Embedder:
        """Azure OpenAI's embeddings deployment where a model server is configured, else MiniLM
        (the offline classifier's own loaded model, loaded on first use)."""
        s = self.settings
        if model_configured(s):
            from shared.adapters.embedder.openai_embeddings import OpenAIEmbedder

            return OpenAIEmbedder(
                self.clients.openai,
                s.embedding_model,
                s.embedding_dimensions,
                s.embedding_min_similarity,
            )
        with _offline_model():
            from shared.adapters.embedder.minilm import MiniLMEmbedder

        return MiniLMEmbedder()

    @cached_property
    def backfill_queue(self) -> BackfillQueue:
        """The embeddings backfill's queue (its worker sends each next page)."""
        return StorageQueues(self.clients.queue, timeout_s=self.settings.storage_timeout_s)

    @cached_property
    def push(self) -> PushAdapters:
        """Web Push, for the push routes, the push worker and the digest."""
        s = self.settings
        return PushAdapters(
            subscriptions=CosmosPushSubscriptions(
                self.clients.cosmos_database(), timeout_s=s.storage_timeout_s
            ),
            sender=self._web_push_sender,
            push_services=s.push_services,
        )

    @cached_property
    def digest(self) -> DigestAdapters:
        """The digest's stores, its queue and the review's model (none: the rules' summary)."""
        s = self.settings
        database, timeout_s = self.clients.cosmos_database(), s.storage_timeout_s
        return DigestAdapters(
            preferences=CosmosPreferences(database, timeout_s=timeout_s),
            digests=CosmosDigestLog(database, timeout_s=timeout_s),
            queue=StorageQueues(self.clients.queue, timeout_s=timeout_s),
            summarizer=(
                OpenAIReviewSummarizer(self.clients.openai, s.chat_model)
                if model_configured(s)
                else None
            ),
        )

    @cached_property
    def ask_model(self) -> AskModel | None:
        """The ask agent's model: the configured model server's, or None (offline answers)."""
        if not model_configured(self.settings):
            return None
        from shared.adapters.ask_model import OpenAIAskModel

        return OpenAIAskModel(self.clients.openai, self.settings.chat_model)

    @cached_property
    def ask_threads(self) -> CosmosAskThreads:
        """The plain-JSON ask door's threads."""
        return CosmosAskThreads(
            self.clients.cosmos_database(), timeout_s=self.settings.storage_timeout_s
        )

    @cached_property
    def _web_push_sender(self) -> WebPushSender:
        s = self.settings
        private = s.vapid_private_key.get_secret_value() if s.vapid_private_key else None
        return WebPushSender(s.vapid_public_key, private, s.vapid_subject, s.push_services)

    def build_classifier(self) -> Classifier:
        if model_configured(self.settings):
            return self.openai_classifier()
        with _offline_model():
            from shared.adapters.classifier.offline import OfflineClassifier

        return OfflineClassifier(encoder=self.settings.offline_classifier_encoder)

    def openai_classifier(
        self, on_usage: Callable[[CompletionUsage], None] | None = None
    ) -> OpenAIClassifier:
        """The configured model server's classifier; `on_usage` hears each call's token counts
        (the benchmark's cost figures)."""
        from shared.adapters.classifier.openai_chat import OpenAIClassifier

        s = self.settings
        return OpenAIClassifier(
            self.clients.openai,
            s.chat_model,
            max_completion_tokens=s.model_max_completion_tokens,
            on_usage=on_usage,
        )

    def build_transcriber(self) -> Transcriber:
        if model_configured(self.settings):
            from shared.adapters.transcriber.openai_audio import OpenAITranscriber

            return OpenAITranscriber(self.clients.openai, self.settings.transcribe_model)
        with _offline_model():
            from shared.adapters.transcriber.whisper_local import LocalWhisperTranscriber

        return LocalWhisperTranscriber()

    async def health(self) -> HealthReport:
        """The dependencies checked now, with the offline models' warm-up (which this starts)."""
        models = self._warm_models()
        return await check_health(self.clients, self.settings.health_timeout_s, models)

    def _warm_models(self) -> dict[str, ModelCheck]:
        """Start warming the offline models (once per process) and say how far they have got.
        With a model server there is nothing to load, so nothing is built or imported for it:
        a health probe stays as cheap as it was."""
        if model_configured(self.settings):
            return {}
        try:
            built = self.adapters
        except RuntimeError as exc:  # no model server and no offline models: a missing setting
            return {"models": ModelCheck(status="down", seconds=0, error=type(exc).__name__)}
        warm_up.start(
            {
                "classifier": built.classifier,
                "transcriber": built.transcriber,
                "embedder": built.embedder,
            }
        )
        return warm_up.checks()

    async def close(self) -> None:
        """Close the SDK clients (their connection pools) and the push sender."""
        if "_web_push_sender" in vars(self):
            await self._web_push_sender.close()
        await self.clients.close()


@cache
def root() -> Root:
    """The process's one root, from the settings, built on first use."""
    return Root(get_settings())


def adapters() -> Adapters:
    """The process's `Adapters` (for the local tools and the tests: entrypoints are handed the
    root)."""
    return root().adapters


async def reset() -> None:
    """Close the root's clients and forget it (shutdown, and between test setups): the next use
    builds a new one from the settings as they are then."""
    if root.cache_info().currsize:
        await root().close()
    root.cache_clear()


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
