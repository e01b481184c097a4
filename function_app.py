"""The Azure Functions app: registers the blueprints, nothing else."""

import azure.functions as func

from shared.entrypoints import capture, classify_worker, health

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
app.register_functions(health.bp)
app.register_functions(capture.bp)
app.register_functions(classify_worker.bp)
