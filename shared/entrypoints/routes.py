"""An HTTP function registered once for all: its method and route from the contract
(shared/http/contract.py), the auth level the app sets for every route (function_app.py), the
edge's problem+json and headers (shared/http/edge.py), its span (shared/telemetry.py), and the
composition root handed to it once per invocation."""

from collections.abc import Awaitable, Callable

import azure.functions as func
from azurefunctions.extensions.http.fastapi import Request, Response

from shared import telemetry
from shared.bootstrap import Root, root
from shared.http.contract import Route
from shared.http.edge import http_function

Handler = Callable[[Request, Root], Awaitable[Response]]


def http_route(
    bp: func.Blueprint, route: Route, *, traced: bool = True
) -> Callable[[Handler], Handler]:
    """Register `handler(req, root)` as the function for `route` (a span for it unless not
    `traced`: the health probe and the OpenAPI document)."""

    def register(handler: Handler) -> Handler:
        async def function(req: Request) -> Response:
            return await handler(req, root())

        # The host names the function after this, and binds its one parameter, `req`, to the
        # trigger: the root is ours to pass, not a binding.
        function.__name__ = function.__qualname__ = handler.__name__
        function.__module__, function.__doc__ = handler.__module__, handler.__doc__
        answered = http_function(function)
        bp.route(route=route.route, methods=[route.method])(
            telemetry.traced(answered) if traced else answered
        )
        return handler

    return register
