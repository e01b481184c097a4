"""Ask: a question (and the thread's earlier turns) answered from the caller's own captures
only, citing them: the tools of services/tools.py called as a model would, offline by the
question's shape and the captures' own words (`ask_offline`), or by a model's tool-calling loop
when one is given. The use case reports domain progress (tools started and answered, the
answer's text, the answer: `ask_run`); the doors tell it (AG-UI run, plain JSON, MCP).

The offline answer reads on in `ask_offline` (the tools it calls, each capture weighed and the
answer's captures chosen), `ask_words` (stems, terms, the question read) and `ask_compose` (the
answer's text)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared.domain.chat import (
    AskThread,
    ChatTurn,
    DraftCitation,
    ModelTurn,
    ThreadTurn,
    ToolCall,
    ToolSpec,
)
from shared.domain.errors import Invalid, ModelUnavailable, StaleItem
from shared.domain.ports import Adapters, AskModel, AskThreads
from shared.domain.text import valid_text
from shared.services.ask_compose import best_quote
from shared.services.ask_offline import answer_offline
from shared.services.ask_run import (
    NOTHING,
    Answer,
    Answered,
    AskProgress,
    Question,
    Run,
    Source,
    ToolFinished,
    tell,
)
from shared.services.ask_words import Asked, read_question
from shared.services.tools import READ_TOOLS, Tool

MAX_QUESTION_CHARS = 1000
# A thread id a client chooses (GET /api/ask's threadId, MCP's ask).
THREAD_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,100}$"
MAX_EARLIER_TURNS = 12
MAX_TURN_CHARS = 2000
# A tool's answer as the model reads it: enough for a page of hits, never a whole export.
MAX_TOOL_RESULT_CHARS = 6000


@dataclass(frozen=True)
class AskLimits:
    """How far the model's loop may go: model turns, tool calls a turn, tokens in all."""

    max_steps: int = 4
    max_calls_per_step: int = 4
    max_tokens: int = 12000


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def new_question(text: str, earlier: Sequence[tuple[str, str]] = ()) -> Question:
    """The rules a question meets whatever its door: valid Unicode (NFC), not blank, within
    MAX_QUESTION_CHARS, no control characters; earlier turns (role, text) kept as words only,
    the last MAX_EARLIER_TURNS of them."""
    text = unicodedata.normalize("NFC", valid_text(text)).strip()
    if not text:
        raise Invalid("Ask a question: the text is empty.", "EMPTY_QUESTION")
    if len(text) > MAX_QUESTION_CHARS:
        raise Invalid(
            f"A question is at most {MAX_QUESTION_CHARS} characters.", "QUESTION_TOO_LONG"
        )
    if _CONTROL.search(text):
        raise Invalid("The question holds control characters.", "INVALID_TEXT")
    turns = tuple(
        ChatTurn(role="user" if role == "user" else "assistant", content=words[:MAX_TURN_CHARS])
        for role, words in earlier
        if role in ("user", "assistant") and words.strip()
    )
    return Question(text=text, earlier=turns[-MAX_EARLIER_TURNS:])


def tool_specs(tools: Sequence[Tool[Any]] = READ_TOOLS) -> list[ToolSpec]:
    """The tools as a model is offered them: the catalogue's own names, words and schemas."""
    return [ToolSpec(t.name, t.description, t.input_schema()) for t in tools]


# -- the use case ---------------------------------------------------------------------------


async def ask(
    user_id: str,
    question: Question,
    now: datetime,
    limits: AskLimits,
    adapters: Adapters,
    *,
    model: AskModel | None = None,
) -> AsyncIterator[AskProgress]:
    """Answer `question` from `user_id`'s captures: tool calls as they start and answer, the
    answer's text in pieces, then the answer. With a `model`, its tool-calling loop; without
    one, or when it fails, the offline answer. Refused when storage is down."""
    run = Run(user_id, adapters)
    if model is not None:
        try:
            async for step in _model_answer(run, question, limits, model):
                yield step
            return
        except ModelUnavailable:
            pass  # the captures still answer: offline, over the same tools
    async for step in answer_offline(run, question, now):
        yield step


# -- with a model: its tool-calling loop over the same tools ---------------------------------


async def _model_answer(
    run: Run, question: Question, limits: AskLimits, model: AskModel
) -> AsyncIterator[AskProgress]:
    """The model asks for tools (each run for this user only, its answer given back as data)
    until it answers, within `limits`; its answer's citations are checked against what the
    tools gave. ModelUnavailable when it fails or runs out of turns without an answer."""
    conversation: list[ChatTurn] = [*question.earlier, ChatTurn("user", question.text)]
    specs = tool_specs()
    tokens = 0
    for step in range(limits.max_steps):
        must_answer = step == limits.max_steps - 1 or tokens >= limits.max_tokens
        turn = await model.turn(conversation, specs, must_answer=must_answer)
        tokens += turn.prompt_tokens + turn.completion_tokens
        if turn.answer is not None:
            answer = checked_answer(turn, run.seen, read_question(question))
            async for said in tell(answer, tokens=tokens, by_model=True):
                yield said
            return
        if must_answer or not turn.tool_calls:
            raise ModelUnavailable("the model gave no answer")
        calls = turn.tool_calls[: limits.max_calls_per_step]
        conversation.append(ChatTurn("assistant", tool_calls=calls))
        for call in calls:
            result: dict[str, Any] = {}
            async for told in run.call(call.name, _arguments(call), call.id):
                yield told
                if isinstance(told, ToolFinished):
                    result = told.result
            conversation.append(ChatTurn("tool", content=_as_data(result), tool_call_id=call.id))
    raise ModelUnavailable("the model ran out of turns")


