"""The voice-notes blob trigger: transcribe an uploaded voice note and queue it for filing."""

import azure.functions as func

from shared.bootstrap import root
from shared.services.transcription import transcribe_voice_note
from shared.settings import VOICE_CONTAINER
from shared.telemetry import traced

bp = func.Blueprint()


# Event Grid in Azure: the upload is picked up at once rather than by a container scan.
@bp.blob_trigger(
    arg_name="blob",
    path=VOICE_CONTAINER + "/{userId}/{name}",
    connection="AzureWebJobsStorage",
    source=func.BlobSource.EVENT_GRID,
)
@traced
async def voice_note_uploaded(blob: func.InputStream) -> None:
    built = root()
    settings = built.settings
    name = (blob.name or "").removeprefix(VOICE_CONTAINER + "/")
    await transcribe_voice_note(
        name,
        blob.length,
        blob.read,
        built.adapters,
        built.digest.preferences,
        max_bytes=settings.max_voice_bytes,
        max_seconds=settings.max_voice_seconds,
    )
