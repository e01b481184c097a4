"""Capture text: parse the AG-UI request, then store it before anything else can fail."""

from __future__ import annotations

import uuid

from ag_ui.core import RunAgentInput, UserMessage
from pydantic import BaseModel

from .http_input import parse_json
from .models import InboxItem
from .problems import Problem
from .repository import CaptureRepository

# Capture ids are name-based UUIDs, so a retried request lands on the same documents.
_CAPTURE_NAMESPACE = uuid.UUID("6f1c3c52-8a0e-4f55-9a34-3c8f0b7f2d11")


class TextCapture(BaseModel):
    """A parsed, validated text capture request."""

    user_id: str
    thread_id: str
    run_id: str
    text: str
    capture_key: str


def capture_id_for(user_id: str, capture_key: str) -> str:
    return str(uuid.uuid5(_CAPTURE_NAMESPACE, f"text\n{user_id}\n{capture_key}"))


def parse_text_capture(
    body: bytes,
    content_type: str | None,
    user_id: str,
    idempotency_key: str | None,
    max_chars: int,
) -> TextCapture:
    """A RunAgentInput whose last user message is the capture, or a Problem saying why not."""
    run_input = parse_json(body, content_type, RunAgentInput, "an AG-UI RunAgentInput")
    text = last_user_text(run_input)
    if text is None:
        raise Problem(422, "There is no user message to capture.", code="NO_USER_MESSAGE")
    text = text.strip()
    if not text:
        raise Problem(422, "The capture is empty.", code="EMPTY_CAPTURE")
    if len(text) > max_chars:
        raise Problem(
            422, f"The capture is longer than {max_chars} characters.", code="CAPTURE_TOO_LONG"
        )
    key = (idempotency_key or "").strip()[:200] or run_input.run_id
    return TextCapture(
        user_id=user_id,
        thread_id=run_input.thread_id,
        run_id=run_input.run_id,
        text=text,
        capture_key=key,
    )


def last_user_text(run_input: RunAgentInput) -> str | None:
    """The last user message's text: a string, or the text parts of a content list joined."""
    for message in reversed(run_input.messages):
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                return content
            parts = [getattr(p, "text", None) for p in content or []]
            return "\n".join(p for p in parts if p)
    return None


async def store_text_capture(capture: TextCapture, repo: CaptureRepository) -> InboxItem:
    """Store the capture (status received); a retry gets the item stored the first time."""
    item = InboxItem(
        id=capture_id_for(capture.user_id, capture.capture_key),
        user_id=capture.user_id,
        source="text",
        text=capture.text,
        thread_id=capture.thread_id,
        run_id=capture.run_id,
    )
    stored, _created = await repo.add(item)
    return stored
