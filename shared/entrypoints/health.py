"""GET /api/health: public, no secrets; 503 when a dependency is down, or while the offline
models warm up (which the first call starts)."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request

from shared.bootstrap import Root
from shared.entrypoints.routes import http_route
from shared.http.contract import HEALTH

bp = func.Blueprint()

# Warming takes from seconds to a minute; asking again every few seconds finds the end soon.
WARMING_RETRY_AFTER_S = 3


@http_route(bp, HEALTH, traced=False)
async def health(req: Request, root: Root) -> JSONResponse:
    report = await root.health()
    headers = {"Cache-Control": "no-store"}
    if report.status == "warming":
        headers["Retry-After"] = str(WARMING_RETRY_AFTER_S)
    return JSONResponse(
        report.model_dump(exclude_none=True),
        status_code=200 if report.ok else 503,
        headers=headers,
    )
