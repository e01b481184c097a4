"""What was filed, given back over HTTP: a bucket's pages, the people named and one person's
items, search, editing a filed item, and the export."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response
from starlette.responses import StreamingResponse

from shared.bootstrap import adapters
from shared.domain.documents import utcnow
from shared.http.auth import authenticate
from shared.http.contract import (
    EDIT_CAPTURE,
    EXPORT,
    GET_PERSON,
    LIST_BUCKET,
    LIST_PEOPLE,
    SEARCH,
)
from shared.http.edge import http_function
from shared.http.input import read_body
from shared.http.queries import parse_bucket_query, parse_person_query, parse_search_query
from shared.http.requests import parse_filed_patch
from shared.services.edit import edit_filed
from shared.services.export import export_filename, export_zip
from shared.services.recall import bucket_named, get_person, list_bucket, list_people, search
from shared.settings import get_settings
from shared.telemetry import traced

bp = func.Blueprint()

NO_STORE = {"Cache-Control": "no-store"}


@bp.route(
    route=LIST_BUCKET.route, methods=[LIST_BUCKET.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def bucket_items(req: Request) -> Response:
    user_id = authenticate(req)
    bucket = bucket_named(req.path_params["bucket"])
    query = parse_bucket_query(dict(req.query_params))
    page = await list_bucket(user_id, bucket, query, adapters().filed)
    return JSONResponse(page.to_json(), headers=NO_STORE)


@bp.route(
    route=LIST_PEOPLE.route, methods=[LIST_PEOPLE.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def people_named(req: Request) -> Response:
    user_id = authenticate(req)
    found = await list_people(user_id, adapters().filed)
    return JSONResponse(found.to_json(), headers=NO_STORE)


@bp.route(route=GET_PERSON.route, methods=[GET_PERSON.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def person_items(req: Request) -> Response:
    user_id = authenticate(req)
    query = parse_person_query(dict(req.query_params))
    page = await get_person(user_id, req.path_params["name"], query, adapters().filed)
    return JSONResponse(page.to_json(), headers=NO_STORE)


@bp.route(route=SEARCH.route, methods=[SEARCH.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def search_captures(req: Request) -> Response:
    user_id = authenticate(req)
    query = parse_search_query(dict(req.query_params))
    results = await search(user_id, query, adapters().search)
    return JSONResponse(results.to_json(), headers=NO_STORE)


@bp.route(
    route=EDIT_CAPTURE.route, methods=[EDIT_CAPTURE.method], auth_level=func.AuthLevel.ANONYMOUS
)
@traced
@http_function
async def capture_edit(req: Request) -> Response:
    user_id = authenticate(req)
    body = await read_body(req, get_settings().max_body_bytes)
    patch = parse_filed_patch(body, req.headers.get("content-type"))
    view = await edit_filed(
        user_id, req.path_params["id"], patch, req.headers.get("if-match"), adapters()
    )
    return JSONResponse(view.to_json(), headers={**NO_STORE, "ETag": view.etag})


@bp.route(route=EXPORT.route, methods=[EXPORT.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def export(req: Request) -> Response:
    user_id = authenticate(req)
    now = utcnow()
    return StreamingResponse(
        export_zip(user_id, now, adapters().repo, adapters().filed),
        media_type="application/zip",
        headers={
            **NO_STORE,
            "Content-Disposition": f'attachment; filename="{export_filename(now.date())}"',
        },
    )
