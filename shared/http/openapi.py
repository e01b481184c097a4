"""The OpenAPI 3.1 description of the HTTP API (docs/contract.md), built once from the routes
in shared/http/contract.py and the app's own pydantic models, so the document cannot drift from
what the routes are and validate."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, JsonSchemaValue, models_json_schema

from shared.domain.interrupts import PAYLOADS_OF_KIND
from shared.http.contract import (
    ROUTES,
    Answer,
    Download,
    EventStream,
    Json,
    Model,
    Multipart,
    NoContent,
    Route,
    load_model,
)

if TYPE_CHECKING:
    from pydantic.dataclasses import PydanticDataclass

OPENAPI_VERSION = "3.1.0"
PROBLEM_JSON = "application/problem+json"
EVENT_STREAM = "text/event-stream"

_TITLES = {
    400: "The body or a parameter is malformed (not JSON, a bad continuation token).",
    401: "No valid API key.",
    404: "No such capture (or bucket, or person) for this user (another user's capture looks "
    "the same).",
    409: "The capture is not in a state that allows this (NOT_FILED: it has no filed item), or "
    "the Idempotency-Key was used for a different request.",
    412: "If-Match names an older version of the item (PRECONDITION_FAILED): read it again.",
    413: "The body is larger than the limit.",
    415: "The body's media type is not the one this route takes.",
    416: "The recording has no byte of the Range asked for (RANGE_NOT_SATISFIABLE); "
    "Content-Range says its size.",
    422: "The body or a query parameter is well-formed but not valid (fields, limits, empty "
    "capture).",
    428: "If-Match is required (PRECONDITION_REQUIRED).",
    429: "Too many requests, or too many open events feeds (TOO_MANY_FEEDS); retry after the "
    "Retry-After header's seconds.",
    503: "Storage is unavailable; retry after the Retry-After header's seconds.",
}

# Where models_json_schema put each model's schema: {"$ref": "#/components/schemas/<name>"}.
_Refs: TypeAlias = (
    "dict[tuple[type[BaseModel] | type[PydanticDataclass], JsonSchemaMode], JsonSchemaValue]"
)

_SECURED: list[dict[str, list[str]]] = [{"apiKey": []}, {"bearer": []}]
_REF_TEMPLATE = "#/components/schemas/{model}"
_NULL = {"type": "null"}


def _problems(*statuses: int) -> dict[str, Any]:
    return {
        str(status): {
            "description": _TITLES[status],
            "content": {PROBLEM_JSON: {"schema": _ref("Problem")}},
        }
        for status in statuses
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF_TEMPLATE.format(model=name)}


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


def _answer(answer: Answer, refs: _Refs) -> dict[str, Any]:
    if isinstance(answer, EventStream):
        return _sse(answer.description)
    if isinstance(answer, NoContent):
        return {"description": answer.description}
    if isinstance(answer, Download):
        binary = {"type": "string", "contentMediaType": answer.media_type}
        return {
            "description": answer.description,
            "content": {answer.media_type: {"schema": binary}},
        }
    media = {"schema": refs[load_model(answer.model), "serialization"]} if answer.model else {}
    return {"description": answer.description, "content": {"application/json": media}}


def _body(body: Model | Multipart, refs: _Refs) -> dict[str, Any]:
    if not isinstance(body, Multipart):
        schema = refs[load_model(body), "validation"]
        return {"required": True, "content": {"application/json": {"schema": schema}}}
    form = {
        "type": "object",
        "required": [body.field],
        "properties": {
            body.field: {
                "type": "string",
                "contentMediaType": "application/octet-stream",
                "description": body.description,
            }
        },
    }
    encoding = {body.field: {"contentType": ", ".join(body.media_types)}}
    return {
        "required": True,
        "content": {"multipart/form-data": {"schema": form, "encoding": encoding}},
    }


def _parameters(model: type[BaseModel] | None, where: str) -> list[dict[str, Any]]:
    """One parameter per field of `model`, described by the field's JSON schema."""
    if model is None:
        return []
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


