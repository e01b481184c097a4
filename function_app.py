"""The Azure Functions app: registers the blueprints, nothing else."""

import azure.functions as func

from shared.entrypoints import (
    agui_capture,
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
app.register_functions(health.bp)
app.register_functions(openapi.bp)
app.register_functions(agui_capture.bp)
app.register_functions(voice.bp)
app.register_functions(capture_resources.bp)
app.register_functions(recall.bp)
app.register_functions(voice_trigger.bp)
app.register_functions(classify_worker.bp)
app.register_functions(poison.bp)
app.register_functions(push.bp)
app.register_functions(push_worker.bp)
app.register_functions(digest.bp)
