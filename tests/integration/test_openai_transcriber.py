"""OpenAITranscriber against the fake OpenAI server over real HTTP: request shape on the OpenAI
and Azure routes, client retries, and how each failure maps onto the protocol's two errors."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import openai
import pytest

from shared.adapters.transcriber.openai_audio import OpenAITranscriber
from shared.domain.errors import AudioUndecodable, TranscriberUnavailable
from shared.domain.transcript import Transcript, TranscriptSegment
from testkit.fake_openai import (
    TRANSCRIBE,
    FakeOpenAI,
    Step,
    delay,
    http_error,
    raw,
    raw_text,
    transcription,
)

API_VERSION = "2024-10-21"
API_KEY = "sk-transcribe-secret-4417"
AUDIO = (Path(__file__).parents[1] / "data" / "audio" / "call_sarah.m4a").read_bytes()
SPOKEN = "Call Sarah tomorrow about the budget review."


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(api_key=API_KEY) as server:
        yield server


@asynccontextmanager
async def openai_transcriber(
    fake: FakeOpenAI, *, max_retries: int = 0, timeout_s: float = 5.0
) -> AsyncIterator[OpenAITranscriber]:
    client = fake.openai_client(api_key=API_KEY, max_retries=max_retries, timeout_s=timeout_s)
    try:
        yield OpenAITranscriber(client, "whisper-1")
    finally:
        await client.close()


def assert_no_secret(fake: FakeOpenAI) -> None:
    assert fake.requests
    for request in fake.requests:
        assert API_KEY not in repr(request)


async def test_transcript_is_stripped_and_request_carries_the_audio(fake: FakeOpenAI) -> None:
    fake.enqueue(transcription(f"  {SPOKEN}\n"), kind=TRANSCRIBE)
    async with openai_transcriber(fake) as transcriber:
        result = await transcriber.transcribe(AUDIO, "call_sarah.m4a", max_seconds=600)

    # whisper tells its segments: by default the scripted server's one, of the whole text.
    assert result == Transcript(
        text=SPOKEN,
        language="en",
        duration_s=None,
        segments=[TranscriptSegment(start=0.0, end=2.0, text=SPOKEN)],
    )
    [request] = fake.requests
    assert request.kind == TRANSCRIBE
    assert request.path == "/v1/audio/transcriptions"
    assert request.model == "whisper-1"
    assert request.form["language"] == "en"
    assert request.form["response_format"] == "verbose_json"
    assert request.form["timestamp_granularities[]"] == "segment"
    assert request.file is not None
    assert request.file.filename == "call_sarah.m4a"
    assert request.file.size == len(AUDIO)
    # httpx guesses the part's type from the extension; the service goes by the name too.
    assert request.file.content_type == "audio/mp4"
    assert request.auth == "bearer"
    assert_no_secret(fake)
    assert fake.pending(kind=TRANSCRIBE) == 0


async def test_azure_route_puts_the_deployment_in_the_path() -> None:
    async with FakeOpenAI(api_key=API_KEY) as fake:
        fake.enqueue(transcription(SPOKEN), kind=TRANSCRIBE)
        client = fake.openai_client(api_key=API_KEY, azure=True)
        assert isinstance(client, openai.AsyncAzureOpenAI)
        try:
            result = await OpenAITranscriber(client, "transcribe-deploy", language="de").transcribe(
                AUDIO, "call_sarah.m4a", max_seconds=600
            )
        finally:
            await client.close()

    assert result.text == SPOKEN and result.language == "de"
    [request] = fake.requests
    assert request.path == "/openai/deployments/transcribe-deploy/audio/transcriptions"
    assert request.params == {"deployment": "transcribe-deploy"}
    assert request.model == "transcribe-deploy"  # still sent as a form field too
    assert request.query["api-version"] == API_VERSION
    assert request.form["language"] == "de"
    assert request.file is not None and request.file.size == len(AUDIO)
    assert request.auth == "api-key"
    assert_no_secret(fake)


async def test_azure_whisper_segments_come_with_their_times() -> None:
    """Azure OpenAI's whisper deployment, asked for verbose_json with segment timestamps: each
    segment's start, end (seconds) and words, the blank ones left out."""
    said = [
        (0.0, 1.48, " Call Sarah tomorrow"),
        (1.48, 1.5, "  "),
        (1.5, 3.02, " about the budget."),
    ]
    async with FakeOpenAI(api_key=API_KEY) as fake:
        fake.enqueue(transcription(SPOKEN, segments=said), kind=TRANSCRIBE)
        client = fake.openai_client(api_key=API_KEY, azure=True)
        try:
            result = await OpenAITranscriber(client, "whisper").transcribe(
                AUDIO, "call_sarah.m4a", max_seconds=600
            )
        finally:
            await client.close()
    assert [(s.start, s.end, s.text) for s in result.segments] == [
        (0.0, 1.48, "Call Sarah tomorrow"),
        (1.5, 3.02, "about the budget."),
    ]
    [request] = fake.requests
    assert request.path == "/openai/deployments/whisper/audio/transcriptions"
    assert request.form["response_format"] == "verbose_json"
    assert request.form["timestamp_granularities[]"] == "segment"


async def test_a_gpt_4o_transcribe_deployment_is_asked_for_json_and_tells_no_times(
    fake: FakeOpenAI,
) -> None:
    # gpt-4o-*-transcribe refuses verbose_json: the text alone, no segments.
    fake.enqueue(transcription(SPOKEN), kind=TRANSCRIBE)
    client = fake.openai_client(api_key=API_KEY)
    try:
        result = await OpenAITranscriber(client, "gpt-4o-mini-transcribe").transcribe(
            AUDIO, "call_sarah.m4a", max_seconds=600
        )
    finally:
        await client.close()
    assert result.text == SPOKEN and result.segments == []
    assert fake.requests[0].form["response_format"] == "json"


