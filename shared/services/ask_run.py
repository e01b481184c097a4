"""One question's run: what it takes and tells (the question; the tools started and answered,
the answer's text, the answer and its citations), and its tool calls, what they read kept as
the sources the answer may cite: only a capture a tool gave this run."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from pydantic import Field

from shared.domain.chat import ChatTurn
from shared.domain.classification import Bucket
from shared.domain.documents import Document
from shared.domain.errors import STORAGE_DOWN, Invalid, Refused, StorageUnavailable, Unavailable
from shared.domain.ports import Adapters
from shared.services.tools import READ_TOOLS

# -- what comes in and what goes out ------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """What is asked, and the thread's earlier turns (user and assistant words, oldest first)."""

    text: str
    earlier: tuple[ChatTurn, ...] = ()


class Citation(Document):
    capture_id: str = Field(description="The cited capture (GET /api/captures/{captureId}).")
    bucket: Bucket | None = Field(description="Where it is filed; null while in the inbox.")
    title: str
    quote: str = Field(description="The capture's own words the answer rests on.")


class Answer(Document):
    answer: str = Field(description="The answer; markers [1], [2] follow the citations' order.")
    citations: list[Citation]


# What an answer says where no capture answers: it cites nothing and never guesses.
NOTHING = "I found nothing in your captures that answers that."


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolFinished:
    """A tool's answer as JSON, or `{"error": {"code", "message"}}` when it refused."""

    call_id: str
    name: str
    result: dict[str, Any]


@dataclass(frozen=True)
class AnswerText:
    delta: str


@dataclass(frozen=True)
class Answered:
    answer: Answer
    # Tokens the model took over the whole question (0 offline): the cost figures.
    tokens: int = 0
    by_model: bool = False


AskProgress = ToolStarted | ToolFinished | AnswerText | Answered


# -- the run's tool calls, and what they read --------------------------------------------------


class Run:
    """The tools of one question, for one user: each call told as it starts and answers, and
    what it read kept, so that only a capture a tool gave may be cited."""

    def __init__(self, user_id: str, adapters: Adapters) -> None:
        self.user_id = user_id
        self.adapters = adapters
        self.tools = {t.name: t for t in READ_TOOLS}
        self.seen: dict[str, Source] = {}
        self.calls = 0

    async def call(
        self, name: str, arguments: dict[str, Any], call_id: str | None = None
    ) -> AsyncIterator[ToolStarted | ToolFinished]:
        self.calls += 1
        # Unique across the thread's runs: a client keeps every run's tool calls by id.
        call_id = call_id or f"call_{uuid.uuid4().hex[:16]}"
        yield ToolStarted(call_id, name, arguments)
        tool = self.tools.get(name)
        result: dict[str, Any]
        try:
            if tool is None:
                known = ", ".join(self.tools)
                raise Invalid(f"There is no tool {name!r}; there are {known}.", "UNKNOWN_TOOL")
            found = await tool.call(self.user_id, arguments, self.adapters)
            result = found.to_json()
            self._keep(result)
        except Unavailable:
            raise
        except StorageUnavailable as down:
            raise Unavailable(STORAGE_DOWN, "STORAGE_UNAVAILABLE") from down
        except Refused as refused:
            result = {"error": {"code": refused.code, "message": refused.message}}
        yield ToolFinished(call_id, name, result)

    def _keep(self, result: dict[str, Any]) -> None:
        """The captures a tool's answer holds, by the richest view of each."""
        rows = result.get("items") if isinstance(result.get("items"), list) else [result]
        for row in rows or []:
            source = Source.of(row)
            if source is None:
                continue
            had = self.seen.get(source.id)
            if had is not None:
                source = had.merged(source)
            self.seen[source.id] = source


@dataclass
class Source:
    """What an answer may draw on of one capture: as a tool gave it."""

    id: str
    bucket: Bucket | None
    title: str
    text: str
    created_at: datetime
    people: list[str] = field(default_factory=list)
    due_date: date | None = None
    next_action: str | None = None
    whole: bool = True  # False: a search snippet, not the whole text
    detailed: bool = True  # False: a search hit, without its people and dates

    def cited(self, quote: str) -> Citation:
        """This capture cited for `quote` (its title, or the quote's start where it has none)."""
        return Citation(
            capture_id=self.id, bucket=self.bucket, title=self.title or quote[:60], quote=quote
        )

    @classmethod
    def of(cls, row: Any) -> Source | None:
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            return None
        created = row.get("createdAt")
        if not isinstance(created, str):
            return None
        bucket = row.get("bucket", row.get("filedBucket"))
        snippet = row.get("snippet")
        text = row.get("text") if isinstance(row.get("text"), str) else snippet
        due = row.get("dueDate")
        title = str(row.get("title") or "")
        return cls(
            id=row["id"],
            bucket=Bucket(bucket) if bucket in {b.value for b in Bucket} else None,
            title=title,
            text=str(text or ""),
            created_at=datetime.fromisoformat(created.replace("Z", "+00:00")),
            people=list(row.get("people") or []),
            due_date=date.fromisoformat(due) if isinstance(due, str) else None,
            next_action=row.get("nextAction"),
            # A search snippet is the whole text only when it is not cut, and not the title (a
            # match in the title alone shows the title).
            whole=not isinstance(snippet, str)
            or not (snippet.startswith("…") or snippet.endswith("…") or snippet == title),
            detailed="people" in row,
        )

    def merged(self, other: Source) -> Source:
        """One capture as two tools gave it: the fuller text, and every detail either held (a
        search hit has no due date; the bucket's list has)."""
        fuller, rest = (other, self) if _fuller(other, self) else (self, other)
        return Source(
            id=fuller.id,
            bucket=fuller.bucket or rest.bucket,
            title=fuller.title or rest.title,
            text=fuller.text,
            created_at=fuller.created_at,
            people=fuller.people or rest.people,
            due_date=fuller.due_date or rest.due_date,
            next_action=fuller.next_action or rest.next_action,
            whole=fuller.whole,
            detailed=fuller.detailed or rest.detailed,
        )


def _fuller(a: Source, b: Source) -> bool:
    return (a.whole, len(a.text)) > (b.whole, len(b.text))


async def tell(answer: Answer, **done: Any) -> AsyncIterator[AnswerText | Answered]:
    """The answer's text a few words at a time (as a model streams it), then the answer."""
    words = re.findall(r"\S+\s*", answer.answer)
    for at in range(0, len(words), 4):
        yield AnswerText("".join(words[at : at + 4]))
    yield Answered(answer, **done)
