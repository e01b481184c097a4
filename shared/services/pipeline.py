"""The capture pipeline's use cases: store a capture (or an answer), classify and file it, and
report what happened as domain progress (shared/domain/progress.py), for any door to tell.

The work runs in a task of its own, so a client that goes away mid-way still gets its capture
filed; the progress stream only relays what the task reports. A new text capture's words go to
the model while the capture is stored: its answer is used only once the capture is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import date

from shared import tracing
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Classification, excerpt_to_classify
from shared.domain.errors import (
    CaptureDeleted,
    Conflict,
    Failed,
    Refused,
    StorageUnavailable,
    Unavailable,
)
from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters, Classifier
from shared.domain.progress import Deferred, Progress, Settled, Stored
from shared.services.background import spawn
from shared.services.capture import TextCapture, inbox_item_for, store_text_capture
from shared.services.filing import classify_and_file
from shared.services.worker import queue_for_worker

log = logging.getLogger(__name__)

NOT_SAVED = "We couldn't save your capture. Please try again."


def capture_text(capture: TextCapture, adapters: Adapters) -> AsyncIterator[Progress]:
    """Capture text: Stored (or Refused), then Settled, Deferred or Refused."""
    capture_id = capture.capture_id
    tracing.annotate(capture_id=capture_id, user_id=capture.user_id)
    item = inbox_item_for(capture)
    return filing_progress(
        ClassifyJob(capture_id=capture_id, user_id=capture.user_id),
        lambda: store_text_capture(capture, item, adapters.repo),
        adapters,
        words=excerpt_to_classify(item.text_to_classify()) or None,
    )


async def capture_text_within(capture: TextCapture, wait_s: float, adapters: Adapters) -> InboxItem:
    """Capture text and wait up to `wait_s` seconds, once it is stored, for it to settle: the
    item as it is then (settled, queued, or still with the classifier). A refusal is raised;
    the work goes on after the wait either way."""
    return await settled_within(capture_text(capture, adapters), wait_s)


async def settled_within(stream: AsyncIterator[Progress], wait_s: float) -> InboxItem:
    """A capture's progress (a text capture's, or an answer's) read up to its first stored
    item, then for up to `wait_s` seconds more for it to settle: the item as it is then. A
    refusal is raised; the work goes on after the wait either way."""
    progress = aiter(stream)
    first = await anext(progress)
    if isinstance(first, Refused):
        raise first
    item = first.item
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(wait_s):
            final = await anext(progress)
            if isinstance(final, Refused):
                raise final
            item = final.item
    return item


async def filing_progress(
    capture: ClassifyJob,
    store: Callable[[], Awaitable[InboxItem]],
    adapters: Adapters,
    *,
    words: str | None = None,
) -> AsyncIterator[Progress]:
    """Store (with `store`), classify and file `capture`; the work starts when the stream is
    first read, and goes on if its reader leaves. `words`: what the stored capture will ask the
    model, when known before it is stored."""
    progress: asyncio.Queue[Progress] = asyncio.Queue()
    spawn(_store_and_file(capture, store, adapters, progress.put_nowait, words))
    first = await progress.get()
    yield first
    if not isinstance(first, Refused):
        yield await progress.get()


async def _store_and_file(
    capture: ClassifyJob,
    store: Callable[[], Awaitable[InboxItem]],
    adapters: Adapters,
    report: Callable[[Progress], None],
    words: str | None,
) -> None:
    if words is None or not _storage.up:
        await _store_and_file_with(capture, store, adapters, report, adapters.classifier)
        return
    ahead = _AskedAhead(adapters.classifier, words)
    # One turn of the loop before the check is sent, so that the model's request, asked just
    # now, is written first: its HTTP client yields before it writes (the body goes out on a
    # task of its own), and the check's send would build its request there, about 1 ms of CPU,
    # before the model's wait had begun (issue 42: the request reached the scripted model 0.5
    # ms sooner, in-process the write came 0.6-0.8 ms sooner). The check still goes out before
    # the capture is stored.
    await asyncio.sleep(0)
    try:
        await _store_and_file_with(capture, store, adapters, report, ahead)
    finally:
        ahead.close()


async def _store_and_file_with(
    capture: ClassifyJob,
    store: Callable[[], Awaitable[InboxItem]],
    adapters: Adapters,
    report: Callable[[Progress], None],
    classifier: Classifier,
) -> None:
    # The safety net goes out first: if this process dies before the capture is settled, the
    # worker finds it `received` when the job comes due, and files it; if it dies before the
    # outcome was delivered or published, the worker publishes it.
    job = capture.model_copy(update={"tells_outcome": True})
    check = await adapters.outbox.send_check(job, adapters.policy.recovery_delay_s)
    try:
        with tracing.span("store capture"):
            item = await store()
    except StorageUnavailable:
        _storage.up = False
        log.warning("could not store a capture")
        report(Unavailable(NOT_SAVED, "STORAGE_UNAVAILABLE"))
        return
    except Refused as refused:
        report(refused)
        return
    except Exception:
        log.exception("storing a capture failed")
        report(Failed(NOT_SAVED, "INTERNAL"))
        return
    _storage.up = True
    report(Stored(item))
    tracing.annotate(capture_id=item.id, user_id=item.user_id)
    tracing.log_capture_text(log, "text", item.id, item.text_to_classify())
    try:
        settled = await classify_and_file(
            item,
            adapters.repo,
            classifier,
            adapters.outbox,
            publish=False,
            embedder=adapters.embedder,
        )
        # Delivered by the run's stream, the outcome needs no message and the check no run.
        adapters.outbox.hold(settled, check)
        report(Settled(settled))
    except CaptureDeleted:
        report(Conflict("This capture was deleted.", "CAPTURE_DELETED"))
    except Exception as exc:
        # Stored, so nothing is lost: the worker classifies it when the model is back.
        log.warning("capture %s deferred to the worker: %s", item.id, type(exc).__name__)
        tracing.annotate(outcome="queued")
        deferred = await defer_to_worker(item, adapters)
        if deferred.status is not Status.RECEIVED:
            # Queued (or filed already by the worker): its job stands in for the check.
            adapters.outbox.cancel_check(check)
        report(Deferred(deferred))


async def defer_to_worker(item: InboxItem, adapters: Adapters) -> InboxItem:
    try:
        return await queue_for_worker(item, adapters)
    except Exception:
        # It stays `received` (or is queued but not yet marked): a retry of the same run
        # picks it up, and the worker files once either way.
        log.exception("could not queue capture %s", item.id)
        return item


class _Storage:
    """Whether this process's last attempt to store a capture went through: while storage is
    down, a capture's words wait for it instead of going to the model for a capture that will
    not be stored (a client retrying through an outage would pay a model call each time)."""

    up = True


_storage = _Storage()


class _AskedAhead:
    """The classifier, asked about a new capture's words as its run starts, while the check is
    sent and the capture stored (issue 32: those round trips no longer add to the wait for the
    model). The answer is only read by filing, once the capture is stored; asked about other
    words (a replayed capture that has answers since), it asks the model again. Nothing is
    written on its answer before then, so every write keeps its order and its safety net."""

    def __init__(self, classifier: Classifier, words: str) -> None:
        self._classifier = classifier
        self._words = words
        self._answer = spawn(_classify_ahead(classifier, words))

    async def classify(self, text: str, *, said_on: date | None = None) -> Classification:
        # Asked ahead on the day the capture is made, which is the day its words were said.
        if text == self._words:
            return await self._answer
        return await self._classifier.classify(text, said_on=said_on)

    def close(self) -> None:
        """The run is over: stop a call whose answer nobody took (the capture was refused, or
        was settled before), and take a failure nobody awaited."""
        if not self._answer.done():
            self._answer.cancel()
        elif not self._answer.cancelled():
            self._answer.exception()


async def _classify_ahead(classifier: Classifier, words: str) -> Classification:
    return await classifier.classify(words)
