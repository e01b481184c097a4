"""A voice note's recording over HTTP: played back (a byte range at a time), deleted alone, and
transcribed again; the queue worker that transcribes again, and the daily retention timer."""

import azure.functions as func
from azurefunctions.extensions.http.fastapi import JSONResponse, Request, Response
from starlette.responses import StreamingResponse

from shared import bootstrap
from shared.bootstrap import Root
from shared.domain.documents import utcnow
from shared.domain.errors import NotFound
from shared.domain.ids import is_capture_id
from shared.domain.messages import TranscribeJob
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import (
    DELETE_AUDIO,
    GET_AUDIO,
    SPOKEN_ANSWER,
    TRANSCRIBE_AGAIN,
    VOICE_FILE,
)
from shared.http.input import check_declared_length
from shared.http.multipart import open_file_field
from shared.http.problems import Problem
from shared.http.ranges import byte_range
from shared.http.requests import new_voice_capture_for_file
from shared.services.audio import (
    delete_audio,
    expire_audio,
    handle_transcribe_job,
    hear_answer,
    read_recording,
    recording_of,
    request_transcription,
)
from shared.settings import AUDIO_RETENTION_SCHEDULE, TRANSCRIBE_QUEUE
from shared.telemetry import traced

bp = func.Blueprint()

# Room for the multipart boundaries and part headers around the audio itself.
_MULTIPART_OVERHEAD = 64 * 1024


@http_route(bp, GET_AUDIO)
async def capture_audio(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    app = root.adapters
    recording = await recording_of(user_id, req.path_params["id"], app)
    size = recording.size
    wanted = byte_range(req.headers.get("range"), size)
    headers = {
        "Accept-Ranges": "bytes",
        # The recording never changes, and it is the caller's own: their browser may keep it.
        "Cache-Control": "private, max-age=3600",
        "Content-Disposition": f'inline; filename="{recording.filename}"',
    }
    if size == 0:
        return Response(b"", media_type=recording.content_type, headers=headers)
    first, last = wanted if wanted is not None else (0, size - 1)
    headers["Content-Length"] = str(last - first + 1)
    if wanted is not None:
        headers["Content-Range"] = f"bytes {first}-{last}/{size}"
    body = await read_recording(recording, first, last, app.voice)
    return StreamingResponse(
        body,
        status_code=206 if wanted is not None else 200,
        media_type=recording.content_type,
        headers=headers,
    )


@http_route(bp, DELETE_AUDIO)
async def capture_audio_delete(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    await delete_audio(user_id, req.path_params["id"], utcnow(), root.adapters)
    return Response(status_code=204)


@http_route(bp, TRANSCRIBE_AGAIN)
async def capture_transcribe(req: Request, root: Root) -> Response:
    user_id = authenticate(req)
    item = await request_transcription(user_id, req.path_params["id"], utcnow(), root.adapters)
    headers = {"Location": f"/api/captures/{item.id}", "Cache-Control": "no-store"}
    return JSONResponse(item.to_json(), status_code=202, headers=headers)


@http_route(bp, SPOKEN_ANSWER)
async def capture_spoken_answer(req: Request, root: Root) -> Response:
    settings = root.settings
    user_id = authenticate(req)
    if not is_capture_id(req.path_params["id"]):
        raise NotFound("There is no such capture.")  # as for any capture id: before the body
    limit = settings.max_voice_bytes
    check_declared_length(req, limit + _MULTIPART_OVERHEAD)
    part = await open_file_field(req.stream(), req.headers.get("content-type"), VOICE_FILE.field)
    # Audio of a type we take, else 415; the transcriber goes by the extension.
    kind = new_voice_capture_for_file(part, user_id, None).audio
    audio = bytearray()
    async for chunk in part.chunks:
        audio += chunk
        if len(audio) > limit:
            raise Problem(413, f"Voice notes are limited to {limit} bytes.", code="AUDIO_TOO_LARGE")
    heard = await hear_answer(
        user_id,
        req.path_params["id"],
        bytes(audio),
        f"answer.{kind.extension}",
        settings.max_voice_seconds,
        root.adapters,
    )
    return JSONResponse(heard.to_json(), headers={"Cache-Control": "no-store"})


@bp.queue_trigger(arg_name="msg", queue_name=TRANSCRIBE_QUEUE, connection="AzureWebJobsStorage")
@traced
async def transcribe_worker(msg: func.QueueMessage) -> None:
    # A malformed job raises here: the host retries it and then keeps it in the poison queue.
    job = TranscribeJob.model_validate_json(msg.get_body())
    built = bootstrap.root()
    await handle_transcribe_job(
        job, built.adapters, max_seconds=built.settings.max_voice_seconds, now=utcnow()
    )


@bp.timer_trigger(arg_name="timer", schedule=AUDIO_RETENTION_SCHEDULE)
@traced
async def audio_retention_timer(timer: func.TimerRequest) -> None:
    built = bootstrap.root()
    await expire_audio(utcnow(), built.adapters, built.digest.preferences)
