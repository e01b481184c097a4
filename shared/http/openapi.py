"""The OpenAPI 3.1 description of the HTTP API (docs/contract.md), built once from the app's
own pydantic models so the document cannot drift from what the routes validate."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from pydantic import BaseModel

OPENAPI_VERSION = "3.1.0"
PROBLEM_JSON = "application/problem+json"
EVENT_STREAM = "text/event-stream"

_TITLES = {
    400: "The body or a parameter is malformed (not JSON, a bad continuation token).",
    401: "No valid API key.",
    404: "No such capture for this user (another user's capture looks the same).",
    409: "The capture is not in a state that allows this, or the Idempotency-Key was used for "
    "a different request.",
    413: "The body is larger than the limit.",
    415: "The body's media type is not the one this route takes.",
    422: "The body is well-formed but not valid (fields, limits, empty capture).",
    429: "Too many requests, or too many open events feeds (TOO_MANY_FEEDS); retry after the "
    "Retry-After header's seconds.",
    503: "Storage is unavailable; retry after the Retry-After header's seconds.",
}

_SECURED = [{"apiKey": []}, {"bearer": []}]
_REF_TEMPLATE = "#/components/schemas/{model}"
_NULL = {"type": "null"}

_ID = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "The capture id (a UUID).",
    "schema": {"type": "string", "format": "uuid"},
}
# Deleting is idempotent: any id that names no capture of the caller's is already gone (204).
_ANY_ID = {**_ID, "schema": {"type": "string"}}
_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Retries with the same key land on the same capture; the same key with "
    "a different request is a 409 (IDEMPOTENCY_KEY_REUSED).",
    "schema": {"type": "string", "maxLength": 200},
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF_TEMPLATE.format(model=name)}


def _json_body(schema_name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(schema_name)}}}


def _problems(*statuses: int) -> dict[str, Any]:
    return {
        str(status): {
            "description": _TITLES[status],
            "content": {PROBLEM_JSON: {"schema": _ref("Problem")}},
        }
        for status in statuses
    }


def _json(description: str, schema_name: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": _ref(schema_name)}},
    }


def _sse(description: str) -> dict[str, Any]:
    # OpenAPI 3.1 has `schema` describe each event of a stream: here its one `data:` line, an
    # AG-UI event as JSON, and never an `event:` line (the mobile client listens to messages).
    event = {
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"const": "message"},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": _ref("AgUiEvent"),
            },
        },
    }
    return {"description": description, "content": {EVENT_STREAM: {"schema": event}}}


def _operation(
    operation_id: str,
    summary: str,
    responses: dict[str, Any],
    *,
    parameters: list[dict] | None = None,
    body: dict[str, Any] | None = None,
    public: bool = False,
) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": operation_id, "summary": summary}
    if parameters:
        op["parameters"] = parameters
    if body:
        op["requestBody"] = body
    op["responses"] = responses
    op["security"] = [] if public else _SECURED
    return op


def _paths() -> dict[str, Any]:
    body_errors = (400, 401, 413, 415, 422, 429)
    capture_errors = (401, 404, 429, 503)
    return {
        "/api/capture": {
            "post": _operation(
                "capture",
                "Text capture: the last user message of an AG-UI RunAgentInput, answered as a run.",
                {"200": _sse("The AG-UI run of the capture."), **_problems(*body_errors)},
                parameters=[_IDEMPOTENCY_KEY],
                body=_json_body("RunAgentInput"),
            )
        },
        "/api/voice-notes": {
            "post": _operation(
                "startVoiceNote",
                "Start a voice capture: an upload URL for one PUT of the audio.",
                {
                    "201": _json("The capture and where to upload it.", "VoiceUpload"),
                    **_problems(*body_errors, 409, 503),
                },
                parameters=[_IDEMPOTENCY_KEY],
                body=_json_body("VoiceNoteRequest"),
            )
        },
        "/api/voice-capture": {
            "post": _operation(
                "voiceCapture",
                "One-request voice capture: multipart `file`, answered as the capture's run.",
                {
                    "200": _sse("The AG-UI run of the capture."),
                    **_problems(*body_errors, 409, 503),
                },
                parameters=[_IDEMPOTENCY_KEY],
                body={
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "required": ["file"],
                                "properties": {
                                    "file": {
                                        "type": "string",
                                        "contentMediaType": "application/octet-stream",
                                        "description": "The audio, with a file name.",
                                    }
                                },
                            },
                            "encoding": {"file": {"contentType": ", ".join(_audio_types())}},
                        }
                    },
                },
            )
        },
        "/api/captures/{id}": {
            "get": _operation(
                "getCapture",
                "The capture (inbox item).",
                {"200": _json("The inbox item.", "InboxItem"), **_problems(*capture_errors)},
                parameters=[_ID],
            ),
            "delete": _operation(
                "deleteCapture",
                "Delete a capture and what it filed (also when it is already gone).",
                {
                    "204": {"description": "Deleted, or already gone."},
                    **_problems(401, 409, 429, 503),
                },
                parameters=[_ANY_ID],
            ),
        },
        "/api/captures/{id}/events": {
            "get": _operation(
                "captureEvents",
                "The capture's AG-UI run: replayed, then followed live to its outcome.",
                {"200": _sse("The AG-UI run of the capture."), **_problems(*capture_errors)},
                parameters=[_ID],
            )
        },
        "/api/captures/{id}/bucket": {
            "post": _operation(
                "pickBucket",
                "File the capture in the bucket the user chose.",
                {
                    "200": _json("The inbox item as filed.", "InboxItem"),
                    **_problems(*body_errors, 404, 409, 503),
                },
                parameters=[_ID],
                body=_json_body("BucketChoice"),
            )
        },
        "/api/captures/{id}/follow-up": {
            "post": _operation(
                "followUp",
                "Answer a MISUNDERSTOOD capture: a RunAgentInput with the clarification.",
                {
                    "200": _sse("The AG-UI run of the capture, classified again."),
                    **_problems(*body_errors, 404, 409, 503),
                },
                parameters=[_ID],
                body=_json_body("RunAgentInput"),
            )
        },
        "/api/inbox": {
            "get": _operation(
                "listInbox",
                "The user's captures, newest first, paged by continuation token.",
                {
                    "200": _json("One page of captures.", "InboxPage"),
                    **_problems(400, 401, 422, 429, 503),
                },
                parameters=_inbox_parameters(),
            )
        },
        "/api/health": {
            "get": _operation(
                "health",
                "Health of the app's dependencies; no secrets.",
                {
                    "200": _json("Every dependency answers.", "HealthReport"),
                    "503": _json("A dependency is down.", "HealthReport"),
                },
                public=True,
            )
        },
        "/api/openapi.json": {
            "get": _operation(
                "openapi",
                "This document.",
                {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}}},
                public=True,
            )
        },
    }


def _inbox_parameters() -> list[dict[str, Any]]:
    from shared.services.inbox import InboxQuery

    return _parameters(InboxQuery, "query")


def _parameters(model: type[BaseModel], where: str) -> list[dict[str, Any]]:
    """One parameter per field of `model`, described by the field's JSON schema."""
    schema = model.model_json_schema(ref_template=_REF_TEMPLATE)
    if "$defs" in schema:
        raise ValueError(f"{model.__name__}: a parameter is one plain value, not an object")
    required = set(schema.get("required", ()))
    parameters = []
    for name, field in schema["properties"].items():
        field = {key: value for key, value in field.items() if key != "title"}
        parameter = {"name": name, "in": where, "required": name in required}
        if "description" in field:
            parameter["description"] = field.pop("description")
        parameter["schema"] = _absent_not_null(field)
        parameters.append(parameter)
    return parameters