def _operation(route: Route, refs: _Refs) -> dict[str, Any]:
    parameters = [
        *_parameters(route.path_params, "path"),
        *_parameters(route.query, "query"),
        *_parameters(route.headers, "header"),
    ]
    in_path = [p["name"] for p in parameters if p["in"] == "path"]
    if sorted(in_path) != sorted(re.findall(r"\{(\w+)\}", route.route)):
        raise ValueError(f"{route.operation_id}: path parameters {in_path} for {route.route!r}")
    op: dict[str, Any] = {"operationId": route.operation_id, "summary": route.summary}
    if route.description:
        op["description"] = route.description
    if parameters:
        op["parameters"] = parameters
    if route.body is not None:
        op["requestBody"] = _body(route.body, refs)
    op["responses"] = {
        **{str(status): _answer(answer, refs) for status, answer in route.answers.items()},
        **_problems(*route.problems),
    }
    op["security"] = [] if route.public else _SECURED
    return op


def _paths(refs: _Refs) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, refs)
    return paths


def _audio_types() -> list[str]:
    from shared.domain.audio import ACCEPTED_TYPES

    return ACCEPTED_TYPES


def _contract_models() -> list[tuple[type[BaseModel], JsonSchemaMode]]:
    """Every body (as validated) and every JSON answer (as serialised) of the routes."""
    models: dict[tuple[type[BaseModel], JsonSchemaMode], None] = {}
    for route in ROUTES:
        if route.body is not None and not isinstance(route.body, Multipart):
            models[load_model(route.body), "validation"] = None
        for answer in route.answers.values():
            if isinstance(answer, Json) and answer.model is not None:
                models[load_model(answer.model), "serialization"] = None
    # What a resume's payload takes: the interrupts' responseSchemas.
    for payloads in PAYLOADS_OF_KIND.values():
        for payload in payloads:
            models[payload, "validation"] = None
    return list(models)


def _model_schemas() -> tuple[_Refs, dict[str, Any]]:
    """Where each model's schema is, and the schemas, with what the models cannot say."""
    # Imported here, not at module level: the document is built on first request only.
    from ag_ui.core import EventType

    from shared.http.queries import MAX_VERSION_CHARS
    from shared.http.requests import MAX_ID_CHARS

    refs, top = models_json_schema(_contract_models(), ref_template=_REF_TEMPLATE)
    schemas = top["$defs"]
    # What the route checks beyond the model, said where clients and fuzzers can see it.
    schemas["VoiceNoteRequest"]["properties"]["contentType"]["enum"] = _audio_types()
    # AG-UI messages have a default `role`, so pydantic leaves it optional, but the messages
    # list is discriminated by it: a message without one is refused.
    _require_discriminators(schemas)
    run = schemas["RunAgentInput"]["properties"]
    for name in ("threadId", "runId"):
        run[name] |= {"minLength": 1, "maxLength": MAX_ID_CHARS}
    for branch in run["protocolVersion"].get("anyOf", []):
        if branch.get("type") == "string":
            branch["maxLength"] = MAX_VERSION_CHARS
    # A setting, so not a fixed maxItems: the document is the same for every deployment.
    run["messages"]["description"] = (
        "The conversation; its last user message is the capture (unless `resume` answers the "
        "thread's open question). At most MAX_MESSAGES (setting, default 50) messages."
    )
    # InboxPage carries its items as plain dicts (already serialised), which its generated
    # schema calls objects; say what they are.
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
    return refs, schemas


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
    refs, schemas = _model_schemas()
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Second brain capture API",
            "version": "1",
            "description": "Text and voice captures filed into People, Projects, Ideas, Admin; "
            "runs are AG-UI events over server-sent events.",
        },
        "paths": _paths(refs),
        "components": {
            "schemas": schemas,
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
