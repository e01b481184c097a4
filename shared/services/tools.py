"""The tools over one user's captures, written once: what the MCP door serves and what the ask
agent calls, with the same names, descriptions and input schemas, so the two cannot drift."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Generic, Literal, TypeVar

from pydantic import Field, ValidationError

from shared.domain.capture import InboxItem
from shared.domain.documents import Document, RequestBody
from shared.domain.errors import Invalid
from shared.domain.filed import person_key
from shared.domain.ports import Adapters, FiledFilter
from shared.services.inbox import get_capture
from shared.services.recall import (
    MAX_PAGE,
    MAX_QUERY_CHARS,
    MAX_SEARCH,
    BucketQuery,
    PersonQuery,
    SearchQuery,
    bucket_named,
    get_person,
    list_bucket,
    search,
)

Args = TypeVar("Args", bound=RequestBody)
Runner = Callable[[str, Args, Adapters], Awaitable[Document]]


@dataclass(frozen=True)
class Tool(Generic[Args]):
    """One tool: its name and description (written for a model to choose it well), its
    arguments as a model (their JSON schema is the tool's input schema), and the use case it
    runs for a user. `writes` says whether it changes anything."""

    name: str
    description: str
    arguments: type[Args]
    run: Runner[Args]
    writes: bool = False

    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema(by_alias=True)

    async def call(self, user_id: str, raw: dict[str, Any], adapters: Adapters) -> Document:
        """Validate the arguments (`Invalid`, INVALID_ARGUMENTS, saying which are wrong), then
        run the use case."""
        try:
            args = self.arguments.model_validate(raw)
        except ValidationError as exc:
            wrong = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)[:5]
            )
            raise Invalid(f"{self.name}: {wrong}.", "INVALID_ARGUMENTS") from exc
        return await self.run(user_id, args, adapters)


# -- reading ---------------------------------------------------------------------------------


class SearchArgs(RequestBody):
    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="What to look for, in the user's words; matches meaning as well as words.",
    )
    limit: int = Field(default=10, ge=1, le=MAX_SEARCH, description="How many captures at most.")


async def _search(user_id: str, args: SearchArgs, adapters: Adapters) -> Document:
    # By words and meaning (hybrid) where an embedding model is at hand.
    return await search(
        user_id, SearchQuery(args.query, args.limit), adapters.search, adapters.embedder
    )


class PersonArgs(RequestBody):
    name: str = Field(
        min_length=1, max_length=100, description="The person's name as the user writes it."
    )
    limit: int = Field(default=20, ge=1, le=MAX_PAGE, description="How many items at most.")


async def _person(user_id: str, args: PersonArgs, adapters: Adapters) -> Document:
    return await get_person(user_id, args.name, PersonQuery(args.limit), adapters.filed)


class BucketArgs(RequestBody):
    bucket: Literal["people", "projects", "ideas", "admin"] = Field(
        description="Which bucket: people, projects, ideas or admin (errands, bills, dates)."
    )
    due_before: date | None = Field(
        default=None, description="Only items due before this day (YYYY-MM-DD)."
    )
    done: bool | None = Field(default=None, description="Only done (true) or open (false) items.")
    person: str | None = Field(
        default=None, max_length=100, description="Only items that name this person."
    )
    limit: int = Field(default=20, ge=1, le=MAX_PAGE, description="How many items at most.")


async def _list_bucket(user_id: str, args: BucketArgs, adapters: Adapters) -> Document:
    where = FiledFilter(
        person_key=person_key(args.person) if args.person else None,
        done=args.done,
        due_before=args.due_before,
    )
    query = BucketQuery(limit=args.limit, where=where)
    return await list_bucket(user_id, bucket_named(args.bucket), query, adapters.filed)


class CaptureArgs(RequestBody):
    capture_id: str = Field(description="The capture's id, as search and the lists give it.")


async def _get_capture(user_id: str, args: CaptureArgs, adapters: Adapters) -> InboxItem:
    return await get_capture(user_id, args.capture_id, adapters.repo)


SEARCH_TOOL = Tool(
    "search",
    "Search the user's captures (notes, tasks, ideas, people notes) by meaning and words. "
    "Returns the best matches, each with its id, bucket, title, a snippet and when it was "
    "captured. Use it first for any question about what the user wrote.",
    SearchArgs,
    _search,
)
PERSON_TOOL = Tool(
    "person",
    "Everything the user captured that names one person, newest first, across all buckets.",
    PersonArgs,
    _person,
)
LIST_BUCKET_TOOL = Tool(
    "list_bucket",
    "List one bucket's filed items: admin by due date, the others newest first; optionally "
    "only those due before a day, done or open, or naming a person.",
    BucketArgs,
    _list_bucket,
)
GET_CAPTURE_TOOL = Tool(
    "get_capture",
    "One capture in full: its text or transcript, where it was filed, its answers and details.",
    CaptureArgs,
    _get_capture,
)

# What the ask agent may use: reading only, never a write.
READ_TOOLS: tuple[Tool[Any], ...] = (SEARCH_TOOL, PERSON_TOOL, LIST_BUCKET_TOOL, GET_CAPTURE_TOOL)
