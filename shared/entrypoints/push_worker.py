"""The `captures-outcomes` queue worker: Web Push of an outcome the user did not see live."""

import azure.functions as func

from shared.bootstrap import root
from shared.domain.messages import OutcomeMessage
from shared.services.push import push_outcome
from shared.settings import OUTCOMES_QUEUE
from shared.telemetry import traced

bp = func.Blueprint()


@bp.queue_trigger(arg_name="msg", queue_name=OUTCOMES_QUEUE, connection="AzureWebJobsStorage")
@traced
async def push_worker(msg: func.QueueMessage) -> None:
    # A malformed message raises here, as a push service that is busy does (PushUnavailable):
    # the host retries it, then keeps it in captures-outcomes-poison.
    message = OutcomeMessage.model_validate_json(msg.get_body())
    built = root()
    await push_outcome(message, built.adapters.repo, built.push)
