"""Every tool an outside assistant may call (the MCP door serves exactly these), in one list:
the catalogue's reading tools (`tools.READ_TOOLS`, which the ask agent uses too) and the tools
that capture, answer, edit and give the day's digest. A module of its own so that the ask use
case (`services/ask.py`, which imports the catalogue) can join the list without a cycle."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from shared.domain.documents import Document, RequestBody
from shared.services.ask import (
    MAX_QUESTION_CHARS,
    THREAD_ID_PATTERN,
    AskLimits,
    ThreadQuestion,
    ask_on_thread,
)
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


class AskArgs(RequestBody):
    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description="A question about what the user captured, in their words.",
    )
    thread_id: str | None = Field(
        default=None,
        pattern=THREAD_ID_PATTERN,
        description="A thread of your choosing: its earlier questions and answers count, so a "
        "follow-up ('and who is doing the tiles?') is understood.",
    )


async def _ask(user_id: str, args: AskArgs, ports: AssistantPorts) -> Document:
    asked = ThreadQuestion(args.question, args.thread_id)
    done = await ask_on_thread(
        user_id,
        asked,
        ports.now(),
        AskLimits(),
        ports.adapters,
        ports.ask_threads,
        model=ports.ask_model,
    )
    return done.answer


ASK_TOOL: Tool[AskArgs, AssistantPorts] = Tool(
    "ask",
    "Answer a question from the user's own captures, citing them: the answer's markers [1], "
    "[2] follow `citations` (each the capture's id, bucket, title and the words quoted). It "
    "says so when nothing answers and never answers from elsewhere. Use it for questions "
    "('who is doing the kitchen tiles now?'); use search to list captures.",
    AskArgs,
    _ask,
)

ASSISTANT_TOOLS: tuple[Tool[Any, AssistantPorts], ...] = (
    CAPTURE_TOOL,
    # The reading tools (search, person, list_bucket, get_capture), handed the adapters.
    *(tool.over(adapters_of) for tool in READ_TOOLS),
    ASK_TOOL,
    ANSWER_QUESTION_TOOL,
    UPDATE_CAPTURE_TOOL,
    TODAY_TOOL,
)