def _arguments(call: ToolCall) -> dict[str, Any]:
    """The model's arguments as an object; anything else is given to the tool as nothing, and
    the tool says what is missing."""
    try:
        parsed = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _as_data(result: dict[str, Any]) -> str:
    """A tool's answer as the model reads it: JSON, cut to MAX_TOOL_RESULT_CHARS."""
    text = json.dumps(result, ensure_ascii=False)
    return text if len(text) <= MAX_TOOL_RESULT_CHARS else text[:MAX_TOOL_RESULT_CHARS] + "…"


_MARKER = re.compile(r"\[(\d{1,2})\]")


def checked_answer(turn: ModelTurn, seen: dict[str, Source], asked: Asked) -> Answer:
    """The model's answer with only the citations a tool gave this run (another user's id, or
    one made up, is dropped with its marker); each quote the capture's own words (else its
    best sentence); markers renumbered to follow the citations' order; NOTHING when no
    citation is left."""
    text = turn.answer or ""
    kept: dict[int, DraftCitation] = {}
    for n, draft in enumerate(turn.citations, start=1):
        if draft.capture_id in seen:
            kept[n] = draft
    order: list[int] = []
    for m in _MARKER.finditer(text):
        n = int(m[1])
        if n in kept and n not in order:
            order.append(n)
    unmarked = [n for n in kept if n not in order]
    order += unmarked
    number = {old: new for new, old in enumerate(order, start=1)}

    def renumber(m: re.Match[str]) -> str:
        n = int(m[1])
        return f"[{number[n]}]" if n in number else ""

    text = _MARKER.sub(renumber, text).strip()
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", text))
    if unmarked:
        text += " " + "".join(f"[{number[n]}]" for n in unmarked)
    citations = []
    for old in order:
        draft = kept[old]
        source = seen[draft.capture_id]
        quote = " ".join(draft.quote.split())
        own = " ".join(source.text.split())
        if not quote or quote.casefold() not in own.casefold():
            quote = best_quote(asked, source)
        citations.append(source.cited(quote))
    if not citations:
        # An answer that cites none of the user's captures did not come from them, whatever
        # the model wrote: it is told as nothing found, never passed on.
        text = NOTHING
    return Answer(answer=text, citations=citations)


# -- the doors that do not stream (GET /api/ask, MCP): a thread kept, the answer alone ----------


@dataclass(frozen=True)
class ThreadQuestion:
    """A question for a door that holds no conversation (GET /api/ask, MCP): its text, and the
    thread whose earlier turns count (None: a question on its own)."""

    text: str
    thread_id: str | None = None


async def ask_on_thread(
    user_id: str,
    asked: ThreadQuestion,
    now: datetime,
    limits: AskLimits,
    adapters: Adapters,
    threads: AskThreads,
    *,
    model: AskModel | None = None,
) -> Answered:
    """The answer to a question on a thread kept for the caller: the thread's earlier turns
    count, and the question and its answer join them (the last MAX_EARLIER_TURNS kept)."""
    new_question(asked.text)  # refused before anything is read
    thread = await threads.get(user_id, asked.thread_id) if asked.thread_id else None
    earlier = [(t.role, t.text) for t in thread.turns] if thread else []
    question = new_question(asked.text, earlier)
    done = await answer_of(ask(user_id, question, now, limits, adapters, model=model))
    if asked.thread_id is not None:
        said = [
            ThreadTurn(role="user", text=question.text),
            ThreadTurn(role="assistant", text=done.answer.answer),
        ]
        await _remember(user_id, asked.thread_id, said, now, threads, thread)
    return done


async def _remember(
    user_id: str,
    thread_id: str,
    said: list[ThreadTurn],
    now: datetime,
    threads: AskThreads,
    thread: AskThread | None,
) -> None:
    """The turns added to the thread under its ETag: one that changed meanwhile (another
    question on it) is read again, and the turns go after its own."""
    for _ in range(3):
        base = thread or AskThread(id=thread_id, user_id=user_id)
        turns = [*base.turns, *said][-MAX_EARLIER_TURNS:]
        try:
            await threads.save(base.model_copy(update={"turns": turns, "updated_at": now}))
            return
        except StaleItem:
            thread = await threads.get(user_id, thread_id)


async def answer_of(progress: AsyncIterator[AskProgress]) -> Answered:
    """The answer alone, for a door that does not stream (GET /api/ask, MCP)."""
    async for step in progress:
        if isinstance(step, Answered):
            return step
    raise ModelUnavailable("no answer")  # pragma: no cover - every path ends with one


def turns_of(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """A client's conversation (AG-UI messages as JSON) as (role, words) turns."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            texts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
            content = "\n".join(str(p.get("text", "")) for p in texts)
        if isinstance(content, str) and m.get("role") in ("user", "assistant"):
            out.append((str(m["role"]), content))
    return out
