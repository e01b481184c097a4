"""Create what the app expects to exist; in Azure the infrastructure templates do this."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from azure.core.exceptions import ResourceExistsError
from azure.cosmos import PartitionKey
from azure.storage.blob import CorsRule

from shared.adapters.clients import Clients
from shared.settings import (
    ASK_THREADS,
    BACKFILL_QUEUE,
    BUCKET_CONTAINERS,
    CLASSIFY_QUEUE,
    DIGEST_QUEUE,
    DIGESTS,
    INBOX,
    OUTCOMES_QUEUE,
    PREFERENCES,
    PUSH_SUBSCRIPTIONS,
    RECORDINGS_CONTAINER,
    TRANSCRIBE_QUEUE,
    VOICE_CONTAINER,
    get_settings,
)

from .cors import cors_policy
from .emulators import REPO

QUEUES = (
    CLASSIFY_QUEUE,
    f"{CLASSIFY_QUEUE}-poison",
    "webjobs-blobtrigger-poison",
    OUTCOMES_QUEUE,
    f"{OUTCOMES_QUEUE}-poison",
    DIGEST_QUEUE,
    f"{DIGEST_QUEUE}-poison",
    TRANSCRIBE_QUEUE,
    f"{TRANSCRIBE_QUEUE}-poison",
    BACKFILL_QUEUE,
    f"{BACKFILL_QUEUE}-poison",
)

# What the web app needs from Blob storage across origins: PUT a voice note to its upload URL
# with the upload headers (shared/services/voice.py), and read why an upload failed. The same
# rule is in infra/storage.bicep (tests/integration/test_infra.py compares them). GET and HEAD
# are left out: the upload URL's SAS can only create, so they could never succeed anyway.
BLOB_CORS_METHODS = ("PUT",)
BLOB_CORS_ALLOWED_HEADERS = ("content-type", "x-ms-blob-type", "x-ms-meta-*")
BLOB_CORS_EXPOSED_HEADERS = ("etag", "x-ms-request-id", "x-ms-error-code")
BLOB_CORS_MAX_AGE_S = 3600


def blob_cors_rules(origins: Sequence[str]) -> list[CorsRule]:
    """One rule for the app's origins; none (the service refuses every preflight) without."""
    if not origins:
        return []
    return [
        CorsRule(
            list(origins),
            list(BLOB_CORS_METHODS),
            allowed_headers=list(BLOB_CORS_ALLOWED_HEADERS),
            exposed_headers=list(BLOB_CORS_EXPOSED_HEADERS),
            max_age_in_seconds=BLOB_CORS_MAX_AGE_S,
        )
    ]


async def provision(cors_origins: Sequence[str] | None = None) -> None:
    """Make the database, containers, queues and blob container, and give the Blob service
    CORS rules for `cors_origins` (the API's CORS origins; by default local.settings.json's
    Host.CORS, as `func start` reads it), replacing any it had."""
    if cors_origins is None:
        cors_origins = _configured_origins()
    settings = get_settings()
    clients = Clients(settings)  # its own, closed when done: the app opens the app's
    try:
        database = await clients.cosmos.create_database_if_not_exists(settings.cosmos_database)
        for name in (
            INBOX,
            *BUCKET_CONTAINERS,
            PUSH_SUBSCRIPTIONS,
            PREFERENCES,
            DIGESTS,
            ASK_THREADS,
        ):
            await database.create_container_if_not_exists(name, PartitionKey(path="/userId"))
        for container in (VOICE_CONTAINER, RECORDINGS_CONTAINER):
            with contextlib.suppress(ResourceExistsError):
                await clients.blob_service.create_container(container)
        await clients.blob_service.set_service_properties(cors=blob_cors_rules(cors_origins))
        for queue in QUEUES:
            with contextlib.suppress(ResourceExistsError):
                await clients.queue(queue).create_queue()
    finally:
        await clients.close()


def _configured_origins() -> tuple[str, ...]:
    policy = cors_policy(REPO)
    return policy.origins if policy else ()
