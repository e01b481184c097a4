"""Transcribe a capture with one audio transcription call to Azure OpenAI or an OpenAI-compatible
server (whisper or gpt-4o-*-transcribe deployments), mapping failures onto the protocol's two."""

from __future__ import annotations

import asyncio
import logging

import openai

from shared.adapters.model_failures import unavailable_as
from shared.adapters.transcriber.decoding import audio_seconds
from shared.domain.errors import AudioUndecodable, TranscriberUnavailable
from shared.domain.transcript import Transcript, TranscriptSegment, segments_of

log = logging.getLogger(__name__)


class OpenAITranscriber:
    """A `Transcriber` over an injected (Azure) OpenAI async client: one call per recording.

    Retries and the request timeout belong to the client (`max_retries`, `timeout`), see
    `shared.adapters.openai_client`; this class only maps the final outcome.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        *,
        language: str = "en",
        segments: bool | None = None,
    ) -> None:
        self._client = client
        # On Azure this is the deployment name: the client moves it into the URL path.
        self._model = model
        self._language = language
        # Segments with times: whisper gives them; gpt-4o-*-transcribe refuses verbose_json.
        self._segments = "gpt-4o" not in model if segments is None else segments

    async def transcribe(self, audio: bytes, filename: str, *, max_seconds: float) -> Transcript:
        if not audio:
            raise AudioUndecodable(f"{filename}: empty audio")
        # Measured here by decoding, as the local transcriber does, because the service would
        # take a file of any length: a WebM's headers say none, and the model is paid by the
        # minute. Undecodable audio is refused here too, without a call.
        await asyncio.to_thread(audio_seconds, audio, filename, max_seconds)
        # The service picks the decoder from the filename's extension, so it must be real.
        # whisper tells segments with their times in "verbose_json"; gpt-4o-*-transcribe
        # takes only "json" (text alone, no times), so the deployment decides.
        with unavailable_as(TranscriberUnavailable, "transcriber"):
            try:
                result: object
                if self._segments:
                    result = await self._client.audio.transcriptions.create(
                        model=self._model,
                        file=(filename, audio),
                        language=self._language,
                        response_format="verbose_json",
                        timestamp_granularities=["segment"],
                    )
                else:
                    result = await self._client.audio.transcriptions.create(
                        model=self._model,
                        file=(filename, audio),
                        language=self._language,
                        response_format="json",
                    )
            except openai.APIStatusError as err:
                # The service refused this file (format, corrupt, too short: 400; too large:
                # 413): retrying later would fail the same way. Only status and code are kept;
                # the message may quote the input.
                if err.status_code not in (400, 413):
                    raise
                log.warning("transcriber: audio refused (status %d)", err.status_code)
                raise AudioUndecodable(f"{filename}: audio refused by the service") from err

        # The client does not validate bodies, so a proxy page or `{}` still "succeeds" here.
        text = getattr(result, "text", None)
        if not isinstance(text, str):
            log.warning("transcriber: response had no text (%s)", type(result).__name__)
            raise TranscriberUnavailable("transcription response had no text")
        return Transcript(text=text.strip(), language=self._language, segments=_segments(result))


def _segments(result: object) -> list[TranscriptSegment]:
    """verbose_json's segments; none when the answer has none, or ones that do not read as
    segments (a service answering another shape loses its times, not its words)."""
    pieces = getattr(result, "segments", None) or []
    try:
        return segments_of([(float(p.start), float(p.end), str(p.text)) for p in pieces])
    except (AttributeError, TypeError, ValueError):
        log.warning("transcriber: segments unreadable; kept the text alone")
        return []
