"""The queue adapter: classify jobs, outcomes, digest jobs and the embeddings backfill's pages
out (base64, as the host reads)."""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from shared import tracing
from shared.adapters.storage_errors import bounded
from shared.domain.digest import DigestJob
from shared.domain.messages import BackfillJob, ClassifyJob, OutcomeMessage, QueueReceipt
from shared.settings import (
    BACKFILL_QUEUE,
    CLASSIFY_QUEUE,
    DIGEST_QUEUE,
    OUTCOMES_QUEUE,
    STORAGE_TIMEOUT_S,
)

if TYPE_CHECKING:
    from azure.storage.queue.aio import QueueClient

log = logging.getLogger(__name__)


class StorageQueues:
    def __init__(
        self,
        queue: Callable[[str], QueueClient],
        outcome_delay_s: float = 0,
        *,
        timeout_s: float = STORAGE_TIMEOUT_S,
    ) -> None:
        # The process's client of each queue, by name (clients.Clients.queue).
        self._queue = queue
        self.outcome_delay_s = outcome_delay_s
        self._timeout_s = timeout_s

    async def enqueue_classify(self, job: ClassifyJob, delay_s: float = 0) -> QueueReceipt:
        with tracing.span(f"send {CLASSIFY_QUEUE}", tracing.SpanKind.PRODUCER):
            # The worker's span continues from this one (W3C traceparent in the job).
            if job.traceparent is None:
                job = job.model_copy(update={"traceparent": tracing.traceparent()})
            return await self._send(CLASSIFY_QUEUE, job.model_dump_json(by_alias=True), delay_s)

    async def publish_outcome(
        self, message: OutcomeMessage, delay_s: float | None = None
    ) -> QueueReceipt:
        with tracing.span(f"send {OUTCOMES_QUEUE}", tracing.SpanKind.PRODUCER):
            # The push worker's span continues the capture's trace, as the classify worker's.
            if message.traceparent is None:
                message = message.model_copy(update={"traceparent": tracing.traceparent()})
            body = message.model_dump_json(by_alias=True)
            delay_s = self.outcome_delay_s if delay_s is None else delay_s
            return await self._send(OUTCOMES_QUEUE, body, delay_s)

    async def enqueue_digest(self, job: DigestJob) -> None:
        with tracing.span(f"send {DIGEST_QUEUE}", tracing.SpanKind.PRODUCER):
            if job.traceparent is None:
                job = job.model_copy(update={"traceparent": tracing.traceparent()})
            await self._send(DIGEST_QUEUE, job.model_dump_json(by_alias=True))

    async def enqueue_backfill(self, job: BackfillJob) -> None:
        with tracing.span(f"send {BACKFILL_QUEUE}", tracing.SpanKind.PRODUCER):
            if job.traceparent is None:
                job = job.model_copy(update={"traceparent": tracing.traceparent()})
            await self._send(BACKFILL_QUEUE, job.model_dump_json(by_alias=True))

    async def cancel(self, receipt: QueueReceipt) -> None:
        from azure.core.exceptions import ResourceNotFoundError

        # Not found: delivered (so its receipt changed) or deleted already.
        async with bounded("Queue storage", self._timeout_s):
            with contextlib.suppress(ResourceNotFoundError):
                await self._queue(receipt.queue).delete_message(
                    receipt.message_id, receipt.pop_receipt
                )

    async def _send(self, queue: str, body: str, delay_s: float = 0) -> QueueReceipt:
        async with bounded("Queue storage", self._timeout_s):
            sent = await self._queue(queue).send_message(
                body.encode(), visibility_timeout=math.ceil(delay_s) or None
            )
        return QueueReceipt(queue=queue, message_id=sent.id, pop_receipt=sent.pop_receipt)  # type: ignore[arg-type]  # a message just sent has one
