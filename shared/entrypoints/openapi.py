"""GET /api/openapi.json: public, the OpenAPI 3.1 description of the HTTP API."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import Request, Response

from shared.bootstrap import Root
from shared.entrypoints.routes import http_route
from shared.http.contract import OPENAPI

bp = func.Blueprint()


@http_route(bp, OPENAPI, traced=False)
async def openapi(req: Request, root: Root) -> Response:
    # Imported on first call: the document pulls in every model, which cold start doesn't need.
    from shared.http.openapi import openapi_json

    return Response(
        openapi_json(), media_type="application/json", headers={"Cache-Control": "max-age=300"}
    )
