"""Production adapters, chosen by settings and made once per process."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from . import clients
from .classifier.protocol import Classifier
from .openai_client import model_configured, openai_client
from .queues import CaptureQueues, StorageQueues
from .repository import CaptureRepository, CosmosCaptureRepository
from .settings import get_settings
from .transcriber.protocol import Transcriber
from .voice_blobs import BlobVoiceNotes, VoiceNoteStore


@dataclass(frozen=True)
class Adapters:
    repo: CaptureRepository
    classifier: Classifier
    queues: CaptureQueues
    voice: VoiceNoteStore
    transcriber: Transcriber


@cache
def adapters() -> Adapters:
    return Adapters(
        repo=CosmosCaptureRepository(clients.cosmos_database()),
        classifier=build_classifier(),
        queues=StorageQueues(),
        voice=BlobVoiceNotes(clients.blob_service),
        transcriber=build_transcriber(),
    )


def build_classifier() -> Classifier:
    if model_configured():
        from .classifier.openai_chat import OpenAIClassifier

        return OpenAIClassifier(openai_client(), get_settings().chat_model)
    from .classifier.minilm import MiniLMClassifier

    return MiniLMClassifier()


def build_transcriber() -> Transcriber:
    if model_configured():
        from .transcriber.openai_audio import OpenAITranscriber

        return OpenAITranscriber(openai_client(), get_settings().transcribe_model)
    from .transcriber.whisper_local import LocalWhisperTranscriber

    return LocalWhisperTranscriber()


async def reset() -> None:
    """Close the SDK clients and forget the adapters (shutdown, and between test setups)."""
    adapters.cache_clear()
    openai_client.cache_clear()
    await clients.close_clients()
