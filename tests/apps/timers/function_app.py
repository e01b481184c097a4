"""A small app with timers, for the devhost's timer triggers and its admin endpoint; every
invocation is recorded."""

import json
import os
import time

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
CONN = "AzureWebJobsStorage"


def record(kind: str, **fields: object) -> None:
    line = json.dumps({"kind": kind, "at": time.time(), **fields})
    with open(os.environ["RECORD_FILE"], "a") as f:
        f.write(line + "\n")


# Every second: a sub-minute schedule, which the host does not monitor.
@app.timer_trigger(arg_name="timer", schedule="* * * * * *")
async def every_second(timer: func.TimerRequest) -> None:
    record("every_second", pid=os.getpid(), past_due=timer.past_due, status=timer.schedule_status)  # type: ignore[attr-defined]  # the bound TimerRequest has it


# At midnight on New Year's Day: monitored, so a host that was down then runs it on start.
@app.timer_trigger(arg_name="timer", schedule="0 0 0 1 Jan *")
@app.queue_output(arg_name="out", queue_name="yearly-ran", connection=CONN)
def yearly(timer: func.TimerRequest, out: func.Out[str]) -> None:
    record("yearly", past_due=timer.past_due, status=timer.schedule_status)  # type: ignore[attr-defined]  # the bound TimerRequest has it
    out.set("yearly ran")


# The schedule from an app setting, as the host resolves %NAME%; runs once as the host starts.
@app.timer_trigger(arg_name="timer", schedule="%STARTUP_SCHEDULE%", run_on_startup=True)
def on_startup(timer: func.TimerRequest) -> None:
    record("on_startup", pid=os.getpid(), past_due=timer.past_due)


@app.queue_trigger(arg_name="msg", queue_name="by-hand", connection=CONN)
@app.blob_output(arg_name="copy", path="handled/{QueueTrigger}.txt", connection=CONN)
def by_hand(msg: func.QueueMessage, copy: func.Out[str]) -> None:
    body = msg.get_body().decode()
    record("by_hand", body=body, dequeue_count=msg.dequeue_count)
    copy.set(body.upper())


# The Event Grid source is never scanned, and these tests run no Event Grid: only by hand.
@app.blob_trigger(
    arg_name="blob", path="by-hand-blobs/{name}", connection=CONN, source=func.BlobSource.EVENT_GRID
)
async def blob_by_hand(blob: func.InputStream) -> None:
    record("blob_by_hand", name=blob.name, content=blob.read().decode())


@app.route(route="ping", methods=["GET"])
async def ping(req: Request) -> JSONResponse:
    return JSONResponse({"pong": True})
