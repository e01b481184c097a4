"""The official MCP Python client over streamable HTTP, on a host's `/runtime/webhooks/mcp`
(the devhost's, or the Functions MCP extension's in Azure), for the tests and the benchmark."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

PATH = "/runtime/webhooks/mcp"


@asynccontextmanager
async def mcp_client(
    base_url: str, headers: Mapping[str, str] | None = None
) -> AsyncIterator[Client]:
    """A connected client; `headers` go with every request (the user's X-API-Key). The
    initialize handshake, as the clients of today (and the extension) speak it."""
    async with create_mcp_http_client(headers=dict(headers or {})) as http:
        transport = streamable_http_client(base_url + PATH, http_client=http)
        async with Client(transport, mode="legacy") as client:
            yield client


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """A tool result's structured content, checked against its text (the same JSON)."""
    assert result.structured_content is not None, result
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    if not result.is_error:
        assert json.loads(block.text) == result.structured_content
    return result.structured_content


def tool_error(result: types.CallToolResult) -> dict[str, Any]:
    """A tool error's `error`: {status, code, message}."""
    assert result.is_error, result
    error = structured(result)["error"]
    (block,) = result.content
    assert isinstance(block, types.TextContent) and block.text.startswith(error["code"] + ": ")
    return error
