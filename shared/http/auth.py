"""Who is calling: an API key, or the platform's principal behind App Service authentication,
mapped to a user id, then held to that user's request budget. The user id never comes from a
request body or path."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Mapping
from functools import lru_cache

from starlette.datastructures import Headers
from starlette.requests import Request

from shared.domain.ids import USER_ID
from shared.http.api_keys import key_digest
from shared.http.problems import Problem
from shared.http.rate_limit import RateLimiter
from shared.settings import get_settings
from shared.tracing import annotate

log = logging.getLogger(__name__)


@lru_cache(maxsize=8)
def _key_table(raw: str) -> tuple[tuple[str, bytes], ...]:
    # API_KEYS is "user:sha256hex,user2:sha256hex" (see shared.http.api_keys): hashes only.
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


def presented_key(headers: Mapping[str, str]) -> str | None:
    key = headers.get("x-api-key")
    if key:
        return key.strip()
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


@lru_cache(maxsize=4)
def _limiter(per_minute: float, burst: int) -> RateLimiter:
    return RateLimiter(per_minute, burst)


def authenticate(request: Request) -> str:
    """The caller's user id; a 401 Problem that says nothing about why, or a 429 when the
    caller is over its budget."""
    return authenticate_headers(request.headers)


def authenticate_headers(headers: Mapping[str, str]) -> str:
    """`authenticate`, from a request's headers as another door receives them (the MCP
    extension passes a tool call's HTTP headers in its transport context): the same keys, the
    same budget. Header names are matched whatever their case."""
    settings = get_settings()
    headers = headers if isinstance(headers, Headers) else Headers(headers=dict(headers))
    user = _platform_principal(headers) if settings.easy_auth_enabled else None
    if user is None:
        user = _key_user(headers, settings.api_keys)
    if user is None:
        raise Problem(401, "A valid API key is required (X-API-Key or Authorization: Bearer).")
    annotate(user_id=user)
    _limiter(settings.rate_limit_per_minute, settings.rate_limit_burst).check(user)
    return user


def _platform_principal(headers: Mapping[str, str]) -> str | None:
    # App Service authentication (Easy Auth) strips these headers from what clients send and
    # sets them itself, so they are trusted only when the platform says it is switched on.
    principal = headers.get("x-ms-client-principal-id", "").strip()
    return principal if USER_ID.fullmatch(principal) else None


def _key_user(headers: Mapping[str, str], api_keys: str) -> str | None:
    key = presented_key(headers)
    if not key:
        return None
    digest = bytes.fromhex(key_digest(key))
    user = None
    # Compare against every entry, in constant time, so timing says nothing.
    for candidate, expected in _key_table(api_keys):
        if hmac.compare_digest(digest, expected):
            user = candidate
    return user
