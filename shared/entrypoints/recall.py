"""What was filed, given back over HTTP: a bucket's pages, the people named and one person's
items, search, editing a filed item, and the export."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response
from starlette.responses import StreamingResponse

from shared.bootstrap import Root
from shared.domain.documents import utcnow
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import (
    EDIT_CAPTURE,
    EXPORT,
    GET_PERSON,
    LIST_BUCKET,
    LIST_PEOPLE,
    RELATED,
    SEARCH,
)
from shared.http.input import read_body
from shared.http.queries import (
    parse_bucket_query,
    parse_person_query,
    parse_related_query,
    parse_search_query,
)
from shared.http.requests import parse_filed_patch
from shared.services.edit import edit_filed
from shared.services.export import export_filename, export_zip
from shared.services.recall import (
    bucket_named,
    get_person,
    list_bucket,
    list_people,
    related,
    search,
)

bp = func.Blueprint()

NO_STORE = {"Cache-Control": "no-store"}


@http_route(bp, LIST_BUCKET)
async def bucket_items(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    bucket = bucket_named(req.path_params["bucket"])
    query = parse_bucket_query(dict(req.query_params))
    page = await list_bucket(user_id, bucket, query, root.adapters.filed)
    return JSONResponse(page.to_json(), headers=NO_STORE)


@http_route(bp, LIST_PEOPLE)
async def people_named(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    found = await list_people(user_id, root.adapters.filed)
    return JSONResponse(found.to_json(), headers=NO_STORE)


@http_route(bp, GET_PERSON)
async def person_items(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    query = parse_person_query(dict(req.query_params))
    page = await get_person(user_id, req.path_params["name"], query, root.adapters.filed)
    return JSONResponse(page.to_json(), headers=NO_STORE)


@http_route(bp, SEARCH)
async def search_captures(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    query = parse_search_query(dict(req.query_params))
    adapters = root.adapters
    results = await search(user_id, query, adapters.search, adapters.embedder)
    return JSONResponse(results.to_json(), headers=NO_STORE)


@http_route(bp, RELATED)
async def related_captures(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    query = parse_related_query(dict(req.query_params))
    found = await related(user_id, req.path_params["id"], query, root.adapters)
    return JSONResponse(found.to_json(), headers=NO_STORE)


@http_route(bp, EDIT_CAPTURE)
async def capture_edit(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    body = await read_body(req, root.settings.max_body_bytes)
    patch = parse_filed_patch(body, req.headers.get("content-type"))
    view = await edit_filed(
        user_id, req.path_params["id"], patch, req.headers.get("if-match"), root.adapters
    )
    return JSONResponse(view.to_json(), headers={**NO_STORE, "ETag": view.etag})


@http_route(bp, EXPORT)
async def export(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    now = utcnow()
    return StreamingResponse(
        export_zip(user_id, now, root.adapters.repo, root.adapters.filed),
        media_type="application/zip",
        headers={
            **NO_STORE,
            "Content-Disposition": f'attachment; filename="{export_filename(now.date())}"',
        },
    )
