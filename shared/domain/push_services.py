"""Which push services the server sends to. A push subscription's endpoint is the client's word,
and the server POSTs to it: only the origins of real push services are accepted (checked when a
subscription is stored and again before each send), so no client can make the server call an
arbitrary URL.

An origin is `scheme://host[:port]`; `https://*.push.apple.com` allows any host under that
suffix (not the suffix itself). Only https, except plain http to a loopback host named as such:
that is how tests and local development point the app at a stand-in push service.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PUSH_SERVICE_ORIGINS = (
    "https://fcm.googleapis.com",  # Chrome, Edge on Android, Chromium browsers
    "https://updates.push.services.mozilla.com",  # Firefox
    "https://*.push.apple.com",  # Safari (web.push.apple.com)
    "https://*.notify.windows.com",  # Edge on Windows (WNS)
)

_DEFAULT_PORT = {"https": 443, "http": 80}
# RFC 3986's characters only: a backslash, a space or a control character is where URL parsers
# disagree, and the check must read the endpoint exactly as the HTTP client will.
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServiceOrigin:
    scheme: str
    host: str  # lower case; for a wildcard, the suffix after `*.`
    port: int
    wildcard: bool = False

    def matches(self, scheme: str, host: str, port: int) -> bool:
        if (scheme, port) != (self.scheme, self.port):
            return False
        if self.wildcard:
            return host.endswith(f".{self.host}")
        return host == self.host


@dataclass(frozen=True)
class _Url:
    scheme: str
    host: str
    port: int


def _split(url: str) -> _Url | None:
    """Scheme, host and effective port of an absolute http(s) URL without user info; None for
    anything else."""
    if not _URL_CHARACTERS.fullmatch(url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORT or not host or "@" in parts.netloc:
        return None
    return _Url(scheme, host, port if port is not None else _DEFAULT_PORT[scheme])


class PushServices:
    """The allowed origins (PUSH_SERVICE_ORIGINS)."""

    def __init__(self, origins: tuple[ServiceOrigin, ...]) -> None:
        self.origins = origins

    @classmethod
    def parse(cls, text: str) -> PushServices:
        """Comma-separated origins; ValueError names the first one that is not acceptable."""
        origins = []
        for entry in (e.strip() for e in text.split(",")):
            if entry:
                origins.append(_origin(entry))
        return cls(tuple(origins))

    def allows(self, endpoint: str) -> bool:
        url = _split(endpoint)
        if url is None:
            return False
        if url.scheme == "http" and not is_loopback(url.host):
            return False
        return any(o.matches(url.scheme, url.host, url.port) for o in self.origins)


def _origin(entry: str) -> ServiceOrigin:
    wildcard = "://*." in entry
    url = _split(entry.replace("://*.", "://", 1))
    path = urlsplit(entry).path if url else ""
    if url is None or path not in ("", "/") or "?" in entry or "#" in entry:
        raise ValueError(f"not an origin (scheme://host[:port]): {entry!r}")
    if not _HOST.fullmatch(url.host) and not is_loopback(url.host.strip("[]")):
        raise ValueError(f"not a host name: {entry!r}")
    if url.scheme == "http" and (wildcard or not is_loopback(url.host)):
        raise ValueError(f"plain http only to a loopback host: {entry!r}")
    return ServiceOrigin(url.scheme, url.host, url.port, wildcard)
