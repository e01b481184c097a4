"""Ids by construction: user ids as the API keys name them, and capture ids derived from what
identifies a request, so that a retried request lands on the same documents."""

from __future__ import annotations

import re
import uuid

# User ids become blob folders (`voice-notes/{userId}/…`) and Cosmos partition keys.
USER_ID = re.compile(r"[A-Za-z0-9_.@-]{1,64}")

_TEXT_NAMESPACE = uuid.UUID("6f1c3c52-8a0e-4f55-9a34-3c8f0b7f2d11")
_VOICE_NAMESPACE = uuid.UUID("0b3f9a5e-2f1d-4a8c-b6d7-54e1c9a0f3b2")


def capture_id_for(user_id: str, capture_key: str) -> str:
    """A text capture's id: its run id, or its Idempotency-Key, within the user."""
    return str(uuid.uuid5(_TEXT_NAMESPACE, f"text\n{user_id}\n{capture_key}"))


def request_key(idempotency_key: str | None, run_id: str | None) -> str:
    """What names a capture's request, so that a retry of it lands on the same capture: the
    client's Idempotency-Key, else its AG-UI run id; with neither, every request is new."""
    return idempotency_key or run_id or str(uuid.uuid4())


def voice_capture_id(user_id: str, idempotency_key: str | None) -> str:
    """With an Idempotency-Key a retried request gets the same id; without, a new one."""
    if idempotency_key:
        return str(uuid.uuid5(_VOICE_NAMESPACE, f"voice\n{user_id}\n{idempotency_key}"))
    return str(uuid.uuid4())


def is_capture_id(value: str) -> bool:
    """Canonical UUID text, the only form of id we make: anything else needs no database call."""
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False
