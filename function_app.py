"""The Azure Functions app: registers the blueprints, nothing else."""

import azure.functions as func

from shared.entrypoints import (
    agui_capture,
    ask,
    audio,
    backfill,
    capture_resources,
    classify_worker,
    digest,
    health,
    mcp_server,
    openapi,
    poison,
    push,
    push_worker,
    recall,
    voice,
    voice_trigger,
)

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
for entrypoint in (
    health,
    openapi,
    agui_capture,
    voice,
    capture_resources,
    audio,
    recall,
    ask,
    voice_trigger,
    classify_worker,
    poison,
    push,
    push_worker,
    digest,
    mcp_server,
    backfill,
):
    app.register_functions(entrypoint.bp)
