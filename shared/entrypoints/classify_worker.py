"""The `captures-classify` queue worker: classify and file one capture, once."""

import azure.functions as func

from shared.bootstrap import root
from shared.domain.messages import ClassifyJob
from shared.services.worker import handle_classify_job
from shared.settings import CLASSIFY_QUEUE
from shared.telemetry import traced

bp = func.Blueprint()


@bp.queue_trigger(arg_name="msg", queue_name=CLASSIFY_QUEUE, connection="AzureWebJobsStorage")
@traced
async def classify_worker(msg: func.QueueMessage) -> None:
    # A malformed job raises here: the host retries it and then keeps it in the poison queue.
    job = ClassifyJob.model_validate_json(msg.get_body())
    first = (msg.dequeue_count or 0) <= 1
    await handle_classify_job(job, root().adapters, first_delivery=first)
