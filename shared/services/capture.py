"""Capture text: parse the AG-UI request, then store it before anything else can fail."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from pydantic import BaseModel

from shared.adapters.repository import CaptureRepository
from shared.domain.errors import NotStored
from shared.domain.models import InboxItem
from shared.http.input import parse_json
from shared.http.problems import Problem
from shared.settings import get_settings

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput

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


# Ids are stored with the capture and echoed in every event; a client's ids are short.
MAX_ID_CHARS = 200


def parse_text_capture(
    body: bytes, content_type: str | None, user_id: str, idempotency_key: str | None
) -> TextCapture:
    """A RunAgentInput whose last user message is the capture, or a Problem saying why not.

    Fields AG-UI does not define are ignored rather than refused: the protocol's own models
    allow them, so a client on a newer protocol version keeps working."""
    from ag_ui.core import RunAgentInput  # on first use: see shared/agui.py

    limits = get_settings()
    run_input = parse_json(body, content_type, RunAgentInput, "an AG-UI RunAgentInput")
    for name, value in (("threadId", run_input.thread_id), ("runId", run_input.run_id)):
        if not 1 <= len(value) <= MAX_ID_CHARS:
            raise Problem(422, f"{name} must be 1 to {MAX_ID_CHARS} characters.", code="INVALID_ID")
    if len(run_input.messages) > limits.max_messages:
        raise Problem(
            422,
            f"A run may carry at most {limits.max_messages} messages.",
            code="TOO_MANY_MESSAGES",
        )
    text = last_user_text(run_input)
    if text is None:
        raise Problem(422, "There is no user message to capture.", code="NO_USER_MESSAGE")
    text = text.strip()
    if not text:
        raise Problem(422, "The capture is empty.", code="EMPTY_CAPTURE")
    if len(text) > limits.max_capture_chars:
        raise Problem(
            422,
            f"The capture is longer than {limits.max_capture_chars} characters.",
            code="CAPTURE_TOO_LONG",
        )
    key = idempotency_key or run_input.run_id
    return TextCapture(
        user_id=user_id,
        thread_id=run_input.thread_id,
        run_id=run_input.run_id,
        text=text,
        capture_key=key,
    )


def last_user_text(run_input: RunAgentInput) -> str | None:
    """The last user message's text: a string, or the text parts of a content list joined."""
    from ag_ui.core import UserMessage

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
    stored, created = await repo.add(item)
    if stored.is_deleted:
        raise NotStored("CAPTURE_DELETED", "This capture was deleted.")
    if not created and (stored.source, stored.text, stored.thread_id) != (
        item.source,
        item.text,
        item.thread_id,
    ):
        # As payment APIs do: one key names one request; another body under it is a mistake.
        raise NotStored(
            "IDEMPOTENCY_KEY_REUSED",
            "This runId (or Idempotency-Key) was already used for a different capture.",
        )
    return stored
