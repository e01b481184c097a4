import azure.functions as func

app = func.FunctionApp()


@app.queue_trigger(arg_name="msg", queue_name="q", connection="AzureWebJobsStorage")
def handler(message: func.QueueMessage) -> None:  # parameter name differs from the binding
    pass
