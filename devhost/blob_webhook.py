"""The blob extension's webhook, `/runtime/webhooks/blobs?functionName=Host.Functions.<name>`:
where Event Grid delivers Blob storage events for Event Grid-source blob triggers.

As the host's extension does it: the `aeg-event-type` header says what came. For
`SubscriptionValidation` it answers 200 with `{"validationResponse": <data.validationCode>}`;
for `Notification` it takes the JSON array (or a single object) of events, puts one message
per event on the host's blob trigger queue (blob_queue.py) and answers 202 before anything
runs; `Unsubscribe` gets 202. The container and blob come from `data.url`, the version from
`data.eTag`; the event's type is not looked at (the subscription's filter lets only
BlobCreated through, and a message for a blob that is gone is skipped).

Where the devhost is stricter than the host, to make a wrong local set-up visible at once:
a function that is no Event Grid-source blob trigger of the app is 404 (the host would queue
the event and drop it later), and a body it cannot read is 400 (the host fails with 500).
Event Grid does not retry a 400. Only POST reaches the handler; others are 405.

The system key (`code=`, the `blobs_extension` key, which Azure requires) is not checked:
`func start` does not check keys either unless started with `--enableAuth`.
"""

from __future__ import annotations

import json
import logging
from ipaddress import ip_address
from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from .blob_queue import FUNCTION_ID_PREFIX, BlobTriggerMessage, BlobTriggerQueue
from .eventgrid_schema import (
    EVENT_TYPE_HEADER,
    NOTIFICATION,
    SUBSCRIPTION_VALIDATION,
    UNSUBSCRIBE,
    BlobCreatedData,
)

log = logging.getLogger("devhost.blob_webhook")

MAX_BODY = 1024 * 1024  # Event Grid's own limit on a delivery


class BadEvents(ValueError):
    """The request's body is not what Event Grid sends."""


class BlobWebhook:
    """An ASGI app for the `blobs` webhook of the HTTP gateway."""

    def __init__(self, queue: BlobTriggerQueue) -> None:
        self._queue = queue

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._answer(Request(scope, receive))
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        if request.method != "POST":
            return Response(status_code=405, headers={"Allow": "POST"})
        name = request.query_params.get("functionName", "")
        if name not in self._queue.functions:
            return _problem(
                404,
                f"no Event Grid-source blob trigger {name!r}; expected functionName="
                f"{FUNCTION_ID_PREFIX}<function> with one of: "
                + ", ".join(sorted(self._queue.functions)),
            )
        body = await request.body()
        if len(body) > MAX_BODY:
            return _problem(413, "a delivery is at most 1 MB")
        kind = request.headers.get(EVENT_TYPE_HEADER, "").lower()
        try:
            if kind == SUBSCRIPTION_VALIDATION.lower():
                code = validation_code(body)
                log.info("Event Grid subscription validated for %s", name)
                return JSONResponse({"validationResponse": code})
            if kind == NOTIFICATION.lower():
                messages = [to_message(event, name) for event in events_of(body)]
            elif kind == UNSUBSCRIBE.lower():
                return Response(status_code=202)
            else:
                raise BadEvents(
                    f"header {EVENT_TYPE_HEADER} must be {SUBSCRIPTION_VALIDATION}, "
                    f"{NOTIFICATION} or {UNSUBSCRIBE}"
                )
        except BadEvents as exc:
            return _problem(400, str(exc))
        try:
            for message in messages:
                await self._queue.enqueue(message)
                log.info(
                    "Event Grid: %s/%s queued for %s",
                    message.container_name,
                    message.blob_name,
                    name,
                )
        except Exception:  # storage down: a 5xx, so Event Grid delivers again later
            log.exception("could not queue the events for %s", name)
            return Response(status_code=503)
        return Response(status_code=202)


def validation_code(body: bytes) -> str:
    """data.validationCode of the first event (Event Grid schema), or of the CloudEvent, whose
    data may come as a JSON string."""
    payload = _json(body)
    event = payload[0] if isinstance(payload, list) and payload else payload
    data = event.get("data") if isinstance(event, dict) else None
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            data = None
    code = data.get("validationCode") if isinstance(data, dict) else None
    if not isinstance(code, str) or not code:
        raise BadEvents("a validation event must carry data.validationCode")
    return code


def events_of(body: bytes) -> list[dict[str, Any]]:
    payload = _json(body)
    events = payload if isinstance(payload, list) else [payload]
    if not events or not all(isinstance(e, dict) for e in events):
        raise BadEvents("the body must be a JSON array of events (or one event)")
    return events


def to_message(event: dict[str, Any], function_id: str) -> BlobTriggerMessage:
    try:
        data = BlobCreatedData.model_validate(event.get("data"))
    except ValidationError as exc:
        raise BadEvents(f"event {event.get('id')!r}: data needs url, eTag and blobType") from exc
    container, blob = blob_location(data.url)
    return BlobTriggerMessage(
        function_id=function_id,
        blob_type=data.blobType,
        container_name=container,
        blob_name=blob,
        etag=f'"{data.eTag}"',
    )


def blob_location(url: str) -> tuple[str, str]:
    """Container and blob name from a blob URL; the emulator's URLs (an IP address or
    localhost as host) carry the account name as the first path segment."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        raise BadEvents(f"data.url {url!r} is not a blob URL")
    segments = parts.path.lstrip("/").split("/")
    if _path_style(parts.hostname):
        segments = segments[1:]
    container, blob = (segments[0], "/".join(segments[1:])) if segments else ("", "")
    if not container or not blob:
        raise BadEvents(f"data.url {url!r} names no container and blob")
    return unquote(container), unquote(blob)


def _path_style(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        ip_address(host)
    except ValueError:
        return False
    return True


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise BadEvents("the body is not JSON") from exc


def _problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse(
        {"type": "about:blank", "title": "Event Grid webhook", "status": status, "detail": detail},
        status_code=status,
        media_type="application/problem+json",
    )
