"""POST /api/capture: a text capture, a voice note, or the answers that resume an interrupted
thread, answered as a streamed AG-UI run."""

from collections.abc import AsyncIterator

import azure.functions as func
from azurefunctions.extensions.http.fastapi import Request, Response

from shared.agui import narrator
from shared.agui.events import Conversation
from shared.agui.input import VoiceInput, parse_capture_input
from shared.bootstrap import adapters
from shared.domain.errors import Conflict
from shared.http.auth import authenticate
from shared.http.contract import CAPTURE
from shared.http.edge import http_function
from shared.http.idempotency import idempotency_key
from shared.http.input import read_body
from shared.http.problems import Problem
from shared.http.sse import sse_response
from shared.services.feed import FeedSlot, open_feed
from shared.services.inbox import get_capture, not_found
from shared.services.pipeline import capture_text
from shared.services.resume import ResumeRequest, resume
from shared.services.voice import upload_voice_note
from shared.settings import get_settings
from shared.telemetry import traced

bp = func.Blueprint()


@bp.route(route=CAPTURE.route, methods=[CAPTURE.method], auth_level=func.AuthLevel.ANONYMOUS)
@traced
@http_function
async def capture(req: Request) -> Response:
    settings = get_settings()
    user_id = authenticate(req)
    # Room for a voice note's audio as base64; any other run must fit MAX_BODY_BYTES.
    body = await read_body(req, settings.max_body_bytes + (settings.max_voice_bytes + 2) // 3 * 4)
    oversized = len(body) > settings.max_body_bytes
    if oversized and b'"audio"' not in body and b'"binary"' not in body:
        raise _too_large(settings.max_body_bytes)  # no audio, so no need to parse it
    content_type = req.headers.get("content-type")
    run = parse_capture_input(body, content_type, user_id, idempotency_key(req))
    asked, conversation, app = run.asked, run.conversation, adapters()
    if oversized and not (isinstance(asked, VoiceInput) and asked.new):
        raise _too_large(settings.max_body_bytes)
    if isinstance(asked, ResumeRequest):
        request = asked
        return sse_response(
            narrator.resume_run(
                request.thread_id,
                request.run_id,
                lambda: resume(request, app),
                conversation,
                app.repo,
            )
        )
    if isinstance(asked, VoiceInput):
        return await _voice_run(asked, user_id, conversation)
    progress = capture_text(asked, app)
    return sse_response(
        narrator.capture_run(asked.thread_id, asked.run_id, progress, conversation, app.repo)
    )


def _too_large(limit: int) -> Problem:
    return Problem(413, f"The body is larger than {limit} bytes.")


async def _voice_run(voice: VoiceInput, user_id: str, conversation: Conversation) -> Response:
    """A voice note in one run: its upload (or the note it names), transcribing, classifying,
    the outcome, told from its inbox item as its events feed tells it."""
    app = adapters()
    if voice.new is None:
        assert voice.capture_id is not None
        item = await get_capture(user_id, voice.capture_id, app.repo)
        if item.source != "voice":
            raise not_found()
        if item.thread_id != voice.thread_id:
            # Its questions are asked, and answered, on its own thread.
            raise Conflict(
                f"This voice note is on thread {item.thread_id!r}: run it there.",
                "OTHER_THREAD",
            )
        slot = FeedSlot(user_id, app.policy)
    else:
        # The feed's slot first: a note that was accepted must not be answered with a 429.
        slot = FeedSlot(user_id, app.policy)
        try:
            item = await upload_voice_note(
                voice.new, _once(voice.audio), app, get_settings().max_voice_bytes
            )
        except BaseException:
            slot.release()
            raise
    sightings = open_feed(item, app, slot)
    return sse_response(
        narrator.feed_run(
            item,
            sightings,
            app.repo,
            interrupts=conversation.interrupts,
            run_id=voice.run_id,
            conversation=conversation,
        )
    )


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data
