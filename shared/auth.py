"""API keys to user ids. The user id never comes from a request body or path."""

from __future__ import annotations

import hashlib
import hmac
from functools import lru_cache

from starlette.requests import Request

from .problems import Problem
from .settings import get_settings


@lru_cache(maxsize=8)
def _key_table(raw: str) -> tuple[tuple[str, bytes], ...]:
    # API_KEYS is "user:sha256hex,user2:sha256hex": only hashes of keys live in settings.
    table = []
    for entry in filter(None, (e.strip() for e in raw.split(","))):
        user, _, digest = entry.partition(":")
        if user and len(digest) == 64:
            table.append((user, bytes.fromhex(digest)))
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
        digest = hashlib.sha256(key.encode()).digest()
        user = None
        # Compare against every entry, in constant time, so timing says nothing.
        for candidate, expected in _key_table(get_settings().api_keys):
            if hmac.compare_digest(digest, expected):
                user = candidate
        if user:
            return user
    raise Problem(401, "A valid API key is required (X-API-Key or Authorization: Bearer).")
