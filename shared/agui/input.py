"""A RunAgentInput read as what the client asks for: a text capture, the answers that resume
its thread, or a voice note (an audio part, AG-UI 1.0 multimodal input), each with the
conversation the client holds; or a Problem saying what is wrong with it."""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from shared.agui.events import Conversation, speaks_interrupts
from shared.domain.audio import audio_type
from shared.domain.errors import Refused
from shared.domain.ids import request_key
from shared.domain.interrupts import MAX_ANSWER_CHARS
from shared.http.edge import problem_for
from shared.http.input import as_model, body_too_large, read_json
from shared.http.problems import Problem
from shared.http.queries import MAX_VERSION_CHARS
from shared.http.requests import MAX_ID_CHARS, unsupported_audio_type
from shared.services.ask import new_question, turns_of
from shared.services.ask_run import Question
from shared.services.capture import InRun, TextCapture, new_text_capture
from shared.services.resume import ResumeAnswer, ResumeRequest
from shared.services.voice import NewVoiceCapture
from shared.settings import get_settings

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput, UserMessage

# What a `url` audio source may name: a voice note the caller started with POST /api/voice-notes
# (its Location, or its events URL), relative or absolute.
_NOTE_PATH = re.compile(r"/api/captures/([^/?#]+)(?:/events)?/?")


@dataclass(frozen=True)
class VoiceInput:
    """A voice note in a run: its audio carried inline (`new`, `audio`), or the note the caller
    uploaded already (`capture_id`)."""

    thread_id: str
    run_id: str
    new: NewVoiceCapture | None = None
    audio: bytes = b""
    capture_id: str | None = None
    carried: bool = False  # its base64 was kept out of the parse (a body over MAX_BODY_BYTES)


@dataclass(frozen=True)
class RunRequest:
    """What a RunAgentInput asks for, and the conversation its client holds."""

    asked: TextCapture | ResumeRequest | VoiceInput
    conversation: Conversation


@dataclass(frozen=True)
class _Carried:
    """A voice note's base64 taken out of the body before it is parsed, and the placeholder
    string the body carries in its place."""

    placeholder: str
    data: bytes


def parse_capture_input(
    body: bytes,
    content_type: str | None,
    user_id: str,
    idempotency_key: str | None,
    audio: slice | None = None,
) -> RunRequest:
    """POST /api/capture: a RunAgentInput that either resumes its thread (AG-UI 1.0 `resume`),
    or carries a new capture as its last user message: text, or one audio part.

    `audio`: where, in a body over MAX_BODY_BYTES, the one long base64 string is. It is kept
    out of the parse (a placeholder stands in for it), and the body is refused (413) unless it
    is the data of the voice note the run carries: nothing else may take a body past the limit.
    """
    if audio is None:
        return _capture_input(body, content_type, user_id, idempotency_key, None)
    too_large = body_too_large(get_settings().max_text_body_bytes)
    if body[audio.start - 1 : audio.start] != b'"' or body[audio.stop : audio.stop + 1] != b'"':
        raise too_large  # not a whole JSON string
    carried = _Carried(secrets.token_hex(16), body[audio])
    body = body[: audio.start] + carried.placeholder.encode() + body[audio.stop :]
    try:
        run = _capture_input(body, content_type, user_id, idempotency_key, carried)
    except (Problem, Refused) as refused:
        if problem_for(refused).status == 413:
            raise
        # Whatever else is wrong with it, a body this large is first of all too large.
        raise too_large from refused
    asked = run.asked
    if not (isinstance(asked, VoiceInput) and asked.new is not None and asked.carried):
        raise too_large
    return run


def _capture_input(
    body: bytes,
    content_type: str | None,
    user_id: str,
    idempotency_key: str | None,
    carried: _Carried | None,
) -> RunRequest:
    run_input = _run_input(body, content_type)
    conversation = _conversation(run_input, carried)
    if run_input.resume is not None:
        resume = ResumeRequest(
            user_id=user_id,
            thread_id=run_input.thread_id,
            run_id=run_input.run_id,
            answers=[
                ResumeAnswer(interrupt_id=r.interrupt_id, status=r.status, payload=r.payload)
                for r in run_input.resume
            ],
        )
        return RunRequest(resume, conversation)
    voice = _voice_input(run_input, user_id, idempotency_key, carried)
    if voice is not None:
        return RunRequest(voice, conversation)
    return RunRequest(_text_capture(run_input, user_id, idempotency_key), conversation)


