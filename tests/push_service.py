"""A push service stand-in on 127.0.0.1 (aiohttp), for tests: the part of FCM, Mozilla's or
Apple's push service that the server talks to, checked as they check it.

Each `Device` is a browser's side of a subscription, made by the test: its own P-256 key pair
and auth secret, and an endpoint on the stand-in. For every push it is sent, the stand-in
verifies the VAPID JWT (RFC 8292: ES256 signature by the `k=` key of `Authorization: vapid t=…,
k=…`; `aud` this service's origin, `exp` in the future and within 24 hours, `sub` a mailto:)
and decrypts the aes128gcm body (RFC 8291) with the device's private key and auth secret, with
the `http_ece` package rather than the sender's code. What the user would read is recorded
(`received`, for a device that answers 201); a push that fails a check is recorded in `rejected`
and answered 400 or 401. A test marks a device to answer 404, 410, 429, 500… (`answer`), to
redirect, or to take its time. `GET /push/<token>/messages` hands out what a device was
delivered, decrypted, as the push service's connection to that browser would: the browser
tests give it to the app's service worker.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import http_ece
from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from testkit.loopback_server import LoopbackServer

MAX_JWT_LIFETIME_S = 24 * 3600


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Device:
    """A browser's subscription: what it sends the app, and the secrets only it holds."""

    token: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes
    status: int = 201  # what the stand-in answers a push to it
    redirect_to: str | None = None
    delay_s: float = 0.0

    @property
    def p256dh(self) -> str:
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64url(point)

    def subscription(self) -> dict[str, Any]:
        """`PushSubscription.toJSON()`, as the app posts it."""
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": self.p256dh, "auth": b64url(self.auth)},
        }


@dataclass(frozen=True)
class Received:
    """One push that passed every check, as the device's service worker would see it."""

    token: str
    payload: dict[str, Any]  # the decrypted JSON
    claims: dict[str, Any]  # the verified JWT's
    vapid_key: str  # the `k=` it was signed with
    headers: dict[str, str]  # ttl, urgency, topic, content-encoding (no credentials)

    @property
    def reads(self) -> str:
        """What the user reads, as a lock screen shows a notification: title · body."""
        title, body = self.payload.get("title", ""), self.payload.get("body", "")
        return f"{title} · {body}" if body else title


@dataclass(frozen=True)
class Rejected:
    token: str
    reason: str