async def test_empty_transcript_is_a_valid_result(fake: FakeOpenAI) -> None:
    # No script: the fake's default transcription reply is {"text": ""}.
    async with openai_transcriber(fake) as transcriber:
        result = await transcriber.transcribe(AUDIO, "call_sarah.m4a", max_seconds=600)
    assert result.text == ""
    assert len(fake.requests) == 1


async def test_rate_limit_then_success_is_retried_by_the_client(fake: FakeOpenAI) -> None:
    fake.enqueue(http_error(429, retry_after_s=0.01), transcription(SPOKEN), kind=TRANSCRIBE)
    async with openai_transcriber(fake, max_retries=1) as transcriber:
        result = await transcriber.transcribe(AUDIO, "call_sarah.m4a", max_seconds=600)

    assert result.text == SPOKEN
    assert len(fake.requests) == 2
    assert fake.requests[1].headers.get("x-stainless-retry-count") == "1"
    # The retry re-sends the whole file, not an empty stream.
    assert all(r.file is not None and r.file.size == len(AUDIO) for r in fake.requests)


async def test_empty_audio_is_undecodable_without_a_call(fake: FakeOpenAI) -> None:
    async with openai_transcriber(fake) as transcriber:
        with pytest.raises(AudioUndecodable):
            await transcriber.transcribe(b"", "call_sarah.m4a", max_seconds=600)
    assert fake.requests == []


@pytest.mark.parametrize(
    "step",
    [
        pytest.param(http_error(400, code="invalid_value"), id="400-bad-file"),
        pytest.param(http_error(413, message="Maximum content size limit exceeded"), id="413"),
    ],
)
async def test_rejected_audio_is_undecodable_without_retry(
    fake: FakeOpenAI, step: Step, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.enqueue(step, kind=TRANSCRIBE)
    async with openai_transcriber(fake, max_retries=2) as transcriber:
        with pytest.raises(AudioUndecodable):
            await transcriber.transcribe(AUDIO, "call_sarah.m4a", max_seconds=600)
    assert len(fake.requests) == 1
    assert any(
        r.name.startswith("shared.adapters.transcriber") and r.levelno == logging.WARNING
        for r in caplog.records
    )
    assert API_KEY not in caplog.text


@pytest.mark.parametrize(
    ("step", "cause"),
    [
        pytest.param(http_error(500), openai.InternalServerError, id="500"),
        pytest.param(http_error(429), openai.RateLimitError, id="429"),
        pytest.param(http_error(401, message="invalid key"), openai.AuthenticationError, id="401"),
        pytest.param(http_error(404, code="DeploymentNotFound"), openai.NotFoundError, id="404"),
        pytest.param(raw({"nope": 1}), None, id="no-text-field"),
        pytest.param(raw({"text": 5}), None, id="text-not-a-string"),
        pytest.param(raw("just a string"), None, id="json-string"),
        pytest.param(raw_text("<html>Bad gateway</html>"), None, id="html-page"),
    ],
)
async def test_service_failures_are_unavailable(
    fake: FakeOpenAI, step: Step, cause: type[Exception] | None
) -> None:
    fake.enqueue(step, kind=TRANSCRIBE)
    async with openai_transcriber(fake, max_retries=0) as transcriber:
        with pytest.raises(TranscriberUnavailable) as info:
            await transcriber.transcribe(AUDIO, "call_sarah.m4a", max_seconds=600)
    if cause is not None:
        assert isinstance(info.value.__cause__, cause)
    assert len(fake.requests) == 1


async def test_wrong_key_is_unavailable(fake: FakeOpenAI) -> None:
    client = fake.openai_client(api_key="sk-wrong", max_retries=2)
    try:
        with pytest.raises(TranscriberUnavailable) as info:
            await OpenAITranscriber(client, "whisper-1").transcribe(
                AUDIO, "call_sarah.m4a", max_seconds=600
            )
    finally:
        await client.close()
    assert isinstance(info.value.__cause__, openai.AuthenticationError)
    assert len(fake.requests) == 1  # 401 is not retried
    assert_no_secret(fake)


async def test_timeout_is_unavailable(fake: FakeOpenAI) -> None:
    # The delayed reply is a good transcript: only the client's own timeout can fail this.
    fake.enqueue(delay(2.0, transcription(SPOKEN)), kind=TRANSCRIBE)
    async with openai_transcriber(fake, max_retries=0, timeout_s=0.2) as transcriber:
        with pytest.raises(TranscriberUnavailable) as info:
            await transcriber.transcribe(AUDIO, "call_sarah.m4a", max_seconds=600)
    assert isinstance(info.value.__cause__, openai.APITimeoutError)
    assert len(fake.requests) == 1


async def test_chat_and_transcription_scripts_are_separate(fake: FakeOpenAI) -> None:
    fake.enqueue(http_error(500))  # a chat step: the transcription must not consume it
    fake.enqueue(transcription(SPOKEN), kind=TRANSCRIBE)
    async with openai_transcriber(fake) as transcriber:
        result = await transcriber.transcribe(AUDIO, "call_sarah.m4a", max_seconds=600)
    assert result.text == SPOKEN
    assert fake.pending() == 1
    assert fake.pending(kind=TRANSCRIBE) == 0
