"""/api/ask: a question answered from the caller's captures, as an AG-UI run (POST) or as
plain JSON (GET)."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from shared.agui import narrator
from shared.agui.input import parse_ask_input
from shared.bootstrap import Root
from shared.domain.documents import utcnow
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import ASK, ASK_PLAIN
from shared.http.input import parsed, read_body
from shared.http.queries import parse_ask_query
from shared.http.sse import sse_response
from shared.services.ask import AskLimits, ask, ask_on_thread

bp = func.Blueprint()


@http_route(bp, ASK)
async def ask_run(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    body = await read_body(req, root.settings.max_text_body_bytes)
    run = await parsed(parse_ask_input, body, req.headers.get("content-type"))
    progress = ask(
        user_id, run.question, utcnow(), AskLimits(), root.adapters, model=root.ask_model
    )
    return sse_response(narrator.ask_run(run.thread_id, run.run_id, progress))


@http_route(bp, ASK_PLAIN)
async def ask_plain(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    asked = parse_ask_query(dict(req.query_params))
    done = await ask_on_thread(
        user_id,
        asked,
        utcnow(),
        AskLimits(),
        root.adapters,
        root.ask_threads,
        model=root.ask_model,
    )
    return JSONResponse(done.answer.to_json(), headers={"Cache-Control": "no-store"})
