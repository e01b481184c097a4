"""HTTP triggers: routePrefix, route templates, methods, and responses streamed as yielded;
and, outside the routePrefix as in the host, the extensions' `/runtime/webhooks/<name>` and
the admin endpoint `/admin/functions/<name>`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .invoke import Invoker
from .loader import LoadedFunction
from .routes import RouteTemplate, compile_route

log = logging.getLogger("devhost.http")

WEBHOOKS_PREFIX = "/runtime/webhooks/"
ADMIN_PREFIX = "/admin/functions/"


@dataclass(frozen=True)
class HttpRoute:
    function: LoadedFunction
    template: RouteTemplate
    methods: frozenset[str]


def build_routes(functions: list[LoadedFunction]) -> list[HttpRoute]:
    routes = []
    for fn in functions:
        if fn.trigger.type != "httpTrigger":
            continue
        raw = fn.trigger.raw
        methods = frozenset(m.upper() for m in raw.get("methods") or ()) or frozenset(
            {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}
        )
        routes.append(HttpRoute(fn, compile_route(raw.get("route") or fn.name), methods))
    # Literal segments win over parameters, as in ASP.NET's route precedence.
    routes.sort(key=lambda r: r.template.template.count("{"))
    return routes


class HttpGateway:
    """The ASGI app uvicorn serves; everything else the host does runs beside it."""

    def __init__(
        self,
        routes: list[HttpRoute],
        route_prefix: str,
        invoker: Invoker,
        webhooks: Mapping[str, ASGIApp] | None = None,
        admin: ASGIApp | None = None,
    ) -> None:
        self._routes = routes
        self._prefix = f"/{route_prefix}" if route_prefix else ""
        self._invoker = invoker
        self._webhooks = {name.lower(): app for name, app in (webhooks or {}).items()}
        self._admin = admin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path.lower().startswith(WEBHOOKS_PREFIX):
            # /runtime/webhooks/{extension}/{*extra}; an extension without one is 404.
            extension = path[len(WEBHOOKS_PREFIX) :].split("/", 1)[0].lower()
            webhook = self._webhooks.get(extension)
            await (webhook or Response(status_code=404))(scope, receive, send)
            return
        if path.lower().startswith(ADMIN_PREFIX):
            await (self._admin or Response(status_code=404))(scope, receive, send)
            return
        if self._prefix and not (path == self._prefix or path.startswith(self._prefix + "/")):
            await Response(status_code=404)(scope, receive, send)
            return
        relative = path[len(self._prefix) :]
        allowed: set[str] = set()
        for route in self._routes:
            params = route.template.match(relative)
            if params is None:
                continue
            if scope["method"] not in route.methods:
                allowed |= route.methods
                continue
            await self._invoke(route, params, scope, receive, send)
            return
        if allowed:
            headers = {"Allow": ", ".join(sorted(allowed))}
            await Response(status_code=405, headers=headers)(scope, receive, send)
        else:
            await Response(status_code=404)(scope, receive, send)

    async def _invoke(
        self, route: HttpRoute, params: dict[str, str], scope: Scope, receive: Receive, send: Send
    ) -> None:
        scope = {**scope, "path_params": params}
        request = Request(scope, receive)
        try:
            response = await self._invoker.call(route.function, request, params)
        except Exception:
            log.exception("function %s failed", route.function.name)
            response = Response(status_code=500)
        # A starlette Response is an ASGI app: StreamingResponse sends each chunk as yielded.
        await response(scope, receive, send)