class Invalid(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class _State:
    devices: dict[str, Device] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    # (token, status) of every push that passed the checks, whatever the device answered.
    answered: list[tuple[str, int]] = field(default_factory=list)
    requests: int = 0


class PushServiceStandIn(LoopbackServer):
    """`async with PushServiceStandIn() as service:` serves from the running loop; `with …`
    from a thread of its own, for sync tests and a devhost in another process."""

    thread_name = "push-service"

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self._state = _State()
        # A threading lock: sync tests read while the server's thread writes; never held across
        # an await.
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)

    @property
    def origin(self) -> str:
        """What PUSH_SERVICE_ORIGINS lists for it, and what a JWT's `aud` must be."""
        return f"http://{self.host}:{self.port}"

    # -- devices and records -------------------------------------------------------------------

    def device(self, status: int = 201) -> Device:
        token = f"{next(self._tokens)}-{secrets.token_urlsafe(16)}"
        device = Device(
            token=token,
            endpoint=f"{self.origin}/push/{token}",
            private_key=ec.generate_private_key(ec.SECP256R1()),
            auth=secrets.token_bytes(16),
            status=status,
        )
        with self._lock:
            self._state.devices[token] = device
        return device

    def answer(
        self, device: Device, status: int, *, redirect_to: str | None = None, delay_s: float = 0
    ) -> None:
        with self._lock:
            device.status, device.redirect_to, device.delay_s = status, redirect_to, delay_s

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return list(self._state.received)

    @property
    def rejected(self) -> list[Rejected]:
        with self._lock:
            return list(self._state.rejected)

    @property
    def requests(self) -> int:
        with self._lock:
            return self._state.requests

    def received_by(self, device: Device) -> list[Received]:
        """What the user reads on `device`: the pushes it was delivered (answered 201)."""
        return [r for r in self.received if r.token == device.token]

    def answered(self, device: Device) -> list[int]:
        """The statuses `device`'s pushes were answered with (valid pushes only)."""
        with self._lock:
            return [status for token, status in self._state.answered if token == device.token]

    # -- serving -------------------------------------------------------------------------------

    async def _push(self, request: web.Request) -> web.StreamResponse:
        token = request.match_info["token"]
        body = await request.read()
        with self._lock:
            self._state.requests += 1
            device = self._state.devices.get(token)
        if device is None:
            return web.Response(status=404)
        if device.delay_s:
            await asyncio.sleep(device.delay_s)
        try:
            claims, key = self._verify_vapid(request.headers.get("Authorization", ""))
            headers = _checked_headers(request)
            plaintext = http_ece.decrypt(
                body, private_key=device.private_key, auth_secret=device.auth, version="aes128gcm"
            )
            payload = json.loads(plaintext)
        except Invalid as exc:
            return self._reject(token, exc.status, exc.reason)
        except Exception as exc:  # http_ece's, json's: the body is not what the device can read
            return self._reject(token, 400, f"undecryptable body: {type(exc).__name__}")
        with self._lock:
            self._state.answered.append((token, device.status))
        if device.redirect_to is not None:
            return web.Response(status=307, headers={"Location": device.redirect_to})
        if device.status != 201:
            return web.Response(status=device.status, text=f"stand-in says {device.status}")
        with self._lock:
            self._state.received.append(Received(token, payload, claims, key, headers))
        return web.Response(status=201, headers={"Location": f"/messages/{token}"})

    def _reject(self, token: str, status: int, reason: str) -> web.Response:
        with self._lock:
            self._state.rejected.append(Rejected(token, reason))
        return web.Response(status=status, text=reason)

    def _verify_vapid(self, authorization: str) -> tuple[dict[str, Any], str]:
        """RFC 8292: `vapid t=<JWT>, k=<public key>`; the claims and the key, once verified."""
        scheme, _, params = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise Invalid(401, f"not a vapid Authorization: {scheme!r}")
        fields = dict(p.strip().split("=", 1) for p in params.split(",") if "=" in p)
        token, key = fields.get("t"), fields.get("k")
        if not token or not key:
            raise Invalid(401, "vapid Authorization without t= or k=")
        try:
            signing_input, _, signature = token.rpartition(".")
            header_b64, claims_b64 = signing_input.split(".")
            header = json.loads(b64url_decode(header_b64))
            claims = json.loads(b64url_decode(claims_b64))
            public = ec.EllipticCurvePublicKey.from_encoded_point(
                ec.SECP256R1(), b64url_decode(key)
            )
            raw = b64url_decode(signature)
        except (ValueError, TypeError) as exc:
            raise Invalid(401, f"malformed JWT or key: {type(exc).__name__}") from None
        if header.get("alg") != "ES256" or len(raw) != 64:
            raise Invalid(401, f"not an ES256 JWT: {header}")
        r, s = int.from_bytes(raw[:32]), int.from_bytes(raw[32:])
        try:
            public.verify(
                encode_dss_signature(r, s), signing_input.encode(), ec.ECDSA(hashes.SHA256())
            )
        except InvalidSignature:
            raise Invalid(401, "the JWT's signature does not verify with k=") from None
        now = time.time()
        if claims.get("aud") != self.origin:
            raise Invalid(401, f"aud {claims.get('aud')!r} is not {self.origin!r}")
        exp = claims.get("exp")
        if not isinstance(exp, int) or not now < exp <= now + MAX_JWT_LIFETIME_S:
            raise Invalid(401, f"exp {exp!r} is not in the next 24 hours")
        if not str(claims.get("sub", "")).startswith("mailto:"):
            raise Invalid(401, f"sub {claims.get('sub')!r} is not a mailto:")
        return claims, key

    # -- lifecycle -----------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/push/{token}", self._push)
        app.router.add_get("/push/{token}/messages", self._messages)
        app.router.add_post("/elsewhere", self._elsewhere)
        return app

    async def _messages(self, request: web.Request) -> web.Response:
        """The payloads delivered to a device so far, oldest first."""
        token = request.match_info["token"]
        with self._lock:
            known = token in self._state.devices
            payloads = [r.payload for r in self._state.received if r.token == token]
        return web.json_response(payloads) if known else web.Response(status=404)

    async def _elsewhere(self, request: web.Request) -> web.Response:
        """Where a redirect points: reaching it means the sender followed one."""
        with self._lock:
            self._state.rejected.append(Rejected("elsewhere", "a redirect was followed"))
        return web.Response(status=201)


def _checked_headers(request: web.Request) -> dict[str, str]:
    """RFC 8030 and 8291's headers, as a push service insists on them."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    if headers.get("content-encoding") != "aes128gcm":
        raise Invalid(400, f"Content-Encoding {headers.get('content-encoding')!r}")
    if not headers.get("ttl", "").isdigit():
        raise Invalid(400, "no TTL")
    kept = ("ttl", "urgency", "topic", "content-encoding")
    return {k: headers[k] for k in kept if k in headers}
