"""The delayed check: the safety net each write of a capture sends before it writes. When it
comes due, the classify worker (worker.handle_classify_job) finishes whatever the writer's
process did not: classifying, filing, converging the buckets, removing a deleted capture."""

from __future__ import annotations

import asyncio
import logging

from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters
from shared.services.background import spawn

log = logging.getLogger(__name__)

# How long a write waits for its check to be sent: normally the job is out before the write,
# so no moment exists in which a process could die leaving work that nothing will come back
# to; a slow queue holds the write up no longer.
CHECK_FIRST_S = 1.0


async def schedule_check(job: ClassifyJob, adapters: Adapters, delay_s: float) -> None:
    """Send the delayed job that settles the capture if its own process never does. Call it
    before the write; best effort, and never more than CHECK_FIRST_S in the way."""
    await asyncio.wait({spawn(_send_check(job, adapters, delay_s))}, timeout=CHECK_FIRST_S)


async def _send_check(job: ClassifyJob, adapters: Adapters, delay_s: float) -> None:
    try:
        await adapters.queues.enqueue_classify(job, delay_s=delay_s)
    except Exception:
        log.warning("could not schedule the check of capture %s", job.capture_id, exc_info=True)
