"""StorageQueues.cancel against Azurite: a delayed check sent and then deleted with the receipt
its send returned is gone before it comes due, and deleting it twice is no error (issue 32)."""

from __future__ import annotations

import uuid

from azure.storage.queue import QueueClient

from shared.adapters.queues import StorageQueues
from shared.bootstrap import reset, root
from shared.domain.messages import ClassifyJob
from shared.settings import CLASSIFY_QUEUE


def _count(storage_conn: str) -> int:
    client = QueueClient.from_connection_string(storage_conn, CLASSIFY_QUEUE)
    return client.get_queue_properties().approximate_message_count


async def test_a_delayed_check_cancelled_with_its_receipt_is_gone(
    provisioned: dict[str, str], storage_conn: str
) -> None:
    queues = StorageQueues(root().clients.queue)
    job = ClassifyJob(capture_id=str(uuid.uuid4()), user_id="u-cancel")
    try:
        before = _count(storage_conn)
        receipt = await queues.enqueue_classify(job, delay_s=3600)
        assert _count(storage_conn) == before + 1
        await queues.cancel(receipt)
        assert _count(storage_conn) == before
        await queues.cancel(receipt)  # gone already: no error
    finally:
        await reset()
