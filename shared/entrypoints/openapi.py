"""GET /api/openapi.json: public, the OpenAPI 3.1 description of the HTTP API."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import Request, Response

from shared.http.contract import OPENAPI
from shared.http.edge import http_function

bp = func.Blueprint()


@bp.route(route=OPENAPI.route, methods=[OPENAPI.method], auth_level=func.AuthLevel.ANONYMOUS)
@http_function
async def openapi(req: Request) -> Response:
    # Imported on first call: the document pulls in every model, which cold start doesn't need.
    from shared.http.openapi import openapi_json

    return Response(
        openapi_json(), media_type="application/json", headers={"Cache-Control": "max-age=300"}
    )
