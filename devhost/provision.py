"""Create what the app expects to exist; in Azure the infrastructure templates do this."""

from __future__ import annotations

import contextlib

from azure.core.exceptions import ResourceExistsError
from azure.cosmos import PartitionKey

from shared.adapters import clients
from shared.settings import (
    BUCKET_CONTAINERS,
    CLASSIFY_QUEUE,
    INBOX,
    OUTCOMES_QUEUE,
    PUSH_SUBSCRIPTIONS,
    VOICE_CONTAINER,
    get_settings,
)

QUEUES = (
    CLASSIFY_QUEUE,
    f"{CLASSIFY_QUEUE}-poison",
    "webjobs-blobtrigger-poison",
    OUTCOMES_QUEUE,
    f"{OUTCOMES_QUEUE}-poison",
)


async def provision() -> None:
    database = await clients.cosmos_client().create_database_if_not_exists(
        get_settings().cosmos_database
    )
    for name in (INBOX, *BUCKET_CONTAINERS, PUSH_SUBSCRIPTIONS):
        await database.create_container_if_not_exists(name, PartitionKey(path="/userId"))
    with contextlib.suppress(ResourceExistsError):
        await clients.blob_service().create_container(VOICE_CONTAINER)
    for queue in QUEUES:
        with contextlib.suppress(ResourceExistsError):
            await clients.queue_client(queue).create_queue()
