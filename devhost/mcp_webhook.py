"""The MCP extension's webhook, `/runtime/webhooks/mcp`: the app's MCP tool, resource and prompt
functions served as one MCP server over streamable HTTP, as the Functions MCP extension
(Azure/azure-functions-mcp-extension) serves them.

The protocol is the `mcp` SDK's own (its low-level `Server` and streamable HTTP transport); what
this module adds is the extension's binding contract, from the functions' binding metadata:

- **Listing.** A tool is its `mcpToolTrigger`'s `toolName`, `description` and input schema (the
  worker's `inputSchema` when `useWorkerInputSchema`, else built from `toolProperties` as the
  extension does); a resource is its `mcpResourceTrigger`'s `uri` (a template when it has a
  `{param}`), `resourceName`, `title`, `description` and `mimeType`; a prompt is its
  `mcpPromptTrigger`'s `promptName`, `title`, `description` and `promptArguments`.
- **Calling.** Required tool properties and required prompt arguments are checked before the
  function runs (a missing one is a JSON-RPC error -32602, as the extension answers). The
  function gets the invocation context as JSON: `name`, `arguments`, `sessionid`,
  `clientinfo`, and `transport` (`name` "http-streamable", `sessionId`, `properties.headers`:
  the HTTP request's headers, so a function can read the caller's key) — for a resource, `uri`
  in place of `name` and `arguments`.
- **Answers.** A tool with `useResultSchema` answers an `McpToolResult` (`type`, `content`,
  `structuredContent`): `call_tool_result` passes its CallToolResult through; another type is
  one content block (a list for `multi_content_result`). Without it, the answer's text is one
  text block. A resource's text is its contents, with the URI asked for and the trigger's MIME
  type; a prompt's text is one user message (or a `get_prompt_result` / `prompt_messages`
  envelope with `useResultSchema`). A function that raises is a JSON-RPC internal error that
  says nothing of it, as in the host.

As in the extension, the transport is stateless (every POST stands alone; GET is 405) and the
legacy SSE transport at `/runtime/webhooks/mcp/sse` is not served here. The `mcp_extension`
system key that Azure asks for (`x-functions-key` or `code=`) is not checked, as `func start`
checks no key; the app's own per-user key is the function's business (it reads the headers).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .config import McpOptions
from .invoke import Invoker
from .loader import LoadedFunction

log = logging.getLogger("devhost.mcp")

PATH = "/runtime/webhooks/mcp"
TRANSPORT = "http-streamable"
RESOURCE_NOT_FOUND = -32002

TOOL_TRIGGER, RESOURCE_TRIGGER, PROMPT_TRIGGER = (
    "mcpToolTrigger",
    "mcpResourceTrigger",
    "mcpPromptTrigger",
)
TRIGGERS = (TOOL_TRIGGER, RESOURCE_TRIGGER, PROMPT_TRIGGER)

_TEMPLATE_PARAM = re.compile(r"\{[^{}]+\}")


@dataclass(frozen=True)
class McpTool:
    function: LoadedFunction
    tool: types.Tool
    required: tuple[str, ...]
    result_schema: bool


@dataclass(frozen=True)
class McpResource:
    function: LoadedFunction
    uri: str
    matcher: re.Pattern[str] | None  # None: a fixed URI
    mime_type: str | None


@dataclass(frozen=True)
class McpPrompt:
    function: LoadedFunction
    prompt: types.Prompt
    result_schema: bool


def tool_of(function: LoadedFunction) -> McpTool:
    """The tool an `mcpToolTrigger` function is, from its binding; ValueError if the extension
    would refuse the binding."""
    raw = function.trigger.raw
    name = raw.get("toolName")
    if not name:
        raise ValueError("mcpToolTrigger needs a toolName")
    if raw.get("useWorkerInputSchema"):
        try:
            schema = json.loads(raw.get("inputSchema") or "")
        except json.JSONDecodeError as exc:
            raise ValueError(f"tool {name!r}: inputSchema is not JSON") from exc
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ValueError(f"tool {name!r}: inputSchema must be a JSON schema of type object")
    else:
        schema = _schema_of_properties(json.loads(raw.get("toolProperties") or "[]"))
    required = tuple(str(r) for r in schema.get("required", ()))
    tool = types.Tool(name=name, description=raw.get("description"), input_schema=schema)
    return McpTool(function, tool, required, bool(raw.get("useResultSchema")))


def _schema_of_properties(properties: list[dict[str, Any]]) -> dict[str, Any]:
    # As the extension's PropertyBasedToolInputSchema builds it.
    props: dict[str, Any] = {}
    for p in properties:
        kind: dict[str, Any] = {"type": p.get("propertyType") or "string"}
        if p.get("enumValues"):
            kind["enum"] = p["enumValues"]
        entry = {"type": "array", "items": kind} if p.get("isArray") else kind
        entry["description"] = p.get("description") or ""
        props[p["propertyName"]] = entry
    required = [p["propertyName"] for p in properties if p.get("isRequired")]
    return {"type": "object", "properties": props, "required": required}


def resource_of(function: LoadedFunction) -> McpResource:
    raw = function.trigger.raw
    uri = raw.get("uri") or ""
    if "://" not in uri:
        raise ValueError(f"resource {uri!r}: the URI must be absolute")
    matcher = None
    if _TEMPLATE_PARAM.search(uri):
        # As the extension's ResourceUriHelper: a parameter stops at / ? #.
        pattern = "".join(
            "[^/?#]+" if _TEMPLATE_PARAM.fullmatch(part) else re.escape(part)
            for part in re.split(r"(\{[^{}]+\})", uri)
        )
        matcher = re.compile(pattern, re.IGNORECASE)
    return McpResource(function, uri, matcher, raw.get("mimeType"))


def prompt_of(function: LoadedFunction) -> McpPrompt:
    raw = function.trigger.raw
    name = raw.get("promptName")
    if not name:
        raise ValueError("mcpPromptTrigger needs a promptName")
    arguments = [
        types.PromptArgument(
            name=a["name"], description=a.get("description"), required=bool(a.get("required"))
        )
        for a in json.loads(raw.get("promptArguments") or "[]")
    ]
    prompt = types.Prompt(
        name=name,
        title=raw.get("title"),
        description=raw.get("description"),
        arguments=arguments or None,
    )
    return McpPrompt(function, prompt, bool(raw.get("useResultSchema")))


def has_mcp(functions: list[LoadedFunction]) -> bool:
    return any(f.trigger.type in TRIGGERS for f in functions)


class McpWebhook:
    """An ASGI app for the `mcp` webhook of the HTTP gateway. `lifespan()` must be entered
    while it serves: it runs the SDK's session manager."""

    def __init__(
        self, functions: list[LoadedFunction], invoker: Invoker, options: McpOptions
    ) -> None:
        self._invoker = invoker
        self.tools = {
            t.tool.name: t
            for t in (tool_of(f) for f in functions if f.trigger.type == TOOL_TRIGGER)
        }
        self.resources = [resource_of(f) for f in functions if f.trigger.type == RESOURCE_TRIGGER]
        self.prompts = {
            p.prompt.name: p
            for p in (prompt_of(f) for f in functions if f.trigger.type == PROMPT_TRIGGER)
        }
        server: Server[Any] = Server(
            options.server_name,
            version=options.server_version,
            instructions=options.instructions,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        self._server = server
        self._app = server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=False,
            # The extension checks no Host or Origin (the host's CORS and keys stand in front
            # of it): a devhost reached by its LAN address, as the app on a phone is, answers.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self._server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            # As the extension's streamable HTTP handler: POST only (no standalone GET
            # stream, no DELETE of a session: every POST stands alone).
            await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        await self._app(scope, receive, send)

    # -- tools --------------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[t.tool for t in self.tools.values()])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = self.tools.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: '{params.name}'")
        arguments = params.arguments or {}
        missing = [name for name in tool.required if arguments.get(name) is None]
        if missing:
            raise MCPError(
                types.INVALID_PARAMS,
                "One or more required tool properties are missing values. Please provide: "
                + ", ".join(missing),
            )
        context = {"name": params.name, "arguments": arguments, **_session(ctx)}
        answer = await self._invoke(tool.function, context, params.name)
        return _tool_result(answer, tool.result_schema)

    # -- resources ----------------------------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri,
                    name=r.function.trigger.raw.get("resourceName") or r.uri,
                    title=r.function.trigger.raw.get("title"),
                    description=r.function.trigger.raw.get("description"),
                    mime_type=r.mime_type,
                )
                for r in self.resources
                if r.matcher is None
            ]
        )

    async def _list_resource_templates(
        self, ctx: Any, params: Any
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=r.uri,
                    name=r.function.trigger.raw.get("resourceName") or r.uri,
                    title=r.function.trigger.raw.get("title"),
                    description=r.function.trigger.raw.get("description"),
                    mime_type=r.mime_type,
                )
                for r in self.resources
                if r.matcher is not None
            ]
        )

    async def _read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        resource = next(
            (r for r in self.resources if r.matcher is None and r.uri.lower() == uri.lower()),
            None,
        ) or next((r for r in self.resources if r.matcher and r.matcher.fullmatch(uri)), None)
        if resource is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        answer = await self._invoke(resource.function, {"uri": uri, **_session(ctx)}, uri)
        if isinstance(answer, bytes | bytearray):
            import base64

            blob = base64.b64encode(bytes(answer)).decode()
            contents: Any = types.BlobResourceContents(
                uri=uri, mime_type=resource.mime_type, blob=blob
            )
        else:
            contents = types.TextResourceContents(
                uri=uri, mime_type=resource.mime_type, text="" if answer is None else str(answer)
            )
        return types.ReadResourceResult(contents=[contents])

    # -- prompts ------------------------------------------------------------------------------

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[p.prompt for p in self.prompts.values()])

    async def _get_prompt(
        self, ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        prompt = self.prompts.get(params.name)
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: '{params.name}'")
        arguments = params.arguments or {}
        missing = [
            a.name
            for a in prompt.prompt.arguments or ()
            if a.required and not arguments.get(a.name)
        ]
        if missing:
            raise MCPError(
                types.INVALID_PARAMS,
                "One or more required prompt arguments are missing values. Please provide: "
                + ", ".join(missing),
            )
        context = {"name": params.name, "arguments": arguments, **_session(ctx)}
        answer = await self._invoke(prompt.function, context, params.name)
        return _prompt_result(answer, prompt.result_schema)

    async def _invoke(self, function: LoadedFunction, context: dict[str, Any], what: str) -> Any:
        try:
            return await self._invoker.call(function, json.dumps(context), {})
        except Exception:
            log.exception("function %s failed", function.name)
            raise MCPError(types.INTERNAL_ERROR, f"An error occurred invoking '{what}'.") from None


def _session(ctx: Any) -> dict[str, Any]:
    """The context's session, client and transport, from the request that carried the call."""
    request = getattr(ctx, "request", None)
    headers: dict[str, str] = {}
    if request is not None:
        for key, value in request.headers.items():
            headers[key] = f"{headers[key]},{value}" if key in headers else value
    session_id = headers.get("mcp-session-id")
    client = None
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    if params is not None:
        client = params.client_info.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {
        "sessionid": session_id,
        "clientinfo": client,
        "transport": {
            "name": TRANSPORT,
            "sessionId": session_id,
            "properties": {"headers": headers},
        },
    }


def _tool_result(answer: Any, result_schema: bool) -> types.CallToolResult:
    if answer is None or answer == "":
        return types.CallToolResult(content=[])
    if not result_schema:
        return types.CallToolResult(content=[types.TextContent(text=str(answer))])
    envelope = json.loads(answer)
    kind, content = envelope.get("type"), envelope.get("content")
    if kind == "call_tool_result":
        return types.CallToolResult.model_validate_json(content)
    blocks = json.loads(content)
    structured = envelope.get("structuredContent")
    return types.CallToolResult.model_validate(
        {
            "content": blocks if kind == "multi_content_result" else [blocks],
            "structuredContent": json.loads(structured) if structured else None,
        }
    )


def _prompt_result(answer: Any, result_schema: bool) -> types.GetPromptResult:
    if answer is None:
        return types.GetPromptResult(messages=[])
    if result_schema:
        envelope = json.loads(answer)
        if envelope.get("type") == "get_prompt_result":
            return types.GetPromptResult.model_validate_json(envelope["content"])
        messages = json.loads(envelope["content"])
        return types.GetPromptResult.model_validate({"messages": messages})
    text = types.TextContent(text=str(answer))
    return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=text)])


Check = Callable[[LoadedFunction], object]
CHECKS: dict[str, Check] = {
    TOOL_TRIGGER: tool_of,
    RESOURCE_TRIGGER: resource_of,
    PROMPT_TRIGGER: prompt_of,
}
