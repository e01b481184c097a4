"""shared/agui/input.py: a RunAgentInput read as a text capture, a resume or a voice note (an
audio part: base64 data, a url naming a note, or the deprecated binary part); bad ones are a
Problem with a stable code."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from shared.agui.input import VoiceInput, parse_capture_input
from shared.http.problems import Problem
from shared.services.capture import TextCapture
from shared.services.resume import ResumeRequest

WAV = b"RIFF....WAVEfmt "


def body(*content: Any, **fields: Any) -> bytes:
    message = {"id": "m1", "role": "user", "content": list(content) if content else "hello"}
    run = {
        "threadId": "t1",
        "runId": "r1",
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "messages": [message],
        **fields,
    }
    return json.dumps(run).encode()


def read(raw: bytes, key: str | None = None) -> Any:
    return parse_capture_input(raw, "application/json", "dev", key).asked


def audio(source: dict) -> dict:
    return {"type": "audio", "source": source}


def data(value: bytes = WAV, mime: str = "audio/wav") -> dict:
    return {"type": "data", "value": base64.b64encode(value).decode(), "mimeType": mime}


def refused(raw: bytes) -> Problem:
    with pytest.raises(Problem) as problem:
        read(raw)
    return problem.value


def test_text_is_a_text_capture(unit_settings) -> None:
    capture = read(body(), key="k")
    assert isinstance(capture, TextCapture)
    assert (capture.text, capture.capture_key, capture.answers_in_thread) == ("hello", "k", False)
    spoken = read(body(protocolVersion="1.0"))
    assert spoken.answers_in_thread and spoken.capture_key == "r1"


def test_a_resume_is_a_resume(unit_settings) -> None:
    resume = [{"interruptId": "i1", "status": "cancelled"}]
    request = read(body(protocolVersion="1.0", resume=resume))
    assert isinstance(request, ResumeRequest) and request.answers[0].interrupt_id == "i1"


def test_an_audio_part_with_data_is_a_voice_note_on_the_runs_thread(unit_settings) -> None:
    voice = read(body({"type": "text", "text": "ignored"}, audio(data())))
    assert isinstance(voice, VoiceInput) and voice.audio == WAV
    assert voice.new is not None and voice.new.audio.content_type == "audio/wav"
    assert (voice.new.thread_id, voice.new.idempotency_key, voice.run_id) == ("t1", "r1", "r1")


def test_the_deprecated_binary_part_is_read_as_an_audio_part(unit_settings) -> None:
    part = {"type": "binary", "mimeType": "audio/wav", "data": base64.b64encode(WAV).decode()}
    voice = read(body(part))
    assert isinstance(voice, VoiceInput) and voice.audio == WAV


@pytest.mark.parametrize(
    "url",
    ["/api/captures/abc", "http://127.0.0.1:7071/api/captures/abc/events", "/api/captures/abc/"],
)
def test_an_audio_url_names_a_note_by_its_location(unit_settings, url: str) -> None:
    voice = read(body(audio({"type": "url", "value": url})))
    assert isinstance(voice, VoiceInput) and voice.capture_id == "abc" and voice.new is None


@pytest.mark.parametrize(
    ("part", "status", "code"),
    [
        (audio(data(mime="text/plain")), 422, "UNSUPPORTED_AUDIO_TYPE"),
        (
            audio({"type": "data", "value": "not base64!", "mimeType": "audio/wav"}),
            422,
            "BAD_AUDIO_DATA",
        ),
        (audio(data(b"")), 422, "EMPTY_AUDIO"),
        (audio({"type": "url", "value": "https://example.org/a.wav"}), 422, "UNKNOWN_AUDIO_URL"),
        (audio({"type": "file", "value": "file-123"}), 422, "UNSUPPORTED_AUDIO_SOURCE"),
    ],
)
def test_a_bad_audio_part_is_a_problem(unit_settings, part: dict, status: int, code: str) -> None:
    problem = refused(body(part))
    assert (problem.status, problem.code) == (status, code)


def test_two_audio_parts_are_refused(unit_settings) -> None:
    assert refused(body(audio(data()), audio(data()))).code == "TOO_MANY_AUDIO_PARTS"


def test_audio_over_the_voice_limit_is_413(unit_settings) -> None:
    unit_settings(MAX_VOICE_BYTES="10")
    assert refused(body(audio(data(b"x" * 11)))).status == 413
