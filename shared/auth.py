"""API keys to user ids. The user id never comes from a request body or path."""

from __future__ import annotations

import hmac
import logging
from functools import lru_cache

from starlette.requests import Request

from .api_keys import USER_ID, key_digest
from .problems import Problem
from .settings import get_settings

log = logging.getLogger(__name__)


@lru_cache(maxsize=8)
def _key_table(raw: str) -> tuple[tuple[str, bytes], ...]:
    # API_KEYS is "user:sha256hex,user2:sha256hex" (see shared.api_keys): hashes only.
    table = []
    for number, entry in enumerate(filter(None, (e.strip() for e in raw.split(","))), 1):
        user, _, digest = entry.partition(":")
        try:
            hashed = bytes.fromhex(digest)
        except ValueError:
            hashed = b""
        if not USER_ID.fullmatch(user) or len(hashed) != 32:
            # Say which entry, never its content: it may be a key pasted by mistake.
            log.warning("API_KEYS entry %d is not user:sha256hex; ignored", number)
            continue
        table.append((user, hashed))
    return tuple(table)


def presented_key(request: Request) -> str | None:
    key = request.headers.get("x-api-key")
    if key:
        return key.strip()
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


def authenticate(request: Request) -> str:
    """The caller's user id, or a 401 Problem that says nothing about why."""
    key = presented_key(request)
    if key:
        digest = bytes.fromhex(key_digest(key))
        user = None
        # Compare against every entry, in constant time, so timing says nothing.
        for candidate, expected in _key_table(get_settings().api_keys):
            if hmac.compare_digest(digest, expected):
                user = candidate
        if user:
            return user
    raise Problem(401, "A valid API key is required (X-API-Key or Authorization: Bearer).")
