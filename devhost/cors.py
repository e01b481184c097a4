"""CORS as `func start` applies it: `Host.CORS` and `Host.CORSCredentials` from
local.settings.json, overridden by `--cors` / `--cors-credentials`.

Core Tools and the host on Flex Consumption both build one ASP.NET Core CORS policy: the
configured origins, any header, any method, credentials if asked, and nothing else (no
exposed headers, no preflight max-age). Its middleware runs before routing, so:

- a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered 204 by the
  middleware itself, whatever the route; with the CORS headers only for an allowed origin;
- any other request from an allowed origin gets Access-Control-Allow-Origin (and -Credentials)
  on its answer, whoever wrote it (the function, or the host's own 404/405);
- a disallowed origin gets no CORS header from the host at all;
- `Vary: Origin` only when several origins are configured, as ASP.NET Core adds it;
- `*` alone allows any origin and is answered `*`; with credentials the host refuses to start.

Headers a browser must read from an answer (Location, Retry-After, ETag, Content-Disposition)
are exposed by the app itself (shared/http/edge.py), since the platform's CORS exposes none,
here or in Azure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ANY_ORIGIN = "*"


class CorsConfigError(ValueError):
    """A CORS configuration the real host would refuse (or silently misread)."""


@dataclass(frozen=True)
class CorsPolicy:
    origins: tuple[str, ...]
    credentials: bool = False

    def __post_init__(self) -> None:
        if ANY_ORIGIN in self.origins and len(self.origins) > 1:
            # ASP.NET Core takes `*` as a wildcard only alone; in a list it is a literal origin
            # no browser sends. Refused here rather than silently allowing fewer origins.
            raise CorsConfigError("CORS: '*' allows every origin and must stand alone")
        if self.any_origin and self.credentials:
            raise CorsConfigError(
                "CORS: '*' cannot go with CORSCredentials (the host refuses that policy too); "
                "name the origins instead"
            )

    @property
    def any_origin(self) -> bool:
        return self.origins == (ANY_ORIGIN,)

    def allows(self, origin: str) -> bool:
        # Configured origins are lower-cased as ASP.NET Core normalises them; the browser's
        # Origin header is compared as sent (browsers send scheme and host in lower case).
        return bool(origin) and (self.any_origin or origin in self.origins)

    @property
    def varies_by_origin(self) -> bool:
        # ASP.NET Core's rule: one configured origin (or `*`) answers every allowed caller alike.
        return len(self.origins) > 1

    def response_headers(self, origin: str) -> dict[str, str]:
        """What an allowed origin's answer gets (Vary aside, which joins the app's own)."""
        headers = {"Access-Control-Allow-Origin": ANY_ORIGIN if self.any_origin else origin}
        if self.credentials:
            headers["Access-Control-Allow-Credentials"] = "true"
        return headers

    def preflight_headers(self, origin: str, method: str, requested: list[str]) -> dict[str, str]:
        """Any method and any header: the policy echoes what the browser asks for."""
        headers = self.response_headers(origin)
        names = [h.strip() for value in requested for h in value.split(",") if h.strip()]
        if names:
            headers["Access-Control-Allow-Headers"] = ",".join(names)
        headers["Access-Control-Allow-Methods"] = method
        if self.varies_by_origin:
            headers["Vary"] = "Origin"
        return headers


def parse_origins(value: str) -> tuple[str, ...]:
    """A comma-separated list, as `--cors` takes it (spaces around entries forgiven)."""
    return tuple(o.strip().lower() for o in value.split(",") if o.strip())


def cors_policy(
    app_dir: Path, origins: str | None = None, credentials: bool | None = None
) -> CorsPolicy | None:
    """The policy from local.settings.json's Host section, the command line winning; None
    when no origin is configured (then the host has no CORS middleware: OPTIONS is a 405)."""
    host = _host_section(app_dir)
    if origins is None:
        origins = str(host.get("cors") or "")
    if credentials is None:
        credentials = _as_bool(host.get("corscredentials", False))
    allowed = parse_origins(origins)
    if not allowed:
        return None
    return CorsPolicy(allowed, credentials)


def _host_section(app_dir: Path) -> dict[str, object]:
    path = app_dir / "local.settings.json"
    if not path.exists():
        return {}
    host = json.loads(path.read_text()).get("Host") or {}
    # Core Tools reads these keys case-insensitively (Json.NET).
    return {str(k).lower(): v for k, v in host.items()}


def _as_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() == "true"


class CorsMiddleware:
    """ASGI middleware in front of the devhost's gateway, applying one CorsPolicy."""

    def __init__(self, app: ASGIApp, policy: CorsPolicy) -> None:
        self._app = app
        self._policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        request = Headers(scope=scope)
        origin = request.get("origin")
        if origin is None:
            await self._app(scope, receive, send)
            return
        allowed = self._policy.allows(origin)
        method = request.get("access-control-request-method")
        if scope["method"] == "OPTIONS" and method is not None:
            # The preflight never reaches a function: allowed or not, the middleware answers.
            headers = {}
            if allowed:
                requested = request.getlist("access-control-request-headers")
                headers = self._policy.preflight_headers(origin, method, requested)
            await Response(status_code=204, headers=headers)(scope, receive, send)
            return
        if not allowed:
            await self._app(scope, receive, send)
            return
        added = self._policy.response_headers(origin)

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                self._apply(MutableHeaders(scope=message), added)
            await send(message)

        await self._app(scope, receive, send_with_cors)

    def _apply(self, headers: MutableHeaders, added: dict[str, str]) -> None:
        for name, value in added.items():
            headers[name] = value
        if self._policy.varies_by_origin:
            headers.add_vary_header("Origin")
