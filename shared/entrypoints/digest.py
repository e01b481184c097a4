"""The tap on the shoulder: the preferences, the day's digest and the week's review over HTTP,
the timer that finds whose digest time has passed, and the worker that sends each digest."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response

from shared import bootstrap
from shared.bootstrap import Root
from shared.domain.digest import DigestJob
from shared.domain.documents import utcnow
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import GET_DIGEST, GET_PREFERENCES, GET_REVIEW, PUT_PREFERENCES
from shared.http.input import read_body
from shared.http.queries import parse_digest_query, parse_review_query
from shared.http.requests import parse_preferences
from shared.services.digest import (
    PreferencesView,
    day_digest,
    enqueue_due_digests,
    get_preferences,
    put_preferences,
    send_digest,
    week_of,
    week_review,
)
from shared.settings import DIGEST_QUEUE, DIGEST_SCHEDULE
from shared.telemetry import traced

bp = func.Blueprint()

NO_STORE = {"Cache-Control": "no-store"}


@http_route(bp, GET_PREFERENCES)
async def preferences_get(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    prefs = await get_preferences(user_id, root.digest.preferences)
    return JSONResponse(PreferencesView.of(prefs).to_json(), headers=NO_STORE)


@http_route(bp, PUT_PREFERENCES)
async def preferences_put(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    body = await read_body(req, root.settings.max_body_bytes)
    request = parse_preferences(body, req.headers.get("content-type"))
    prefs = await put_preferences(user_id, request, utcnow(), root.digest.preferences)
    return JSONResponse(PreferencesView.of(prefs).to_json(), headers=NO_STORE)


@http_route(bp, GET_DIGEST)
async def digest_get(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    query = parse_digest_query(dict(req.query_params))
    prefs = await get_preferences(user_id, root.digest.preferences)
    day = query.date or prefs.today(utcnow())
    found = await day_digest(user_id, day, prefs, root.adapters.repo, root.adapters.filed)
    return JSONResponse(found.to_json(), headers=NO_STORE)


@http_route(bp, GET_REVIEW)
async def review_get(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    query = parse_review_query(dict(req.query_params))
    prefs = await get_preferences(user_id, root.digest.preferences)
    now = utcnow()
    week = query.week or week_of(prefs.today(now))
    found = await week_review(
        user_id, week, prefs, now, root.adapters.repo, root.adapters.filed, root.digest
    )
    return JSONResponse(found.to_json(), headers=NO_STORE)


@bp.timer_trigger(arg_name="timer", schedule=DIGEST_SCHEDULE)
@traced
async def digest_timer(timer: func.TimerRequest) -> None:
    # The host's clock: a run that is late (past_due) still sends each user the day whose
    # digest time passed last, and only once.
    await enqueue_due_digests(utcnow(), bootstrap.root().digest)


@bp.queue_trigger(arg_name="msg", queue_name=DIGEST_QUEUE, connection="AzureWebJobsStorage")
@traced
async def digest_worker(msg: func.QueueMessage) -> None:
    # A malformed job raises: the host retries it, then keeps it in digests-poison.
    job = DigestJob.model_validate_json(msg.get_body())
    built = bootstrap.root()
    await send_digest(
        job, utcnow(), built.adapters.repo, built.adapters.filed, built.push, built.digest
    )
