"""The local Event Grid publisher's record of what it delivered, against real Azurite, at the
two moments where it can be lost: a stop while a delivery's POST is out, and a delivery that
ends while the record is being saved. Either loss tells the webhook of a blob again after a
restart. The webhook is an in-process handler here, so that a test holds its answer."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from azure.storage.blob import BlobServiceClient

from devhost.eventgrid import STATE_CONTAINER, BlobEventPublisher, Subscription


class Webhook:
    """Answers the handshake at once, and a notification for a blob once the test lets it."""

    def __init__(self) -> None:
        self.posted: dict[str, asyncio.Event] = {}
        self.answer: dict[str, asyncio.Event] = {}

    def blob(self, name: str) -> tuple[asyncio.Event, asyncio.Event]:
        """When its POST came, and the gate of its answer."""
        return self.posted.setdefault(name, asyncio.Event()), self.answer.setdefault(
            name, asyncio.Event()
        )

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.headers["aeg-event-type"] == "SubscriptionValidation":
            return httpx.Response(
                200, json={"validationResponse": body[0]["data"]["validationCode"]}
            )
        posted, answer = self.blob(body[0]["subject"].rsplit("/", 1)[1])
        posted.set()
        await answer.wait()
        return httpx.Response(202)


@pytest.fixture
async def publisher(storage_conn: str) -> AsyncIterator[tuple[BlobEventPublisher, Webhook]]:
    container = f"grid-{uuid.uuid4().hex[:8]}"
    BlobServiceClient.from_connection_string(storage_conn).create_container(container)
    subscription = Subscription(container, f"http://127.0.0.1:9/{container}")
    publisher = BlobEventPublisher(subscription, interval=0.05, idle_interval=0.05)
    hook = Webhook()
    publisher._http = httpx.AsyncClient(transport=httpx.MockTransport(hook))
    await publisher.prepare()
    yield publisher, hook
    await publisher.close()


def saved(storage_conn: str, subscription: Subscription) -> dict[str, str]:
    blob = BlobServiceClient.from_connection_string(storage_conn).get_blob_client(
        STATE_CONTAINER, subscription.state_blob
    )
    return json.loads(blob.download_blob().readall())["delivered"]


def upload(storage_conn: str, container: str, name: str) -> None:
    service = BlobServiceClient.from_connection_string(storage_conn)
    service.get_blob_client(container, name).upload_blob(b"x", overwrite=True)


async def test_a_stop_while_a_post_is_out_saves_it_once_answered(publisher, storage_conn) -> None:
    publisher, hook = publisher
    posted, answer = hook.blob("note.txt")
    running = asyncio.create_task(publisher.run())
    upload(storage_conn, publisher.subscription.container, "note.txt")
    await asyncio.wait_for(posted.wait(), 10)
    running.cancel()  # Ctrl-C while the webhook holds the POST
    await asyncio.sleep(0.1)
    answer.set()  # it answers within the grace: taken, so not to be told of again
    with pytest.raises(asyncio.CancelledError):
        await running
    assert "note.txt" in saved(storage_conn, publisher.subscription)


async def test_a_delivery_that_ends_while_the_record_is_saved_is_saved_after(
    publisher, storage_conn
) -> None:
    publisher, hook = publisher
    (first_posted, first_answer), (second_posted, second_answer) = (
        hook.blob("first.txt"),
        hook.blob("second.txt"),
    )
    state = publisher._state
    upload_state = state.upload_blob
    uploading, go_on = asyncio.Event(), asyncio.Event()

    async def held_upload(*args, **kwargs):
        uploading.set()
        await go_on.wait()
        return await upload_state(*args, **kwargs)

    for name in ("first.txt", "second.txt"):
        upload(storage_conn, publisher.subscription.container, name)
    state.upload_blob = held_upload
    running = asyncio.create_task(publisher.run())
    try:
        await asyncio.wait_for(asyncio.gather(first_posted.wait(), second_posted.wait()), 10)
        first_answer.set()  # its record is saved by the next poll: held there
        await asyncio.wait_for(uploading.wait(), 10)
        second_answer.set()  # and the second delivery ends while that save waits
        await asyncio.sleep(0.2)
        state.upload_blob = upload_state
        go_on.set()

        # A later poll saves the second too (no stop needed: a process killed later has it).
        for _ in range(200):
            if "second.txt" in saved(storage_conn, publisher.subscription):
                break
            await asyncio.sleep(0.05)
        assert "second.txt" in saved(storage_conn, publisher.subscription)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
