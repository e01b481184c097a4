"""Voice capture over HTTP: an upload URL for the phone, or the upload in one request."""

from datetime import timedelta

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from shared.agui import narrator
from shared.agui.events import speaks_interrupts
from shared.bootstrap import Root
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import START_VOICE_NOTE, VOICE_CAPTURE, VOICE_FILE
from shared.http.idempotency import idempotency_key
from shared.http.input import check_declared_length, parsed, read_body
from shared.http.multipart import open_file_field
from shared.http.queries import parse_feed_query
from shared.http.requests import new_voice_capture_for_file, parse_voice_note_request
from shared.http.sse import sse_response
from shared.services.feed import FeedSlot, open_feed
from shared.services.voice import start_voice_note, upload_voice_note

bp = func.Blueprint()

# Room for the multipart boundaries and part headers around the audio itself.
_MULTIPART_OVERHEAD = 64 * 1024


@http_route(bp, START_VOICE_NOTE)
async def voice_notes(req: Request, root: Root) -> Response:
    settings = root.settings
    user_id = authenticate(req)
    body = await read_body(req, settings.max_body_bytes)
    new = await parsed(
        parse_voice_note_request,
        body,
        req.headers.get("content-type"),
        user_id,
        idempotency_key(req),
    )
    ttl = timedelta(seconds=settings.upload_url_ttl_s)
    upload = await start_voice_note(new, ttl, root.adapters)
    return JSONResponse(
        upload.to_json(),
        status_code=201,
        headers={"Location": f"/api/captures/{upload.capture_id}", "Cache-Control": "no-store"},
    )


@http_route(bp, VOICE_CAPTURE)
async def voice_capture(req: Request, root: Root) -> Response:
    settings = root.settings
    user_id = authenticate(req)
    query = parse_feed_query(dict(req.query_params))
    check_declared_length(req, settings.max_voice_bytes + _MULTIPART_OVERHEAD)
    part = await open_file_field(req.stream(), req.headers.get("content-type"), VOICE_FILE.field)
    new = new_voice_capture_for_file(part, user_id, idempotency_key(req))
    # The feed's slot first: a note that was accepted must not be answered with a 429.
    app = root.adapters
    slot = FeedSlot(user_id, app.policy)
    try:
        item = await upload_voice_note(new, part.chunks, settings.max_voice_bytes, app)
    except BaseException:
        slot.release()
        raise
    interrupts = speaks_interrupts(query.protocol_version)
    stages = open_feed(item, app, slot=slot)
    return sse_response(
        narrator.feed_run(item, stages, app.outbox.delivered, interrupts=interrupts)
    )
