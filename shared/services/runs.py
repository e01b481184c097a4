"""AG-UI runs of a capture: the service's progress turned into the contract's events.

The work (store, classify, file) runs in a task of its own, so a client that goes away
mid-stream still gets its capture filed; the stream only relays what the task reports.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared import tracing
from shared.domain.capture import InboxItem
from shared.domain.errors import CaptureDeleted, NotStored, StorageUnavailable
from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters
from shared.services import agui
from shared.services.agui import Conversation
from shared.services.background import spawn
from shared.services.capture import TextCapture, store_text_capture
from shared.services.checks import schedule_check
from shared.services.filing import classify_and_file
from shared.services.shown import shown
from shared.services.worker import queue_for_worker
from shared.settings import get_settings

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Stored:
    item: InboxItem


@dataclass(frozen=True)
class Settled:
    item: InboxItem


@dataclass(frozen=True)
class Deferred:
    """Stored, but classifying must wait for the worker (or, failing that, a retry)."""

    item: InboxItem


Progress = Stored | Settled | Deferred | NotStored


def text_capture_run(capture: TextCapture, adapters: Adapters) -> AsyncIterator[BaseEvent]:
    capture_id = capture.capture_id
    tracing.annotate(capture_id=capture_id, user_id=capture.user_id)
    return capture_run(
        capture.thread_id,
        capture.run_id,
        ClassifyJob(capture_id=capture_id, user_id=capture.user_id),
        lambda: store_text_capture(capture, adapters.repo),
        adapters,
        capture.conversation,
    )


async def capture_run(
    thread_id: str,
    run_id: str,
    capture: ClassifyJob,
    store: Callable[[], Awaitable[InboxItem]],
    adapters: Adapters,
    conversation: Conversation,
) -> AsyncIterator[BaseEvent]:
    """Store (with `store`), classify and file `capture`, as one AG-UI run."""
    # The first bytes leave before any storage or model call.
    yield agui.run_started(thread_id, run_id)
    async for event in filing_events(thread_id, run_id, capture, store, adapters, conversation):
        yield event


async def filing_events(
    thread_id: str,
    run_id: str,
    capture: ClassifyJob,
    store: Callable[[], Awaitable[InboxItem]],
    adapters: Adapters,
    conversation: Conversation,
    *,
    to_client: bool = True,
) -> AsyncIterator[BaseEvent]:
    """The events of `capture_run` after RUN_STARTED (a resumed run starts its own).
    `to_client`: whether the events reach a client (a resume's quiet steps drop them), so that
    the outcome counts as shown live."""
    progress: asyncio.Queue[Progress] = asyncio.Queue()
    spawn(_store_and_file(capture, store, adapters, progress.put_nowait))

    first = await progress.get()
    if isinstance(first, NotStored):
        yield agui.run_error(first.message, first.code)
        return
    yield agui.step_started(agui.CLASSIFIER_STEP)
    final = await progress.get()
    yield agui.step_finished(agui.CLASSIFIER_STEP)
    if isinstance(final, NotStored):
        yield agui.run_error(final.message, final.code)
    elif isinstance(final, Settled):
        for event in agui.outcome_events(final.item, run_id, conversation):
            yield event
        # Past the last yield: the response asked for more, so the outcome's frames were sent.
        if to_client:
            shown(final.item, adapters.repo)
    else:
        yield agui.run_finished(
            thread_id, run_id, {"status": final.item.status.value, "inboxItemId": final.item.id}
        )


async def _store_and_file(
    capture: ClassifyJob,
    store: Callable[[], Awaitable[InboxItem]],
    adapters: Adapters,
    report: Callable[[Progress], None],
) -> None:
    # The safety net goes out first: if this process dies before the capture is settled, the
    # worker finds it `received` when the job comes due, and files it.
    await schedule_check(capture, adapters, get_settings().recovery_delay_s)
    try:
        with tracing.span("store capture"):
            item = await store()
    except StorageUnavailable:
        log.warning("could not store a capture")
        report(NotStored("STORAGE_UNAVAILABLE", "We couldn't save your capture. Please try again."))
        return
    except NotStored as refused:
        report(refused)
        return
    except Exception:
        log.exception("storing a capture failed")
        report(NotStored("INTERNAL", "We couldn't save your capture. Please try again."))
        return
    report(Stored(item))
    tracing.annotate(capture_id=item.id, user_id=item.user_id)
    tracing.log_capture_text(log, "text", item.id, item.text_to_classify())
    try:
        settled = await classify_and_file(item, adapters.repo, adapters.classifier, adapters.queues)
        report(Settled(settled))
    except CaptureDeleted:
        report(NotStored("CAPTURE_DELETED", "This capture was deleted."))
    except Exception as exc:
        # Stored, so nothing is lost: the worker classifies it when the model is back.
        log.warning("capture %s deferred to the worker: %s", item.id, type(exc).__name__)
        tracing.annotate(outcome="queued")
        report(Deferred(await defer_to_worker(item, adapters)))


async def defer_to_worker(item: InboxItem, adapters: Adapters) -> InboxItem:
    try:
        return await queue_for_worker(item, adapters)
    except Exception:
        # It stays `received` (or is queued but not yet marked): a retry of the same run
        # picks it up, and the worker files once either way.
        log.exception("could not queue capture %s", item.id)
        return item
