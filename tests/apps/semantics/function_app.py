"""A small app that exercises the devhost's semantics; every invocation is recorded."""

import asyncio
import json
import os
import time
from pathlib import Path

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, StreamingResponse

app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
CONN = "AzureWebJobsStorage"


def record(kind: str, **fields: object) -> None:
    line = json.dumps({"kind": kind, "at": time.time(), **fields})
    with open(os.environ["RECORD_FILE"], "a") as f:
        f.write(line + "\n")


@app.route(route="stream/{token}", methods=["GET"])
async def stream(req: Request) -> StreamingResponse:
    release = Path(os.environ["RECORD_FILE"]).with_name(f"release-{req.path_params['token']}")

    async def body():
        yield b"first\n"
        # Hold the handler open until the test has seen the first chunk.
        for _ in range(200):
            if release.exists():
                break
            await asyncio.sleep(0.05)
        record("stream-done", released=release.exists())
        yield b"second\n"

    return StreamingResponse(body(), media_type="text/plain")


@app.route(route="items/{id}", methods=["GET"])
async def get_item(req: Request) -> JSONResponse:
    return JSONResponse({"id": req.path_params["id"], "q": req.query_params.get("q")})


@app.route(route="things/{id?}", methods=["GET", "DELETE"])
async def things(req: Request) -> JSONResponse:
    return JSONResponse({"id": req.path_params.get("id"), "method": req.method})


@app.route(route="enqueue/{text}", methods=["POST"])
@app.queue_output(arg_name="out", queue_name="echoed", connection=CONN)
async def enqueue(req: Request, out: func.Out[str]) -> JSONResponse:
    out.set(req.path_params["text"])
    return JSONResponse({"queued": True}, status_code=202)


@app.queue_trigger(arg_name="msg", queue_name="echoed", connection=CONN)
async def echoed(msg: func.QueueMessage) -> None:
    record("echoed", body=msg.get_body().decode(), dequeue_count=msg.dequeue_count)


@app.queue_trigger(arg_name="msg", queue_name="work", connection=CONN)
@app.queue_output(arg_name="out", queue_name="work-done", connection=CONN)
def work(msg: func.QueueMessage, out: func.Out[str]) -> None:
    body = msg.get_body().decode()
    record(
        "work",
        body=body,
        id=msg.id,
        dequeue_count=msg.dequeue_count,
        inserted=msg.insertion_time.isoformat() if msg.insertion_time else None,
    )
    if body.startswith("fail"):
        raise RuntimeError("asked to fail")
    out.set(f"done:{body}")


@app.blob_trigger(arg_name="blob", path="uploads/{folder}/{name}", connection=CONN)
async def uploaded(blob: func.InputStream) -> None:
    data = blob.read()
    record(
        "blob",
        name=blob.name,
        length=blob.length,
        size=len(data),
        etag=(blob.blob_properties or {}).get("ETag"),  # type: ignore[attr-defined]  # bound class has it
        content=data.decode(errors="replace"),
    )
    if blob.name.startswith("uploads/fail/"):  # type: ignore[union-attr]  # a trigger's blob is named
        raise RuntimeError("asked to fail")


@app.blob_trigger(
    arg_name="blob",
    path="grid/{name}",
    connection=CONN,
    source=func.BlobSource.EVENT_GRID,
)
@app.blob_output(arg_name="copy", path="grid-copies/{name}", connection=CONN)
async def grid(blob: func.InputStream, copy: func.Out[bytes]) -> None:
    data = blob.read()
    record("grid", name=blob.name)
    copy.set(data.upper())
