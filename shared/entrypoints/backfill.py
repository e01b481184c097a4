"""The `embeddings-backfill` queue worker: one page of a user's captures embedded, the next
page's message sent. Start it with the host's admin endpoint (`POST
/admin/functions/embeddings_backfill`, `{"input": "{\"userId\": \"alice\"}"}`, master key)."""

import azure.functions as func

from shared.bootstrap import root
from shared.domain.messages import BackfillJob
from shared.services.backfill import backfill_page
from shared.settings import BACKFILL_QUEUE
from shared.telemetry import traced

bp = func.Blueprint()


@bp.queue_trigger(arg_name="msg", queue_name=BACKFILL_QUEUE, connection="AzureWebJobsStorage")
@traced
async def embeddings_backfill(msg: func.QueueMessage) -> None:
    # A malformed job raises here: the host retries it and then keeps it in the poison queue.
    job = BackfillJob.model_validate_json(msg.get_body())
    built = root()
    await backfill_page(job, built.adapters.repo, built.adapters.embedder, built.backfill_queue)
