import azure.functions as func

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


@app.route(route="plain")
def plain(req: func.HttpRequest) -> func.HttpResponse:  # not the FastAPI streaming types
    return func.HttpResponse("hi")
