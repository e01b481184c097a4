"""Queue triggers with the Functions host's semantics (extensions.queues in host.json).

Batches of `batchSize`, a new batch once in-flight work falls to `newBatchThreshold`,
exponential polling backoff up to `maxPollingInterval` (cut short when the app enqueues),
a message hidden for a lease renewed halfway while its function runs (a host that dies
stops renewing, so the message comes back), retry after `visibilityTimeout`, and
`<queue>-poison` after `maxDequeueCount` attempts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

from azure.core.exceptions import ResourceExistsError
from azure.functions.queue import QueueMessage  # concrete; func.QueueMessage is abstract
from azure.storage.queue import QueueMessage as SdkMessage
from azure.storage.queue.aio import QueueClient

from .config import QueueOptions
from .invoke import Invoker
from .loader import LoadedFunction
from .storage import StorageClients, decode_message

log = logging.getLogger("devhost.queues")

MIN_POLLING_INTERVAL = 0.1  # seconds, as the host's QueuePollingIntervals.Minimum


# What a listener does with a message it received: raising leaves the message to be retried.
MessageHandler = Callable[[SdkMessage, bytes], Awaitable[None]]


class QueueListener:
    """Polls one queue and hands each message, decoded, to `handle`."""

    def __init__(
        self,
        queue: QueueClient,
        poison: QueueClient,
        options: QueueOptions,
        handle: MessageHandler,
        label: str,
    ) -> None:
        self.queue_name = queue.queue_name
        self._queue = queue
        self._poison = poison
        self._options = options
        self._handle = handle
        self._label = label  # who handles the messages, for the log
        self._wake = asyncio.Event()
        self._in_flight: set[asyncio.Task[None]] = set()
        self._slot_free = asyncio.Event()
        self._lease_s = max(1, round(options.lease.total_seconds()))

    @classmethod
    def for_function(
        cls,
        function: LoadedFunction,
        options: QueueOptions,
        storage: StorageClients,
        invoker: Invoker,
    ) -> QueueListener:
        """The listener of a queue-triggered function: a real `func.QueueMessage` in."""
        queue_name = function.trigger.raw["queueName"]
        connection = function.trigger.raw.get("connection") or "AzureWebJobsStorage"
        service = storage.queue_service(connection)

        async def handle(message: SdkMessage, body: bytes) -> None:
            trigger_value = QueueMessage(
                id=message.id,
                body=body,
                dequeue_count=message.dequeue_count,
                expiration_time=message.expires_on,
                insertion_time=message.inserted_on,
                time_next_visible=message.next_visible_on,
                pop_receipt=message.pop_receipt,
            )
            binding_data = {"QueueTrigger": body.decode("utf-8", "replace")}
            await invoker.call(function, trigger_value, binding_data)

        return cls(
            service.get_queue_client(queue_name),
            service.get_queue_client(f"{queue_name}-poison"),
            options,
            handle,
            f"function {function.name}",
        )

    def wake(self) -> None:
        """Poll now: the app itself just enqueued to this queue."""
        self._wake.set()

    async def run(self) -> None:
        with contextlib.suppress(ResourceExistsError):
            await self._queue.create_queue()
        delay = MIN_POLLING_INTERVAL
        try:
            while True:
                await self._wait_for_capacity()
                try:
                    got = await self._receive_batch()
                except Exception as exc:  # storage down: back off and poll again
                    log.warning("polling %s failed: %r", self.queue_name, exc)
                    got = 0
                if got:
                    delay = MIN_POLLING_INTERVAL
                    continue
                await self._sleep(delay)
                ceiling = self._options.max_polling_interval.total_seconds()
                # Randomised exponential backoff, like the host's polling strategy.
                delay = min(ceiling, delay * 2 * random.uniform(0.8, 1.2))
        finally:
            for task in self._in_flight:
                task.cancel()

    async def _wait_for_capacity(self) -> None:
        while len(self._in_flight) > self._options.threshold:
            self._slot_free.clear()
            await self._slot_free.wait()

    async def _sleep(self, delay: float) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=delay)

    async def _receive_batch(self) -> int:
        count = 0
        pager = self._queue.receive_messages(
            messages_per_page=self._options.batch_size,
            max_messages=self._options.batch_size,
            visibility_timeout=self._lease_s,
        )
        async for message in pager:
            count += 1
            task = asyncio.create_task(self._guarded(message))
            self._in_flight.add(task)
            task.add_done_callback(self._done)
        return count

    def _done(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        self._slot_free.set()

    async def _guarded(self, message: SdkMessage) -> None:
        try:
            await self._process(message)
        except Exception:
            # Storage trouble in the host itself: the message reappears after its
            # processing visibility ends and is tried again, as with the real host.
            log.exception("devhost could not process message %s", message.id)

    async def _process(self, message: SdkMessage) -> None:
        max_dequeue = self._options.max_dequeue_count
        attempt = message.dequeue_count or 0  # a received message always has its count
        if attempt > max_dequeue:
            await self._move_to_poison(message, "dequeue count over the limit")
            return
        try:
            body = decode_message(message.content, self._options.message_encoding)
        except ValueError:
            # The host cannot bind such a message; retrying would never help.
            await self._move_to_poison(message, "message is not valid base64")
            return
        lease = _Lease(self._queue, message, self._lease_s)
        try:
            await self._handle(message, body)
            succeeded = True
        except Exception:
            log.exception(
                "%s failed on message %s (attempt %d of %d)",
                self._label,
                message.id,
                attempt,
                max_dequeue,
            )
            succeeded = False
        finally:
            # Stop renewing before the message is deleted or released: they need its last
            # pop receipt, and a renewal after them would hide it again.
            await lease.end()
        if succeeded:
            await self._queue.delete_message(message, pop_receipt=message.pop_receipt)
        elif attempt >= max_dequeue:
            await self._move_to_poison(message, "maxDequeueCount reached")
        else:
            await self._queue.update_message(
                message,
                pop_receipt=message.pop_receipt,
                visibility_timeout=int(self._options.visibility_timeout.total_seconds()),
            )

    async def _move_to_poison(self, message: SdkMessage, reason: str) -> None:
        log.warning("moving message %s to %s: %s", message.id, self._poison.queue_name, reason)
        with contextlib.suppress(ResourceExistsError):
            await self._poison.create_queue()
        # The host copies the raw content, so the poison message decodes like the original.
        await self._poison.send_message(message.content)
        await self._queue.delete_message(message, pop_receipt=message.pop_receipt)


class _Lease:
    """Keeps a message hidden while its function runs: renewed when half the lease is gone,
    as the host's UpdateQueueMessageVisibilityCommand does. Each renewal gives the message a
    new pop receipt, which the final delete or release must use, so it is kept on `message`."""

    def __init__(self, queue: QueueClient, message: SdkMessage, lease_s: int) -> None:
        self._queue = queue
        self._message = message
        self._lease_s = lease_s
        self._ended = asyncio.Event()
        self._task = asyncio.create_task(self._keep())

    async def end(self) -> None:
        """Stop renewing, after a renewal in flight has finished: cancelling it mid-request
        could change the pop receipt on the server without our knowing the new one."""
        self._ended.set()
        await self._task

    async def _keep(self) -> None:
        delay = self._lease_s / 2
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended.wait(), timeout=delay)
                return
            try:
                receipt = await self._queue.update_message(
                    self._message,
                    pop_receipt=self._message.pop_receipt,
                    visibility_timeout=self._lease_s,
                )
            except Exception as exc:  # storage down: try again sooner, like the host
                log.warning("renewing the lease of message %s failed: %r", self._message.id, exc)
                delay = max(0.5, delay / 2)
                continue
            self._message.pop_receipt = receipt.pop_receipt
            self._message.next_visible_on = receipt.next_visible_on
            delay = self._lease_s / 2


def watch_app_enqueues(on_enqueue: Callable[[str], None]) -> None:
    """Call `on_enqueue(queue_name)` whenever a message the app sends with the async queue SDK
    becomes visible: at once, or, for one sent hidden (`visibility_timeout`), when it comes
    due, unless the app deleted it first (issue 32: every capture's check is deleted unseen).

    The real host wakes its listeners only for its own output bindings and finds the rest by
    polling, up to `maxPollingInterval` late; our app enqueues with the SDK, so locally the
    devhost watches that rather than wait out a poll.
    """
    original_send = QueueClient.send_message
    if getattr(original_send, "_devhost_watched", False):
        return
    original_delete = QueueClient.delete_message
    coming_due: dict[str, asyncio.TimerHandle] = {}  # message id → its wake

    def due(message_id: str, queue_name: str) -> None:
        coming_due.pop(message_id, None)
        on_enqueue(queue_name)

    async def send_message(self: QueueClient, *args: Any, **kwargs: Any) -> Any:
        sent = await original_send(self, *args, **kwargs)
        hidden_s = kwargs.get("visibility_timeout")
        if not hidden_s:
            on_enqueue(self.queue_name)
        else:
            loop = asyncio.get_running_loop()
            coming_due[sent.id] = loop.call_later(hidden_s, due, sent.id, self.queue_name)
        return sent

    async def delete_message(self: QueueClient, message: Any, *args: Any, **kwargs: Any) -> Any:
        wake = coming_due.pop(message if isinstance(message, str) else message.id, None)
        if wake is not None:
            wake.cancel()
        return await original_delete(self, message, *args, **kwargs)

    send_message._devhost_watched = True  # type: ignore[attr-defined]  # marks the patch as done
    QueueClient.send_message = send_message  # type: ignore[method-assign]  # patched on purpose
    QueueClient.delete_message = delete_message  # type: ignore[method-assign]  # patched on purpose