def parse_answer(
    body: bytes, content_type: str | None, user_id: str
) -> tuple[TextCapture, Conversation]:
    """A follow-up: a RunAgentInput whose last user message answers a capture's question (at
    most MAX_ANSWER_CHARS), or a Problem saying why not."""
    run_input = _run_input(body, content_type)
    answer = _text_capture(run_input, user_id, None)
    if len(answer.text) > MAX_ANSWER_CHARS:
        raise Problem(
            422,
            f"An answer is at most {MAX_ANSWER_CHARS} characters: send a longer text as a "
            "capture of its own.",
            code="ANSWER_TOO_LONG",
        )
    return answer, _conversation(run_input)


def _run_input(body: bytes, content_type: str | None) -> RunAgentInput:
    """Fields AG-UI does not define are ignored rather than refused: the protocol's own models
    allow them, so a client on a newer protocol version keeps working."""
    from ag_ui.core import RunAgentInput  # on first use: see shared/agui/events.py

    limits = get_settings()
    raw = _upgrade_binary_parts(read_json(body, content_type, "an AG-UI RunAgentInput"))
    run_input = as_model(raw, RunAgentInput, "an AG-UI RunAgentInput")
    for name, value in (("threadId", run_input.thread_id), ("runId", run_input.run_id)):
        if not 1 <= len(value) <= MAX_ID_CHARS:
            raise Problem(422, f"{name} must be 1 to {MAX_ID_CHARS} characters.", code="INVALID_ID")
    version = run_input.protocol_version
    if version is not None and len(version) > MAX_VERSION_CHARS:
        raise Problem(
            422,
            f"protocolVersion must be a version such as 1.0 ({MAX_VERSION_CHARS} characters "
            "at most).",
            code="INVALID_PROTOCOL_VERSION",
        )
    if len(run_input.messages) > limits.max_messages:
        raise Problem(
            422,
            f"A run may carry at most {limits.max_messages} messages.",
            code="TOO_MANY_MESSAGES",
        )
    return run_input


def _upgrade_binary_parts(raw: Any) -> Any:
    """The deprecated `{"type": "binary"}` audio part (before 1.0) as the audio part it became:
    the 1.0 models refuse it, and an older client still sends it."""
    if not isinstance(raw, dict) or not isinstance(raw.get("messages"), list):
        return raw
    for message in raw["messages"]:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for n, part in enumerate(content):
            if not (isinstance(part, dict) and part.get("type") == "binary"):
                continue
            mime = part.get("mimeType")
            if not (isinstance(mime, str) and mime.lower().startswith("audio/")):
                continue
            if isinstance(part.get("data"), str):
                source = {"type": "data", "value": part["data"], "mimeType": mime}
            elif isinstance(part.get("url"), str):
                source = {"type": "url", "value": part["url"], "mimeType": mime}
            else:
                continue  # an `id` only names nothing we hold: refused as it is
            content[n] = {"type": "audio", "source": source}
    return raw


def _conversation(run_input: RunAgentInput, carried: _Carried | None = None) -> Conversation:
    messages = tuple(
        m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in run_input.messages
    )
    if carried is not None:
        _put_back(messages, carried)
    return Conversation(interrupts=speaks_interrupts(run_input.protocol_version), messages=messages)


def _put_back(messages: tuple[dict[str, Any], ...], carried: _Carried) -> None:
    """The audio as the client sent it, in place of its placeholder: a messages snapshot
    repeats the conversation the client holds."""
    for message in messages:
        for part in message.get("content") or ():
            source = part.get("source") if isinstance(part, dict) else None
            if isinstance(source, dict) and source.get("value") == carried.placeholder:
                source["value"] = carried.data.decode("ascii")


def _text_capture(
    run_input: RunAgentInput, user_id: str, idempotency_key: str | None
) -> TextCapture:
    text = last_user_text(run_input)
    if text is None:
        raise Problem(422, "There is no user message to capture.", code="NO_USER_MESSAGE")
    interrupts = speaks_interrupts(run_input.protocol_version)
    run = InRun(run_input.thread_id, run_input.run_id, answers_in_thread=interrupts)
    return new_text_capture(
        user_id, text, idempotency_key, get_settings().max_capture_chars, run=run
    )


