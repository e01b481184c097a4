"""Bodies within limits, decided before anything parses them (shared/http/input.py), and the one
string a run may carry past MAX_BODY_BYTES: its voice note's base64 (shared/agui/input.py)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from starlette.requests import Request

from shared.agui.input import VoiceInput, base64_chars, parse_capture_input
from shared.http.input import _depth, read_body_with_audio
from shared.http.problems import Problem
from shared.settings import Settings

CHUNK = 4096


class Sender:
    """A client sending `body` in chunks, and how much of it the server asked for."""

    def __init__(self, body: bytes) -> None:
        self.chunks = [body[i : i + CHUNK] for i in range(0, len(body), CHUNK)] or [b""]
        self.sent = 0

    async def receive(self) -> dict[str, Any]:
        chunk = self.chunks[self.sent]
        self.sent += 1
        return {"type": "http.request", "body": chunk, "more_body": self.sent < len(self.chunks)}

    def request(self) -> Request:
        scope = {"type": "http", "method": "POST", "path": "/api/capture", "headers": []}
        return Request(scope, self.receive)


def run(*content: Any, **fields: Any) -> dict:
    message = {"id": "m1", "role": "user", "content": list(content)}
    return {"threadId": "t1", "runId": "r1", "messages": [message], **fields}


def audio_part(audio: bytes) -> dict:
    value = base64.b64encode(audio).decode()
    return {"type": "audio", "source": {"type": "data", "value": value, "mimeType": "audio/wav"}}


@pytest.fixture
def small(unit_settings) -> Settings:
    # Text routes read 1,000 + 8 * 10 bytes; a voice note may add its 30,000 bytes as base64.
    return unit_settings(MAX_BODY_BYTES="1000", MAX_CAPTURE_CHARS="10", MAX_VOICE_BYTES="30000")


async def read_run(settings: Settings, raw: bytes) -> tuple[Any, Sender]:
    sender = Sender(raw)
    limit, room = settings.max_text_body_bytes, base64_chars(settings.max_voice_bytes)
    body, audio = await read_body_with_audio(sender.request(), limit, room)
    return parse_capture_input(body, "application/json", "dev", None, audio), sender


async def refused(settings: Settings, raw: bytes) -> tuple[Problem, Sender]:
    sender = Sender(raw)
    with pytest.raises(Problem) as problem:
        limit, room = settings.max_text_body_bytes, base64_chars(settings.max_voice_bytes)
        body, audio = await read_body_with_audio(sender.request(), limit, room)
        parse_capture_input(body, "application/json", "dev", None, audio)
    return problem.value, sender


async def test_a_voice_note_past_the_body_limit_is_read_without_parsing_its_audio(small) -> None:
    recording = bytes(range(256)) * 80  # 20 KB: its base64 alone is past the body limit
    parsed, _ = await read_run(small, json.dumps(run(audio_part(recording))).encode())
    asked = parsed.asked
    assert isinstance(asked, VoiceInput) and asked.new is not None
    assert asked.audio == recording and asked.carried
    # The conversation a messages snapshot repeats holds the audio as it was sent.
    sent = parsed.conversation.messages[0]["content"][0]["source"]["value"]
    assert base64.b64decode(sent) == recording


async def test_the_deprecated_binary_part_may_carry_it_too(small) -> None:
    data = base64.b64encode(b"\x01\x02" * 8000).decode()
    part = {"type": "binary", "mimeType": "audio/wav", "data": data}
    parsed, _ = await read_run(small, json.dumps(run(part)).encode())
    assert isinstance(parsed.asked, VoiceInput) and parsed.asked.audio == b"\x01\x02" * 8000


@pytest.mark.parametrize(
    "body",
    [
        # The long string elsewhere, a small voice note in the message: the limit stands.
        run(audio_part(b"RIFF"), forwardedProps={"pad": "A" * 20_000}),
        # A long text, or a long string in an earlier message.
        run({"type": "text", "text": "A" * 20_000}),
        {
            **run({"type": "text", "text": "hi"}),
            "messages": [
                {"id": "m0", "role": "user", "content": [audio_part(b"\x00" * 15_000)]},
                {"id": "m1", "role": "user", "content": "hi"},
            ],
        },
        # A resume carrying it.
        run(
            {"type": "text", "text": "hi"},
            protocolVersion="1.0",
            resume=[{"interruptId": "i1", "status": "resolved", "payload": {"a": "A" * 20_000}}],
        ),
    ],
)
async def test_no_other_string_may_take_a_run_past_the_limit(small, body: dict) -> None:
    problem, _ = await refused(small, json.dumps(body).encode())
    assert (problem.status, problem.code) == (413, "BODY_TOO_LARGE")


async def test_a_body_of_many_small_values_is_refused_before_its_end(small) -> None:
    """What froze the server: ~33 MB with "audio" in it, parsed whole before the 413. Now the
    413 comes as soon as what is read cannot be a voice note within the limits."""
    raw = b'{"audio": [' + b"{}," * 10_000 + b"{}]}"  # 30 KB, within the read limit
    assert len(raw) < small.max_text_body_bytes + base64_chars(small.max_voice_bytes)
    problem, sender = await refused(small, raw)
    assert (problem.status, problem.code) == (413, "BODY_TOO_LARGE")
    assert sender.sent * CHUNK < 2 * small.max_text_body_bytes + CHUNK
    assert sender.sent < len(sender.chunks)


async def test_audio_past_the_voice_limit_is_413_with_its_code(small) -> None:
    raw = json.dumps(run(audio_part(b"\x00" * 30_001))).encode()
    problem, _ = await refused(small, raw)
    assert (problem.status, problem.code) == (413, "AUDIO_TOO_LARGE")


async def test_a_body_within_the_limit_is_parsed_as_it_is(small) -> None:
    parsed, _ = await read_run(small, json.dumps(run(audio_part(b"RIFF"))).encode())
    assert isinstance(parsed.asked, VoiceInput) and not parsed.asked.carried


def test_depth_counts_levels() -> None:
    assert [_depth(v) for v in (1, [], {}, {"a": {"b": [1]}}, [[], [[{}]]])] == [0, 1, 1, 3, 4]
