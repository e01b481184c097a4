"""POST /api/capture: a text capture, or the answers that resume an interrupted thread,
answered as a streamed AG-UI run."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import Request, Response

from shared.bootstrap import adapters
from shared.http.auth import authenticate
from shared.http.contract import CAPTURE
from shared.http.edge import http_function
from shared.http.idempotency import idempotency_key
from shared.http.input import read_body
from shared.http.requests import parse_capture_input
from shared.http.sse import sse_response
from shared.services.resume import ResumeRequest, resume_run
from shared.services.runs import text_capture_run
from shared.settings import get_settings
from shared.telemetry import traced

bp = func.Blueprint()


@bp.route(route=CAPTURE.route, methods=[CAPTURE.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def capture(req: Request) -> Response:
    settings = get_settings()
    user_id = authenticate(req)
    body = await read_body(req, settings.max_body_bytes)
    run = parse_capture_input(body, req.headers.get("content-type"), user_id, idempotency_key(req))
    if isinstance(run, ResumeRequest):
        return sse_response(resume_run(run, adapters()))
    return sse_response(text_capture_run(run, adapters()))
