"""Event Grid's own event schema as Blob storage uses it: what the local publisher
(eventgrid.py) sends and the devhost's blobs webhook (blob_webhook.py) reads."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

BLOB_CREATED = "Microsoft.Storage.BlobCreated"
VALIDATION_EVENT = "Microsoft.EventGrid.SubscriptionValidationEvent"
# The `aeg-event-type` header Event Grid sends with every delivery.
EVENT_TYPE_HEADER = "aeg-event-type"
SUBSCRIPTION_VALIDATION = "SubscriptionValidation"
NOTIFICATION = "Notification"
UNSUBSCRIBE = "Unsubscribe"


class EventGridEvent(BaseModel):
    """One event of the Event Grid schema (not CloudEvents), fields by their wire names;
    Event Grid posts a JSON array of them."""

    model_config = ConfigDict(extra="allow")

    id: str
    topic: str
    subject: str
    eventType: str
    eventTime: str
    data: dict[str, Any]
    dataVersion: str = ""
    metadataVersion: str = "1"


class StorageDiagnostics(BaseModel):
    batchId: str


class BlobCreatedData(BaseModel):
    """`data` of Microsoft.Storage.BlobCreated. The host's blob extension reads only `url`,
    `eTag` and `blobType`; the rest is there because Azure sends it."""

    model_config = ConfigDict(extra="allow")

    api: str = "PutBlob"
    clientRequestId: str = ""
    requestId: str = ""
    eTag: str  # without quotes, as Azure sends it
    contentType: str = "application/octet-stream"
    contentLength: int = 0
    blobType: str  # "BlockBlob", "AppendBlob" or "PageBlob"
    url: str
    sequencer: str = ""
    storageDiagnostics: StorageDiagnostics | None = None
