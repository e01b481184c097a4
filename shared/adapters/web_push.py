"""Web Push with pywebpush: the payload encrypted to the device (RFC 8291, aes128gcm), the request
signed with our VAPID key (RFC 8292), sent over aiohttp (`webpush_async`: the event loop is never
blocked). pywebpush, py-vapid and aiohttp stay in here; the push service's answers come out as a
`Delivery`, or PushUnavailable when it should be tried again later.

Nothing about a subscription is logged but its id: the endpoint's path is a bearer token for
the device, and the keys are the device's.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from shared.adapters.vapid import VapidKeys, load_keys
from shared.domain.errors import NotConfigured, PushUnavailable
from shared.domain.push import Delivery, PushSubscription
from shared.domain.push_services import PushServices

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

# How long a push service keeps a notification for a device that is offline: a day-old outcome
# is still worth telling; an older one the inbox tells.
TTL_S = 86_400
# The VAPID JWT's lifetime; RFC 8292 allows at most 24 hours.
JWT_LIFETIME_S = 12 * 3600
_DEFAULT_PORTS = {"https": 443, "http": 80}


class WebPushSender:
    """`PushSender` over pywebpush. Without a usable VAPID key pair (a setting missing, wrong,
    or an unresolved Key Vault reference) every call raises NotConfigured, and the reason is
    logged once."""

    def __init__(
        self,
        public_key: str | None,
        private_key: str | None,
        subject: str | None,
        services: PushServices,
        timeout_s: float = 10.0,
    ) -> None:
        self._public_key = public_key
        self._private_key = private_key
        self._subject = subject
        self._services = services
        self._timeout_s = timeout_s
        self._http: aiohttp.ClientSession | None = None

    @cached_property
    def _keys(self) -> VapidKeys | None:
        if not (self._public_key and self._private_key and self._subject):
            log.warning("push is off: set VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT")
            return None
        try:
            return load_keys(self._public_key, self._private_key)
        except ValueError as exc:
            log.error("push is off: %s", exc)  # the message names a setting, never a value
            return None

    def _configured(self) -> VapidKeys:
        if self._keys is None:
            raise NotConfigured(
                "Push notifications are not set up on this server.", "PUSH_NOT_CONFIGURED"
            )
        return self._keys

    async def application_server_key(self) -> str:
        return self._configured().public_key

    async def send(self, subscription: PushSubscription, payload: bytes, topic: str) -> Delivery:
        keys = self._configured()
        # The service checked the allow-list; the one place that makes the request checks too.
        if not self._services.allows(subscription.endpoint):
            log.warning("push subscription %s: endpoint not allowed; not sent", subscription.id)
            return Delivery.REFUSED
        import aiohttp
        from pywebpush import WebPushException, webpush_async

        claims: dict[str, str | int] = {
            "sub": self._subject or "",
            "aud": _origin(subscription.endpoint),
            "exp": int(time.time()) + JWT_LIFETIME_S,
        }
        info: dict[str, Any] = {
            "endpoint": subscription.endpoint,
            "keys": {"p256dh": subscription.keys.p256dh, "auth": subscription.keys.auth},
        }
        try:
            async with asyncio.timeout(self._timeout_s):
                await webpush_async(
                    info,
                    payload,  # bytes are sent as they are
                    vapid_private_key=keys.signer,
                    vapid_claims=claims,
                    content_encoding="aes128gcm",
                    ttl=TTL_S,
                    # A newer notification of the same capture replaces one not yet delivered.
                    headers={"Urgency": "normal", "Topic": topic},
                    timeout=self._timeout_s,
                    aiohttp_session=self._session(),
                )
        except WebPushException as exc:
            return _answered(subscription, exc.status_code)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:  # no answer
            raise PushUnavailable(type(exc).__name__) from None
        return Delivery.DELIVERED

    def _session(self) -> _NoRedirects:
        import aiohttp

        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession()
        return _NoRedirects(self._http)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None


class _NoRedirects:
    """The session as pywebpush calls it (`post` only), never following a redirect: a push
    service's redirect would lead the request to a URL the allow-list never saw."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self._session = session

    def post(self, url: str, **kwargs: Any) -> Any:
        return self._session.post(url, allow_redirects=False, **kwargs)


def _answered(subscription: PushSubscription, status: int | None) -> Delivery:
    if status in (404, 410):
        return Delivery.GONE
    if status is None or status == 429 or status >= 500:
        raise PushUnavailable(f"the push service answered {status}")
    # 400 (bad request), 401/403 (a VAPID key the subscription was not made with), 413, a
    # redirect: trying again cannot help. Its body is not logged: it may echo the endpoint.
    log.warning("push subscription %s: the push service answered %s", subscription.id, status)
    return Delivery.REFUSED


def _origin(endpoint: str) -> str:
    """The endpoint's origin, as the push service knows itself: the JWT's `aud`."""
    parts = urlsplit(endpoint)
    scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"