def _absent_not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional parameter is left out, never null: its schema without the null."""
    options = schema.get("anyOf", ())
    if _NULL in options:
        rest = [option for option in options if option != _NULL]
        schema = {key: value for key, value in schema.items() if key != "anyOf"}
        schema |= rest[0] if len(rest) == 1 else {"anyOf": rest}
    if "default" in schema and schema["default"] is None:
        del schema["default"]
    return schema


def _audio_types() -> list[str]:
    from shared.domain.audio import ACCEPTED_TYPES

    return ACCEPTED_TYPES


def _model_schemas() -> dict[str, Any]:
    # Imported here, not at module level: the document is built on first request only.
    from ag_ui.core import EventType, RunAgentInput
    from pydantic.json_schema import models_json_schema

    from shared.adapters.health import HealthReport
    from shared.domain.capture import InboxItem
    from shared.http.requests import MAX_ID_CHARS, BucketChoice, VoiceNoteRequest
    from shared.services.voice import VoiceUpload

    _, top = models_json_schema(
        [
            (RunAgentInput, "validation"),
            (VoiceNoteRequest, "validation"),
            (BucketChoice, "validation"),
            (VoiceUpload, "serialization"),
            (InboxItem, "serialization"),
            (HealthReport, "serialization"),
        ],
        ref_template=_REF_TEMPLATE,
    )
    schemas = top["$defs"]
    # What the route checks beyond the model, said where clients and fuzzers can see it.
    schemas["VoiceNoteRequest"]["properties"]["contentType"]["enum"] = _audio_types()
    # AG-UI messages have a default `role`, so pydantic leaves it optional, but the messages
    # list is discriminated by it: a message without one is refused.
    _require_discriminators(schemas)
    run = schemas["RunAgentInput"]["properties"]
    for name in ("threadId", "runId"):
        run[name] |= {"minLength": 1, "maxLength": MAX_ID_CHARS}
    # A setting, so not a fixed maxItems: the document is the same for every deployment.
    run["messages"]["description"] = (
        "The conversation; its last user message is the capture. At most MAX_MESSAGES "
        "(setting, default 50) messages."
    )
    # InboxPage carries its items as plain dicts (already serialised); say what they are.
    schemas["InboxPage"] = {
        "type": "object",
        "required": ["items", "continuationToken"],
        "properties": {
            "items": {"type": "array", "items": _ref("InboxItem")},
            "continuationToken": {"type": ["string", "null"]},
        },
    }
    schemas["AgUiEvent"] = {
        "type": "object",
        "description": "One AG-UI event (camelCase fields); see https://docs.ag-ui.com.",
        "required": ["type", "timestamp"],
        "properties": {
            "type": {"type": "string", "enum": [t.value for t in EventType]},
            "timestamp": {"type": "integer"},
        },
    }
    schemas["Problem"] = {
        "type": "object",
        "description": "RFC 9457 problem details.",
        "required": ["type", "title", "status", "detail"],
        "properties": {
            "type": {"type": "string"},
            "title": {"type": "string"},
            "status": {"type": "integer", "minimum": 400, "maximum": 599},
            "detail": {"type": "string"},
            "code": {"type": "string", "description": "A stable machine-readable reason."},
            "errors": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"loc": {"type": "string"}, "msg": {"type": "string"}},
                },
            },
        },
    }
    return schemas


def _require_discriminators(schemas: dict[str, Any]) -> None:
    """AG-UI's tagged unions (messages by `role`, content parts by `type`) have defaults on the
    tag, so pydantic leaves it optional; but a value without it is refused. Say so."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            discriminator = node.get("discriminator")
            if isinstance(discriminator, dict):
                for ref in discriminator.get("mapping", {}).values():
                    target = schemas[ref.rsplit("/", 1)[1]]
                    tag = discriminator["propertyName"]
                    target["required"] = sorted({*target.get("required", ()), tag})
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schemas)


@cache
def openapi_document() -> dict[str, Any]:
    """The whole document; built on first use, then the same object every time."""
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Second brain capture API",
            "version": "1",
            "description": "Text and voice captures filed into People, Projects, Ideas, Admin; "
            "runs are AG-UI events over server-sent events.",
        },
        "paths": _paths(),
        "components": {
            "schemas": _model_schemas(),
            "securitySchemes": {
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                "bearer": {"type": "http", "scheme": "bearer"},
            },
        },
    }


@cache
def openapi_json() -> bytes:
    """The document serialised once, for the route to send as is."""
    return json.dumps(openapi_document(), separators=(",", ":")).encode()
