"""Web Push subscriptions over HTTP: the server's key (public), and the caller's devices."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from shared.bootstrap import Root
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import PUSH_KEY, SUBSCRIBE_PUSH, UNSUBSCRIBE_PUSH
from shared.http.input import read_body
from shared.http.requests import parse_subscription_request
from shared.services.subscriptions import SubscriptionView, push_key, subscribe, unsubscribe

bp = func.Blueprint()


@http_route(bp, PUSH_KEY)
async def push_public_key(req: Request, root: Root) -> Response:
    key = await push_key(root.push)
    # Public, and the same for every caller until the key is rotated (then clients subscribe
    # again with the new one).
    return JSONResponse(key.to_json(), headers={"Cache-Control": "max-age=300"})


@http_route(bp, SUBSCRIBE_PUSH)
async def push_subscribe(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    body = await read_body(req, root.settings.max_body_bytes)
    request = parse_subscription_request(body, req.headers.get("content-type"))
    subscription = await subscribe(user_id, request, root.push)
    return JSONResponse(
        SubscriptionView.of(subscription).to_json(),
        status_code=201,
        headers={
            "Location": f"/api/push/subscriptions/{subscription.id}",
            "Cache-Control": "no-store",
        },
    )


@http_route(bp, UNSUBSCRIBE_PUSH)
async def push_unsubscribe(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    await unsubscribe(user_id, req.path_params["id"], root.push.subscriptions)
    return Response(status_code=204)
