"""GET /api/health: public, no secrets; 503 when a dependency is down."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request

from shared.adapters.health import check_health
from shared.http.contract import HEALTH
from shared.http.edge import http_function

bp = func.Blueprint()


@bp.route(route=HEALTH.route, methods=[HEALTH.method], auth_level=func.AuthLevel.ANONYMOUS)
@http_function
async def health(req: Request) -> JSONResponse:
    report = await check_health()
    return JSONResponse(
        report.model_dump(exclude_none=True),
        status_code=200 if report.ok else 503,
        headers={"Cache-Control": "no-store"},
    )
