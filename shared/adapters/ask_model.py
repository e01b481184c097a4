"""The ask agent's model: one chat completion a turn, with the read tools offered (OpenAI tool
calling) and the prompt in prompts/ask.txt. The model cites a capture by its id in square
brackets; its answer comes back as text with markers [1], [2] and the ids in that order. A
failed call, or an answer that cannot be read, is ModelUnavailable (the use case answers from
the captures without it)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from shared.domain.chat import ChatTurn, DraftCitation, ModelTurn, ToolCall, ToolSpec
from shared.domain.errors import ModelUnavailable

if TYPE_CHECKING:
    import openai
    from openai.types import CompletionUsage

log = logging.getLogger(__name__)

PROMPT = (Path(__file__).parent / "prompts" / "ask.txt").read_text()
# A turn's answer: a few sentences, or a handful of tool calls.
MAX_COMPLETION_TOKENS = 600
# An id in square brackets: a capture id is a UUID, but the model may cite any id a tool gave.
_CITED = re.compile(r"\[\s*([0-9A-Za-z][0-9A-Za-z_-]{7,80})\s*\]")


def wire_message(turn: ChatTurn) -> dict[str, Any]:
    """A turn as the chat completions API takes it."""
    if turn.role == "tool":
        return {"role": "tool", "tool_call_id": turn.tool_call_id, "content": turn.content or ""}
    if turn.tool_calls:
        return {
            "role": "assistant",
            "content": turn.content,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in turn.tool_calls
            ],
        }
    return {"role": turn.role, "content": turn.content or ""}


def wire_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def cited_answer(text: str) -> tuple[str, tuple[DraftCitation, ...]]:
    """The model's text with each cited id as a marker [n], n in the order ids first appear."""
    order: list[str] = []

    def marker(m: re.Match[str]) -> str:
        if m[1] not in order:
            order.append(m[1])
        return f"[{order.index(m[1]) + 1}]"

    return _CITED.sub(marker, text), tuple(DraftCitation(i, "") for i in order)


class OpenAIAskModel:
    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        *,
        max_completion_tokens: int = MAX_COMPLETION_TOKENS,
        on_usage: Callable[[CompletionUsage], None] | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._max_tokens = max_completion_tokens
        self._on_usage = on_usage

    async def turn(
        self, conversation: Sequence[ChatTurn], tools: Sequence[ToolSpec], *, must_answer: bool
    ) -> ModelTurn:
        import openai
        from openai.types.chat import ChatCompletion

        messages: list[Any] = [{"role": "system", "content": PROMPT}]
        messages += map(wire_message, conversation)
        offered: list[Any] = [wire_tool(t) for t in tools]
        choice_of: Literal["none", "auto"] = "none" if must_answer else "auto"
        try:
            completion = await self._client.chat.completions.create(
                model=self._model,
                messages=messages,
                tools=offered,
                tool_choice=choice_of,
                max_completion_tokens=self._max_tokens,
            )
        except openai.OpenAIError as err:
            log.warning("ask: model call failed (%s)", type(err).__name__)
            raise ModelUnavailable(type(err).__name__) from err
        if not isinstance(completion, ChatCompletion):
            # A proxy's page answered with 200: the SDK hands it back as text.
            raise ModelUnavailable("not a chat completion")
        usage = completion.usage
        if usage is not None and self._on_usage is not None:
            self._on_usage(usage)
        prompt_tokens = usage.prompt_tokens if usage else 0
        completion_tokens = usage.completion_tokens if usage else 0
        choice = completion.choices[0] if completion.choices else None
        if choice is None:
            raise ModelUnavailable("no choice")
        message = choice.message
        calls = tuple(
            ToolCall(c.id, c.function.name, c.function.arguments or "{}")
            for c in message.tool_calls or ()
            if c.type == "function"
        )
        if calls and not must_answer:
            return ModelTurn(
                tool_calls=calls, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
        text = " ".join((message.content or "").split())
        if not text or choice.finish_reason not in ("stop", "tool_calls"):
            # Empty, refused or cut by the token cap: not an answer to show.
            raise ModelUnavailable(f"no answer ({choice.finish_reason})")
        answer, citations = cited_answer(text)
        return ModelTurn(
            answer=answer,
            citations=citations,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