def _last_user_message(run_input: RunAgentInput) -> UserMessage | None:
    from ag_ui.core import UserMessage

    for message in reversed(run_input.messages):
        if isinstance(message, UserMessage):
            return message
    return None


def last_user_text(run_input: RunAgentInput) -> str | None:
    """The last user message's text: a string, or the text parts of a content list joined."""
    message = _last_user_message(run_input)
    if message is None:
        return None
    content = message.content
    if isinstance(content, str):
        return content
    parts = [getattr(p, "text", None) for p in content or []]
    return "\n".join(p for p in parts if p)


def _voice_input(
    run_input: RunAgentInput,
    user_id: str,
    idempotency_key: str | None,
    carried: _Carried | None = None,
) -> VoiceInput | None:
    """The last user message's audio part as a voice note, if it has one."""
    message = _last_user_message(run_input)
    content = message.content if message is not None else None
    if not isinstance(content, list):
        return None  # no message, or plain text
    parts = [p for p in content if p.type == "audio"]
    if not parts:
        return None
    if len(parts) > 1:
        raise Problem(422, "A capture takes one audio part.", code="TOO_MANY_AUDIO_PARTS")
    source = parts[0].source
    ids: dict[str, Any] = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
    if source.type == "url":
        return VoiceInput(**ids, capture_id=_note_named(source.value))
    if source.type != "data":
        raise Problem(
            422,
            "An audio part carries its audio as base64 data, or names a voice note by url.",
            code="UNSUPPORTED_AUDIO_SOURCE",
        )
    audio = audio_type(source.mime_type)
    if audio is None:
        # 422, not 415: the body is the JSON asked for; one of its values is not one we take.
        unsupported = unsupported_audio_type(source.mime_type)
        raise Problem(422, unsupported.detail, code=unsupported.code)
    limit = get_settings().max_voice_bytes
    is_carried = carried is not None and source.value == carried.placeholder
    encoded: str | bytes = carried.data if carried is not None and is_carried else source.value
    if len(encoded) > base64_chars(limit):
        raise _voice_too_large(limit)  # before decoding it
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise Problem(422, "The audio data is not base64.", code="BAD_AUDIO_DATA") from exc
    if len(data) > limit:
        raise _voice_too_large(limit)
    if not data:
        raise Problem(422, "The voice note is empty.", code="EMPTY_AUDIO")
    new = NewVoiceCapture(
        user_id=user_id,
        audio=audio,
        thread_id=run_input.thread_id,
        idempotency_key=request_key(idempotency_key, run_input.run_id),
    )
    return VoiceInput(**ids, new=new, audio=data, carried=is_carried)


def base64_chars(size: int) -> int:
    """The longest base64 string of `size` bytes (4 characters for 3 bytes, with room for
    padding)."""
    return (size + 2) // 3 * 4 + 4


def _voice_too_large(limit: int) -> Problem:
    return Problem(413, f"Voice notes are limited to {limit} bytes.", code="AUDIO_TOO_LARGE")


def _note_named(url: str) -> str:
    match = _NOTE_PATH.fullmatch(urlsplit(url).path)
    if match is None:
        raise Problem(
            422,
            "An audio url names a voice note started with POST /api/voice-notes: its Location, "
            "/api/captures/{captureId}.",
            code="UNKNOWN_AUDIO_URL",
        )
    return match[1]


@dataclass(frozen=True)
class AskInput:
    """POST /api/ask: the question (the last user message) and the turns before it."""

    thread_id: str
    run_id: str
    question: Question


def parse_ask_input(body: bytes, content_type: str | None) -> AskInput:
    """A RunAgentInput whose last user message is a question; the messages before it are the
    thread's earlier turns (user and assistant words; tool messages are the run's own)."""
    run_input = _run_input(body, content_type)
    text = last_user_text(run_input)
    if text is None:
        raise Problem(422, "There is no user message to answer.", code="NO_USER_MESSAGE")
    messages = [m.model_dump(mode="json", by_alias=True) for m in run_input.messages]
    last = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    question = new_question(text, turns_of(messages[:last]))
    return AskInput(run_input.thread_id, run_input.run_id, question)
