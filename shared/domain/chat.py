"""A conversation with a model that calls tools, as the ask agent holds it: the turns, the
tools it is offered, and what one model turn gives back. No SDK: the adapter
(shared/adapters/ask_model.py) speaks the wire protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from shared.domain.documents import Document, Timestamp, utcnow


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is offered it: its name, what it does, its arguments' JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A tool the model asked for; `arguments` as the model wrote them (JSON, perhaps not)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatTurn:
    """One turn of the conversation: the user's or the assistant's words, the assistant's tool
    calls, or one tool's result (`tool_call_id`), always as data."""

    role: Literal["user", "assistant", "tool"]
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class DraftCitation:
    """A capture the model cites, and the words of it it quotes (checked before they are shown)."""

    capture_id: str
    quote: str


@dataclass(frozen=True)
class ModelTurn:
    """What one model turn gave: tool calls to make, or the answer (`answer`, with its
    citations in the order of its markers [1], [2]); and the tokens it took."""

    tool_calls: tuple[ToolCall, ...] = ()
    answer: str | None = None
    citations: tuple[DraftCitation, ...] = field(default=())
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ThreadTurn(Document):
    role: Literal["user", "assistant"]
    text: str


# A thread nobody asks on for this long is forgotten (Cosmos DB's per-item ttl, in seconds).
THREAD_TTL_S = 30 * 24 * 3600


class AskThread(Document):
    """A plain-JSON ask thread's turns (GET /api/ask?threadId=), as stored: container
    AskThreads, partition /userId, one document a thread, expiring THREAD_TTL_S after its last
    turn. (An AG-UI client holds its own conversation and sends it with each run.)"""

    id: str
    user_id: str
    turns: list[ThreadTurn] = Field(default_factory=list)
    updated_at: Timestamp = Field(default_factory=utcnow)
    ttl: int = THREAD_TTL_S
    etag: str | None = Field(default=None, alias="_etag")
