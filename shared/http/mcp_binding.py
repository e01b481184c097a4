"""The MCP door's edge: the Functions MCP extension's binding contract (what its triggers hand a
function, what a function hands back) and every refusal told as a tool error, once.

The extension (Azure/azure-functions-mcp-extension, its host-extension spec) speaks MCP over
streamable HTTP at `/runtime/webhooks/mcp` and calls one function per tool call, resource read
or prompt with an invocation context as JSON: the tool's `name` and `arguments`, the
`sessionid`, the `clientinfo`, and the `transport`, whose `properties.headers` are the HTTP
headers of the request that carried the call (how the user's own key reaches us). A tool
function declared with `useResultSchema` answers an `McpToolResult`: `{"type":
"call_tool_result", "content": <a CallToolResult as JSON>, "structuredContent": <JSON>}`,
which the extension passes through as the call's result; a resource function answers the
text, which the extension wraps with the resource's URI and MIME type; a prompt function
answers the text of one user message.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.domain.documents import Document
from shared.domain.errors import Refused, StorageUnavailable
from shared.http.auth import authenticate_headers
from shared.http.edge import problem_for
from shared.http.problems import TITLES, Problem

log = logging.getLogger(__name__)

CALL_TOOL_RESULT = "call_tool_result"

# The code a tool error carries when the HTTP API's answer has none (its problem+json is then
# told by its status alone): the status's title, as a code.
_CODE_OF_STATUS = {status: title.upper().replace(" ", "_") for status, title in TITLES.items()}
_CODE_OF_STATUS[500] = "INTERNAL"


class Transport(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = "unknown"
    session_id: str | None = Field(default=None, alias="sessionId")
    properties: dict[str, Any] = Field(default_factory=dict)

    def headers(self) -> dict[str, str]:
        raw = self.properties.get("headers")
        if not isinstance(raw, dict):
            return {}
        return {str(k): str(v) for k, v in raw.items() if isinstance(v, str | int)}


class Invocation(BaseModel):
    """What the extension hands a tool, resource or prompt function (ToolInvocationContext,
    ResourceInvocationContext, PromptInvocationContext): the fields this app reads."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = None  # the tool's or the prompt's
    uri: str | None = None  # the resource's, as the client asked for it
    arguments: dict[str, Any] | None = None
    session_id: str | None = Field(default=None, alias="sessionid")
    transport: Transport = Field(default_factory=Transport)

    @classmethod
    def read(cls, raw: str | bytes | Mapping[str, Any]) -> Invocation:
        try:
            if isinstance(raw, Mapping):
                return cls.model_validate(dict(raw))
            return cls.model_validate_json(raw)
        except ValidationError as exc:
            # Only the extension calls these functions: a context it sent that we cannot read
            # is our bug, not the client's.
            raise ValueError("not an MCP invocation context") from exc

    def user(self) -> str:
        """The caller, by the key its request carried (X-API-Key or Authorization: Bearer,
        as on every HTTP route), held to the same budget; a Problem (401, 429) otherwise."""
        return authenticate_headers(self.transport.headers())


def tool_result(document: Document) -> str:
    """A use case's answer as the call's result: its JSON as structured content, and as text
    for the clients (and models) that read only text."""
    body = document.to_json()
    return _envelope(json.dumps(body, ensure_ascii=False), body, is_error=False)


def tool_error(exc: Exception) -> str:
    """Any failure of a tool call as a tool error (`isError`), which the model reads and can
    act on: the HTTP API's status and code for the same refusal (`edge.problem_for`, the one
    mapping of the error family), and its safe message; `retryAfter` where HTTP would send
    Retry-After. Nothing unexpected is told but INTERNAL."""
    if not isinstance(exc, Problem | Refused | StorageUnavailable):
        log.exception("an MCP tool call failed", exc_info=exc)
    problem = problem_for(exc)
    error: dict[str, Any] = {
        "status": problem.status,
        "code": problem.code or _CODE_OF_STATUS.get(problem.status, "ERROR"),
        "message": problem.detail,
    }
    retry_after = (problem.headers or {}).get("Retry-After")
    if retry_after is not None:
        error["retryAfter"] = int(retry_after)
    errors = problem.extra.get("errors")
    if errors:
        error["errors"] = errors
    text = f"{error['code']}: {error['message']}"
    return _envelope(text, {"error": error}, is_error=True)


def _envelope(text: str, structured: dict[str, Any], *, is_error: bool) -> str:
    result = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": is_error,
    }
    return json.dumps(
        {
            "type": CALL_TOOL_RESULT,
            "content": json.dumps(result, ensure_ascii=False),
            "structuredContent": json.dumps(structured, ensure_ascii=False),
        },
        ensure_ascii=False,
    )
