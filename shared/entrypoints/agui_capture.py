"""POST /api/capture: a text capture, a voice note, or the answers that resume an interrupted
thread, answered as a streamed AG-UI run."""

from collections.abc import AsyncIterator

import azure.functions as func
from azurefunctions.extensions.http.fastapi import Request, Response

from shared.agui import narrator
from shared.agui.events import Conversation
from shared.agui.input import VoiceInput, base64_chars, parse_capture_input
from shared.bootstrap import Root
from shared.domain.errors import Conflict
from shared.entrypoints.routes import http_route
from shared.http.auth import authenticate
from shared.http.contract import CAPTURE
from shared.http.idempotency import idempotency_key
from shared.http.input import parsed, read_body_with_audio
from shared.http.sse import sse_response
from shared.services.feed import FeedSlot, open_feed
from shared.services.inbox import get_capture, not_found
from shared.services.pipeline import capture_text
from shared.services.resume import ResumeRequest, resume
from shared.services.voice import upload_voice_note

bp = func.Blueprint()


@http_route(bp, CAPTURE)
async def capture(req: Request, root: Root) -> Response:
    settings = root.settings
    user_id = authenticate(req)
    # Room for a voice note's audio as base64; the rest of any run must fit the text's limit.
    body, audio = await read_body_with_audio(
        req, settings.max_text_body_bytes, base64_chars(settings.max_voice_bytes)
    )
    content_type, key = req.headers.get("content-type"), idempotency_key(req)
    run = await parsed(parse_capture_input, body, content_type, user_id, key, audio)
    asked, conversation, app = run.asked, run.conversation, root.adapters
    if isinstance(asked, ResumeRequest):
        request = asked
        return sse_response(
            narrator.resume_run(
                request.thread_id,
                request.run_id,
                lambda: resume(request, app),
                conversation,
                app.outbox.delivered,
            )
        )
    if isinstance(asked, VoiceInput):
        return await _voice_run(asked, user_id, conversation, root)
    progress = capture_text(asked, app)
    return sse_response(
        narrator.capture_run(
            asked.thread_id, asked.run_id, progress, conversation, app.outbox.delivered
        )
    )


async def _voice_run(
    voice: VoiceInput, user_id: str, conversation: Conversation, root: Root
) -> Response:
    """A voice note in one run: its upload (or the note it names), transcribing, classifying,
    the outcome, told from its inbox item as its events feed tells it."""
    app = root.adapters
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
                voice.new, _once(voice.audio), root.settings.max_voice_bytes, app
            )
        except BaseException:
            slot.release()
            raise
    stages = open_feed(item, app, slot=slot)
    return sse_response(
        narrator.feed_run(
            item,
            stages,
            app.outbox.delivered,
            interrupts=conversation.interrupts,
            run_id=voice.run_id,
            conversation=conversation,
        )
    )


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data
