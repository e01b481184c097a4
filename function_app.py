"""The Azure Functions app: registers the blueprints, nothing else."""

import azure.functions as func

from shared.entrypoints import (
    agui_capture,
    ask,
    backfill,
    capture_resources,
    classify_worker,
    digest,
    health,
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
    recall,
    ask,
    voice_trigger,
    classify_worker,
    poison,
    push,
    push_worker,
    digest,
    backfill,
):
    app.register_functions(entrypoint.bp)
