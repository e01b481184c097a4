"""Web Push subscriptions over HTTP: the server's key (public), and the caller's devices."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from shared.bootstrap import push_adapters
from shared.http.auth import authenticate
from shared.http.contract import PUSH_KEY, SUBSCRIBE_PUSH, UNSUBSCRIBE_PUSH
from shared.http.edge import http_function
from shared.http.input import read_body
from shared.http.requests import parse_subscription_request
from shared.services.subscriptions import SubscriptionView, push_key, subscribe, unsubscribe
from shared.settings import get_settings
from shared.telemetry import traced

bp = func.Blueprint()


@bp.route(route=PUSH_KEY.route, methods=[PUSH_KEY.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def push_public_key(req: Request) -> Response:
    key = await push_key(push_adapters())
    # Public, and the same for every caller until the key is rotated (then clients subscribe
    # again with the new one).
    return JSONResponse(key.to_json(), headers={"Cache-Control": "max-age=300"})


@bp.route(
    route=SUBSCRIBE_PUSH.route, methods=[SUBSCRIBE_PUSH.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def push_subscribe(req: Request) -> Response:
    user_id = authenticate(req)
    body = await read_body(req, get_settings().max_body_bytes)
    request = parse_subscription_request(body, req.headers.get("content-type"))
    subscription = await subscribe(user_id, request, push_adapters())
    return JSONResponse(
        SubscriptionView.of(subscription).to_json(),
        status_code=201,
        headers={
            "Location": f"/api/push/subscriptions/{subscription.id}",
            "Cache-Control": "no-store",
        },
    )


@bp.route(
    route=UNSUBSCRIBE_PUSH.route,
    methods=[UNSUBSCRIBE_PUSH.method],
    auth_level=func.AuthLevel.ANONYMOUS,
)
@traced
@http_function
async def push_unsubscribe(req: Request) -> Response:
    user_id = authenticate(req)
    await unsubscribe(user_id, req.path_params["id"], push_adapters().subscriptions)
    return Response(status_code=204)
