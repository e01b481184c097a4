"""GET /api/captures/{id} and its events feed: one capture as JSON, or as an AG-UI run."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from ..agui import sse_response
from ..auth import authenticate
from ..feed import follow_capture
from ..inbox import get_capture
from ..problems import Problem, storage_unavailable
from ..repository import StorageUnavailable
from ..settings import get_settings
from ..wiring import adapters

bp = func.Blueprint()


@bp.route(route="captures/{id}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
async def capture_item(req: Request) -> Response:
    try:
        user_id = authenticate(req)
        item = await get_capture(user_id, req.path_params["id"], adapters().repo)
    except Problem as problem:
        return problem.response()
    except StorageUnavailable:
        return storage_unavailable().response()
    return JSONResponse(item.to_json(), headers={"Cache-Control": "no-store"})


@bp.route(route="captures/{id}/events", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
async def capture_events(req: Request) -> Response:
    settings = get_settings()
    try:
        user_id = authenticate(req)
        item = await get_capture(user_id, req.path_params["id"], adapters().repo)
    except Problem as problem:
        return problem.response()
    except StorageUnavailable:
        return storage_unavailable().response()
    run = follow_capture(
        item,
        adapters().repo,
        poll_s=settings.events_poll_s,
        timeout_s=settings.events_timeout_s,
    )
    return sse_response(run, settings.keepalive_s)
