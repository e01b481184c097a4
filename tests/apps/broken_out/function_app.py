import azure.functions as func

app = func.FunctionApp()


@app.queue_trigger(arg_name="msg", queue_name="q", connection="AzureWebJobsStorage")
@app.queue_output(arg_name="out", queue_name="q2", connection="AzureWebJobsStorage")
def handler(msg: func.QueueMessage, out: str) -> None:  # an output must be func.Out[...]
    pass
