"""A local Event Grid for Blob storage, which Azurite does not have: it watches a container and
posts `Microsoft.Storage.BlobCreated` events to a webhook, as a subscription in Azure would.

One publisher is one subscription: a container (the subject filter
`/blobServices/default/containers/<container>/blobs/`, BlobCreated only) and a webhook.
Before any event it does the validation handshake (a `SubscriptionValidation` delivery whose
code the webhook must echo), waiting for the webhook to come up. Then it lists the container
every `interval` (or `idle_interval` while nothing comes: the same by default) and delivers
each new blob version (name, ETag) on its own, as a one-event array in the Event Grid schema,
with Event Grid's headers. A delivery that fails or times out (30 s) is retried with backoff
on Event Grid's schedule, shortened tenfold for local work (1 s, 3 s, 6 s, 30 s, then every
minute; 30 attempts), except after 400, 401, 403 and 413, which Event Grid does not retry either.

Where it starts: like a new subscription in Azure, it tells only of blobs that appear after
it was first created. What it has delivered is kept in Azurite itself
(`devhost-eventgrid/subscriptions/<name>.json`), so a publisher that was stopped delivers,
when it starts again, the blobs uploaded meanwhile rather than losing them, and wiping
Azurite's data forgets the subscription with the blobs. The subscription's name comes from
its container and webhook URL.

What Azurite does not tell is made up: `api` is always PutBlob, request ids are fresh
UUIDs. The host's blob extension reads only `data.url`, `data.eTag` and `data.blobType`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import BlobProperties
from azure.storage.blob.aio import BlobServiceClient, ContainerClient

from .blob_queue import function_id
from .blobs import compile_blob_path, is_event_grid_source
from .eventgrid_schema import (
    BLOB_CREATED,
    EVENT_TYPE_HEADER,
    NOTIFICATION,
    SUBSCRIPTION_VALIDATION,
    VALIDATION_EVENT,
    BlobCreatedData,
    EventGridEvent,
    StorageDiagnostics,
)
from .loader import LoadedFunction
from .storage import connection_string, proxy_options

log = logging.getLogger("devhost.eventgrid")

STATE_CONTAINER = "devhost-eventgrid"
DELIVERY_TIMEOUT_S = 30.0  # how long Event Grid waits for an answer
RETRY_DELAYS_S = (1.0, 3.0, 6.0, 30.0, 60.0)  # Event Grid's 10 s, 30 s, 1 min, 5 min, 10 min
MAX_ATTEMPTS = 30
# On stopping, how long a delivery whose POST is out may take to be answered: its answer
# says whether it was delivered, so a restart does not tell the webhook of it again.
STOP_GRACE_S = 5.0
NOT_RETRIED = frozenset({400, 401, 403, 413})
# What Azure's system topic for a storage account looks like; the ids are made up.
TOPIC = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/local"
    "/providers/Microsoft.Storage/storageAccounts/{account}"
)


class SubscriptionError(RuntimeError):
    """The webhook did not pass the validation handshake."""


@dataclass(frozen=True)
class Subscription:
    container: str
    webhook: str
    connection: str = "AzureWebJobsStorage"  # the app setting with the storage account

    @property
    def name(self) -> str:
        digest = hashlib.sha256(self.webhook.encode()).hexdigest()[:12]
        return f"{self.container}-{digest}"

    @property
    def state_blob(self) -> str:
        """Where, in STATE_CONTAINER, what it delivered is kept."""
        return f"subscriptions/{self.name}.json"


def subscriptions_for(functions: Iterable[LoadedFunction], base_url: str) -> list[Subscription]:
    """One subscription per Event Grid-source blob trigger, to its webhook on `base_url`."""
    subscriptions = []
    for function in functions:
        if function.trigger.type != "blobTrigger" or not is_event_grid_source(function):
            continue
        container, _prefix, _pattern = compile_blob_path(function.trigger.raw["path"])
        webhook = f"{base_url}/runtime/webhooks/blobs?functionName={function_id(function)}"
        connection = function.trigger.raw.get("connection") or "AzureWebJobsStorage"
        subscriptions.append(Subscription(container, webhook, connection))
    return subscriptions


class BlobEventPublisher:
    def __init__(
        self, subscription: Subscription, *, interval: float = 0.25, idle_interval: float = 0.25
    ) -> None:
        self.subscription = subscription
        # Listed every `interval` while blobs come, backing off to `idle_interval` while none
        # does. The upload container holds only notes in flight (a transcribed note's recording
        # is kept in another container), so an idle listing is one short request: no back-off by
        # default, which cost a voice note half a second on average (a 1 s back-off's wait).
        self._interval = interval
        self._idle_interval = max(interval, idle_interval)
        # Listed up to four times a second: no proxy lookup on each (storage.proxy_options).
        self._service = BlobServiceClient.from_connection_string(
            connection_string(subscription.connection), **proxy_options()
        )
        self._container: ContainerClient = self._service.get_container_client(
            subscription.container
        )
        self._state = self._service.get_blob_client(STATE_CONTAINER, subscription.state_blob)
        self._topic = TOPIC.format(account=self._service.account_name)
        self._http = httpx.AsyncClient(timeout=DELIVERY_TIMEOUT_S)
        self._delivered: dict[str, str] = {}  # blob name → ETag told of (or there at the start)
        self._in_flight: set[tuple[str, str]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._dirty = False
        self._stopping = asyncio.Event()

    async def prepare(self) -> None:
        """Load what was delivered before, or, for a new subscription, take the blobs there
        now as told of. Done before the webhook's host listens, so no upload falls between."""
        try:
            saved = await (await self._state.download_blob()).readall()
            self._delivered = dict(json.loads(saved)["delivered"])
            log.info("subscription %s resumed", self.subscription.name)
        except ResourceNotFoundError:
            self._delivered = {n: p.etag for n, p in (await self._listing()).items()}
            with contextlib.suppress(ResourceExistsError):
                await self._service.create_container(STATE_CONTAINER)
            await self._save()
            log.info("subscription %s created", self.subscription.name)

    async def run(self, validation_timeout: float = 60.0) -> None:
        """Validate the webhook, then deliver until cancelled."""
        await self.validate(validation_timeout)
        log.info(
            "delivering BlobCreated events of %s to %s",
            self.subscription.container,
            self.subscription.webhook,
        )
        interval = self._interval
        try:
            while True:
                try:
                    found = await self.poll()
                except Exception as exc:  # Azurite down for a moment: keep polling
                    log.warning("listing %s failed: %r", self.subscription.container, exc)
                    found = False
                interval = self._interval if found else min(self._idle_interval, interval * 2)
                await asyncio.sleep(interval)
        finally:
            await self._stop_deliveries()
            if self._dirty:
                with contextlib.suppress(Exception):
                    await self._save()

    async def _stop_deliveries(self) -> None:
        """Deliveries waiting to retry stop at once (told of again after a restart); one
        whose POST is out is given STOP_GRACE_S for its answer, so that what the webhook
        took is saved as delivered and not told of twice."""
        self._stopping.set()
        if self._tasks:
            _done, late = await asyncio.wait(set(self._tasks), timeout=STOP_GRACE_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    async def close(self) -> None:
        await self._http.aclose()
        await self._service.close()

    async def validate(self, patience: float) -> None:
        """The handshake: post a validation event until the webhook answers; it must echo
        the code. A webhook that is not up yet is waited for, up to `patience` seconds."""
        code = str(uuid.uuid4())
        event = EventGridEvent(
            id=str(uuid.uuid4()),
            topic=self._topic,
            subject="",
            eventType=VALIDATION_EVENT,
            eventTime=_now(),
            data={"validationCode": code},
            dataVersion="2",
        )
        deadline = asyncio.get_running_loop().time() + patience
        while True:
            try:
                response = await self._post([event], SUBSCRIPTION_VALIDATION)
            except httpx.TransportError as exc:
                if asyncio.get_running_loop().time() > deadline:
                    raise SubscriptionError(f"{self.subscription.webhook}: {exc!r}") from exc
                await asyncio.sleep(0.2)
                continue
            if response.status_code >= 500 and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.5)
                continue
            try:
                answered = response.json().get("validationResponse")
            except ValueError:
                answered = None
            if response.status_code != 200 or answered != code:
                raise SubscriptionError(
                    f"{self.subscription.webhook} failed the validation handshake: "
                    f"{response.status_code} {response.text[:300]}"
                )
            return

    async def poll(self) -> bool:
        """One look at the container: deliver new versions, forget blobs that are gone.
        Whether it found a new one."""
        current = await self._listing()
        found = False
        for name, props in current.items():
            key = (name, props.etag)
            if self._delivered.get(name) == props.etag or key in self._in_flight:
                continue
            found = True
            self._in_flight.add(key)
            task = asyncio.create_task(self._deliver(self._blob_created(props), key))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        for name in [n for n in self._delivered if n not in current]:
            del self._delivered[name]
            self._dirty = True
        if self._dirty:
            await self._save()
        return found

    async def _listing(self) -> dict[str, BlobProperties]:
        try:
            return {props.name: props async for props in self._container.list_blobs()}
        except ResourceNotFoundError:
            return {}  # no container yet: no blobs

    async def _deliver(self, event: EventGridEvent, key: tuple[str, str]) -> None:
        name, etag = key
        try:
            for attempt in range(MAX_ATTEMPTS):
                status = await self._attempt(event, attempt)
                if status is not None and 200 <= status < 300:
                    break
                if status in NOT_RETRIED:
                    log.warning("event for %s refused with %d: dropped", name, status)
                    break
                delay = RETRY_DELAYS_S[min(attempt, len(RETRY_DELAYS_S) - 1)]
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
                if self._stopping.is_set():
                    return  # not delivered: a restart tells of it
            else:
                log.warning("event for %s undelivered after %d attempts", name, MAX_ATTEMPTS)
            self._delivered[name] = etag
            self._dirty = True
        finally:
            self._in_flight.discard(key)

    async def _attempt(self, event: EventGridEvent, attempt: int) -> int | None:
        try:
            response = await self._post([event], NOTIFICATION, delivery_count=attempt)
        except httpx.TransportError as exc:  # refused, reset or timed out: retried
            log.info("delivering %s failed (attempt %d): %r", event.subject, attempt + 1, exc)
            return None
        if not 200 <= response.status_code < 300:
            log.info(
                "delivering %s: %d (attempt %d)", event.subject, response.status_code, attempt + 1
            )
        return response.status_code

    async def _post(
        self, events: list[EventGridEvent], kind: str, delivery_count: int = 0
    ) -> httpx.Response:
        headers = {
            EVENT_TYPE_HEADER: kind,
            "aeg-subscription-name": self.subscription.name.upper(),
            "aeg-delivery-count": str(delivery_count),
            "aeg-data-version": events[0].dataVersion,
            "aeg-metadata-version": events[0].metadataVersion,
        }
        body = [e.model_dump(mode="json") for e in events]
        return await self._http.post(self.subscription.webhook, json=body, headers=headers)

    def _blob_created(self, props: BlobProperties) -> EventGridEvent:
        name: str = props.name
        blob_type = getattr(props.blob_type, "value", props.blob_type)
        data = BlobCreatedData(
            api="PutBlob",
            clientRequestId=str(uuid.uuid4()),
            requestId=str(uuid.uuid4()),
            eTag=props.etag.strip('"'),
            contentType=props.content_settings.content_type or "application/octet-stream",
            contentLength=props.size,
            blobType=str(blob_type),
            url=self._container.get_blob_client(name).url,
            # Azure's orders the versions of a blob; the time of the write does that here.
            sequencer=f"{int(props.last_modified.timestamp() * 1_000_000):032X}",
            storageDiagnostics=StorageDiagnostics(batchId=str(uuid.uuid4())),
        )
        return EventGridEvent(
            id=str(uuid.uuid4()),
            topic=self._topic,
            subject=f"/blobServices/default/containers/{self.subscription.container}/blobs/{name}",
            eventType=BLOB_CREATED,
            eventTime=_now(props.last_modified),
            data=data.model_dump(mode="json"),
        )

    async def _save(self) -> None:
        # Clean from the moment the state is taken: a delivery that ends while it uploads
        # marks it dirty again, and the next poll (or the stop) saves that one too.
        self._dirty = False
        state = {
            "container": self.subscription.container,
            "webhook": self.subscription.webhook,
            "delivered": self._delivered,
        }
        try:
            await self._state.upload_blob(json.dumps(state).encode(), overwrite=True)
        except BaseException:
            self._dirty = True
            raise


def _now(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).astimezone(UTC).isoformat().replace("+00:00", "Z")
