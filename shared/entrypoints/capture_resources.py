"""One user's captures over HTTP: read, follow, pick a bucket, answer a question, list, delete."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from shared.agui import narrator
from shared.agui.events import speaks_interrupts
from shared.agui.input import parse_answer
from shared.bootstrap import Root
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import (
    CAPTURE_EVENTS,
    DELETE_CAPTURE,
    FOLLOW_UP,
    GET_CAPTURE,
    LIST_INBOX,
    PICK_BUCKET,
    PLAIN_CAPTURE,
)
from shared.http.idempotency import idempotency_key
from shared.http.input import parse_json, parsed, read_body
from shared.http.prefer import preferred_wait_s
from shared.http.queries import parse_feed_query, parse_inbox_query
from shared.http.requests import BucketChoice, parse_plain_capture
from shared.http.sse import sse_response
from shared.services.bucket_pick import pick_bucket
from shared.services.feed import open_feed
from shared.services.follow_up import answer_question, open_follow_up
from shared.services.inbox import delete_capture, get_capture, list_inbox
from shared.services.pipeline import capture_text_within

bp = func.Blueprint()

NO_STORE = {"Cache-Control": "no-store"}


@http_route(bp, GET_CAPTURE)
async def capture_item(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    item = await get_capture(user_id, req.path_params["id"], root.adapters.repo)
    return JSONResponse(item.to_json(), headers=NO_STORE)


@http_route(bp, DELETE_CAPTURE)
async def capture_delete(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    await delete_capture(user_id, req.path_params["id"], root.adapters)
    return Response(status_code=204)


@http_route(bp, CAPTURE_EVENTS)
async def capture_events(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    query = parse_feed_query(dict(req.query_params))
    app = root.adapters
    item = await get_capture(user_id, req.path_params["id"], app.repo)
    interrupts = speaks_interrupts(query.protocol_version)
    stages = open_feed(item, app)
    return sse_response(
        narrator.feed_run(item, stages, app.outbox.delivered, interrupts=interrupts)
    )


@http_route(bp, PICK_BUCKET)
async def capture_bucket(req: Request, root: Root) -> Response:
    settings = root.settings
    user_id = authenticate(req)
    body = await read_body(req, settings.max_body_bytes)
    choice = await parsed(
        parse_json, body, req.headers.get("content-type"), BucketChoice, "{bucket}"
    )
    item = await pick_bucket(user_id, req.path_params["id"], choice.bucket, root.adapters)
    return JSONResponse(item.to_json(), headers=NO_STORE)


@http_route(bp, FOLLOW_UP)
async def capture_follow_up(req: Request, root: Root) -> Response:
    settings = root.settings
    user_id = authenticate(req)
    body = await read_body(req, settings.max_text_body_bytes)
    content_type = req.headers.get("content-type")
    answer, conversation = await parsed(parse_answer, body, content_type, user_id)
    app = root.adapters
    item = await open_follow_up(req.path_params["id"], answer, app.repo)
    progress = answer_question(item, answer, app)
    # A run like a text capture's, on the capture's own thread.
    return sse_response(
        narrator.capture_run(
            item.thread_id, answer.run_id, progress, conversation, app.outbox.delivered
        )
    )


@http_route(bp, LIST_INBOX)
async def inbox(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    query = parse_inbox_query(dict(req.query_params))  # one value each: the last one given
    page = await list_inbox(user_id, query, root.adapters.repo)
    return JSONResponse(page.to_json(), headers=NO_STORE)


@http_route(bp, PLAIN_CAPTURE)
async def capture_plain(req: Request, root: Root) -> Response:
    """The door for clients without AG-UI: the capture once settled (201), or where to find
    it (202)."""
    settings = root.settings
    user_id = authenticate(req)
    body = await read_body(req, settings.max_text_body_bytes)
    capture = await parsed(
        parse_plain_capture, body, req.headers.get("content-type"), user_id, idempotency_key(req)
    )
    wait_s = preferred_wait_s(req.headers.get("prefer"))
    app = root.adapters
    item = await capture_text_within(capture, wait_s, app)
    headers = {
        **NO_STORE,
        "Location": f"/api/captures/{item.id}",
        "Preference-Applied": f"wait={wait_s}",
    }
    if not item.has_ended:
        return JSONResponse(item.to_json(), status_code=202, headers=headers)
    # The answer tells the outcome, as a live run does: no push to say it again.
    app.outbox.delivered(item)
    return JSONResponse(item.to_json(), status_code=201, headers=headers)
