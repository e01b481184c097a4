"""GET /api/health: public, no secrets; 503 when a dependency is down, or while the offline
models warm up (which the first call starts)."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request

from shared.adapters.health import check_health
from shared.bootstrap import warm_models
from shared.http.contract import HEALTH
from shared.http.edge import http_function

bp = func.Blueprint()

# Warming takes from seconds to a minute; asking again every few seconds finds the end soon.
WARMING_RETRY_AFTER_S = 3


@bp.route(route=HEALTH.route, methods=[HEALTH.method], auth_level=func.AuthLevel.ANONYMOUS)
@http_function
async def health(req: Request) -> JSONResponse:
    report = await check_health(warm_models())
    headers = {"Cache-Control": "no-store"}
    if report.status == "warming":
        headers["Retry-After"] = str(WARMING_RETRY_AFTER_S)
    return JSONResponse(
        report.model_dump(exclude_none=True),
        status_code=200 if report.ok else 503,
        headers=headers,
    )
