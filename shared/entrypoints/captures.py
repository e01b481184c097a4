"""One user's captures over HTTP: read, follow, pick a bucket, answer a question, list, delete."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from shared.agui import narrator
from shared.agui.events import speaks_interrupts
from shared.agui.input import parse_answer
from shared.bootstrap import adapters
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
from shared.http.edge import http_function
from shared.http.idempotency import idempotency_key
from shared.http.input import parse_json, parsed, read_body
from shared.http.prefer import preferred_wait_s
from shared.http.queries import parse_feed_query, parse_inbox_query
from shared.http.requests import BucketChoice, parse_plain_capture
from shared.http.sse import sse_response
from shared.services.after_write import shown
from shared.services.bucket_pick import pick_bucket
from shared.services.feed import open_feed
from shared.services.follow_up import answer_question, open_follow_up
from shared.services.inbox import delete_capture, get_capture, list_inbox
from shared.services.pipeline import capture_text_within
from shared.settings import get_settings
from shared.telemetry import traced

bp = func.Blueprint()

NO_STORE = {"Cache-Control": "no-store"}


@bp.route(
    route=GET_CAPTURE.route, methods=[GET_CAPTURE.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def capture_item(req: Request) -> Response:
    user_id = authenticate(req)
    item = await get_capture(user_id, req.path_params["id"], adapters().repo)
    return JSONResponse(item.to_json(), headers=NO_STORE)


@bp.route(
    route=DELETE_CAPTURE.route, methods=[DELETE_CAPTURE.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def capture_delete(req: Request) -> Response:
    user_id = authenticate(req)
    await delete_capture(user_id, req.path_params["id"], adapters())
    return Response(status_code=204)


@bp.route(
    route=CAPTURE_EVENTS.route, methods=[CAPTURE_EVENTS.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def capture_events(req: Request) -> Response:
    user_id = authenticate(req)
    query = parse_feed_query(dict(req.query_params))
    item = await get_capture(user_id, req.path_params["id"], adapters().repo)
    interrupts = speaks_interrupts(query.protocol_version)
    app = adapters()
    sightings = open_feed(item, app)
    return sse_response(narrator.feed_run(item, sightings, app.repo, interrupts=interrupts))


@bp.route(
    route=PICK_BUCKET.route, methods=[PICK_BUCKET.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def capture_bucket(req: Request) -> Response:
    settings = get_settings()
    user_id = authenticate(req)
    body = await read_body(req, settings.max_body_bytes)
    choice = await parsed(
        parse_json, body, req.headers.get("content-type"), BucketChoice, "{bucket}"
    )
    item = await pick_bucket(user_id, req.path_params["id"], choice.bucket, adapters())
    return JSONResponse(item.to_json(), headers=NO_STORE)


@bp.route(route=FOLLOW_UP.route, methods=[FOLLOW_UP.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def capture_follow_up(req: Request) -> Response:
    settings = get_settings()
    user_id = authenticate(req)
    body = await read_body(req, settings.max_text_body_bytes)
    content_type = req.headers.get("content-type")
    answer, conversation = await parsed(parse_answer, body, content_type, user_id)
    app = adapters()
    item = await open_follow_up(req.path_params["id"], answer, app.repo)
    progress = answer_question(item, answer, app)
    # A run like a text capture's, on the capture's own thread.
    return sse_response(
        narrator.capture_run(item.thread_id, answer.run_id, progress, conversation, app.repo)
    )


@bp.route(route=LIST_INBOX.route, methods=[LIST_INBOX.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def inbox(req: Request) -> Response:
    user_id = authenticate(req)
    query = parse_inbox_query(dict(req.query_params))  # one value each: the last one given
    page = await list_inbox(user_id, query, adapters().repo)
    return JSONResponse(page.to_json(), headers=NO_STORE)


@bp.route(
    route=PLAIN_CAPTURE.route, methods=[PLAIN_CAPTURE.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def capture_plain(req: Request) -> Response:
    """The door for clients without AG-UI: the capture once settled (201), or where to find
    it (202)."""
    settings = get_settings()
    user_id = authenticate(req)
    body = await read_body(req, settings.max_text_body_bytes)
    capture = await parsed(
        parse_plain_capture, body, req.headers.get("content-type"), user_id, idempotency_key(req)
    )
    wait_s = preferred_wait_s(req.headers.get("prefer"))
    app = adapters()
    item = await capture_text_within(capture, wait_s, app)
    headers = {
        **NO_STORE,
        "Location": f"/api/captures/{item.id}",
        "Preference-Applied": f"wait={wait_s}",
    }
    if not item.has_ended:
        return JSONResponse(item.to_json(), status_code=202, headers=headers)
    # The answer tells the outcome, as a live run does: no push to say it again.
    shown(item, app.repo)
    return JSONResponse(item.to_json(), status_code=201, headers=headers)
