"""Every tool an outside assistant may call (the MCP door serves exactly these), in one list:
the catalogue's reading tools (`tools.READ_TOOLS`, which the ask agent uses too) and the tools
that capture, answer, edit and give the day's digest. A module of its own so that the ask use
case (`services/ask.py`, which imports the catalogue) can join the list without a cycle."""

from __future__ import annotations

from typing import Any

from shared.services.tools import (
    ANSWER_QUESTION_TOOL,
    CAPTURE_TOOL,
    READ_TOOLS,
    TODAY_TOOL,
    UPDATE_CAPTURE_TOOL,
    AssistantPorts,
    Tool,
    adapters_of,
)

ASSISTANT_TOOLS: tuple[Tool[Any, AssistantPorts], ...] = (
    CAPTURE_TOOL,
    # The reading tools (search, person, list_bucket, get_capture), handed the adapters.
    *(tool.over(adapters_of) for tool in READ_TOOLS),
    # ---- ASK: the `ask` tool (services/ask.py, issue 42) goes here, handed what it needs out
    # of AssistantPorts with `Tool.over`. The MCP door registers one function per entry of
    # this list, and its tests and the docs' tool table go over it: nothing else to add. ----
    ANSWER_QUESTION_TOOL,
    UPDATE_CAPTURE_TOOL,
    TODAY_TOOL,
)
