"""The host's poison queues: work that ran out of retries marks its capture failed."""

import azure.functions as func

from shared.bootstrap import root
from shared.services.poison import (
    BLOB_POISON_QUEUE,
    CLASSIFY_POISON_QUEUE,
    fail_poisoned_classify_job,
    settle_poisoned_voice_note,
)
from shared.telemetry import traced

bp = func.Blueprint()


@bp.queue_trigger(
    arg_name="msg", queue_name=CLASSIFY_POISON_QUEUE, connection="AzureWebJobsStorage"
)
@traced
async def classify_poisoned(msg: func.QueueMessage) -> None:
    await fail_poisoned_classify_job(msg.get_body(), root().adapters)


@bp.queue_trigger(arg_name="msg", queue_name=BLOB_POISON_QUEUE, connection="AzureWebJobsStorage")
@traced
async def voice_note_poisoned(msg: func.QueueMessage) -> None:
    await settle_poisoned_voice_note(msg.get_body(), root().adapters)
