"""The tools over one user's captures, written once: what the MCP door serves and what the ask
agent calls, with the same names, descriptions and input schemas, so the two cannot drift."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Generic, Literal

from pydantic import Field, StrictBool, ValidationError
from typing_extensions import TypeVar

from shared.domain.capture import InboxItem
from shared.domain.classification import TITLE_MAX
from shared.domain.documents import Day, Document, RequestBody
from shared.domain.errors import Invalid
from shared.domain.filed import person_key
from shared.domain.interrupts import MAX_ANSWER_CHARS
from shared.domain.ports import Adapters, AskModel, AskThreads, FiledFilter, PreferencesStore
from shared.services.capture import new_text_capture
from shared.services.digest import day_digest, get_preferences
from shared.services.edit import NEXT_ACTION_MAX, FiledPatch, edit_filed
from shared.services.follow_up import answer_question, open_follow_up
from shared.services.inbox import get_capture
from shared.services.pipeline import capture_text_within, settled_within
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
# What a tool's use case is handed besides the user and its arguments: the `Adapters` for the
# reading tools, `AssistantPorts` (below) for the tools an outside assistant may call.
Ports = TypeVar("Ports", default=Adapters)
Outer = TypeVar("Outer")
Runner = Callable[[str, Args, Ports], Awaitable[Document]]


@dataclass(frozen=True)
class Tool(Generic[Args, Ports]):
    """One tool: its name and description (written for a model to choose it well), its
    arguments as a model (their JSON schema is the tool's input schema), and the use case it
    runs for a user. `writes` says whether it changes anything."""

    name: str
    description: str
    arguments: type[Args]
    run: Runner[Args, Ports]
    writes: bool = False

    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema(by_alias=True)

    async def call(self, user_id: str, raw: dict[str, Any], ports: Ports) -> Document:
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
        return await self.run(user_id, args, ports)

    def over(self, part: Callable[[Outer], Ports]) -> Tool[Args, Outer]:
        """The same tool (name, description, schema), handed a bundle its ports are `part` of."""
        run = self.run

        async def run_over(user_id: str, args: Args, outer: Outer) -> Document:
            return await run(user_id, args, part(outer))

        return Tool(self.name, self.description, self.arguments, run_over, self.writes)


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


# -- what an outside assistant may also do: capture, answer, edit, the day's digest ----------


@dataclass(frozen=True)
class AssistantPorts:
    """What the tools an outside assistant calls are handed (by the MCP door): the adapters,
    the preferences (the digest's day and zone), the limits a capture meets, how long a
    capture or an answer is waited for before the tool answers with where it is, and the
    clock."""

    adapters: Adapters
    preferences: PreferencesStore
    max_capture_chars: int
    wait_s: float
    now: Callable[[], datetime]
    # What `ask` needs beyond the adapters: where threads are kept, and the chat model
    # (None: the offline answer).
    ask_threads: AskThreads
    ask_model: AskModel | None = None


def adapters_of(ports: AssistantPorts) -> Adapters:
    """What a reading tool is handed out of an assistant's ports (`Tool.over`)."""
    return ports.adapters


class NewCaptureArgs(RequestBody):
    text: str = Field(
        min_length=1,
        description="What to capture, in the user's own words: a thought, a task, a note about "
        "someone, an idea. It is filed into the right bucket; do not summarise it.",
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Optional. Send the same key when retrying the same capture, so it is "
        "stored once.",
    )


async def _capture(user_id: str, args: NewCaptureArgs, ports: AssistantPorts) -> InboxItem:
    capture = new_text_capture(user_id, args.text, args.idempotency_key, ports.max_capture_chars)
    item = await capture_text_within(capture, ports.wait_s, ports.adapters)
    if item.has_ended:
        # The tool's answer tells the outcome, as the plain JSON door's does: no push to say
        # it again.
        ports.adapters.outbox.delivered(item)
    return item


class AnswerArgs(RequestBody):
    capture_id: str = Field(description="The id of the capture that asked the question.")
    answer: str = Field(
        min_length=1,
        max_length=MAX_ANSWER_CHARS,
        description="The user's answer to the capture's question (questionText), in their words.",
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Optional. Send the same key when retrying the same answer.",
    )


async def _answer_question(user_id: str, args: AnswerArgs, ports: AssistantPorts) -> InboxItem:
    app = ports.adapters
    answer = new_text_capture(user_id, args.answer, args.idempotency_key, MAX_ANSWER_CHARS)
    item = await open_follow_up(args.capture_id, answer, app.repo)
    settled = await settled_within(answer_question(item, answer, app), ports.wait_s)
    if settled.has_ended:
        app.outbox.delivered(settled)
    return settled


class UpdateArgs(RequestBody):
    capture_id: str = Field(description="The id of the filed capture to change.")
    etag: str = Field(
        min_length=1,
        description="The item's etag, as list_bucket, person or the last update_capture gave "
        "it: the change is refused (PRECONDITION_FAILED) if the item changed since.",
    )
    title: str = Field(default=None, min_length=1, max_length=TITLE_MAX, description="A new title.")  # type: ignore[assignment]  # None: left out
    due_date: Day | None = Field(
        default=None, description="A new due day (YYYY-MM-DD), or null to clear it."
    )
    next_action: str | None = Field(
        default=None,
        min_length=1,
        max_length=NEXT_ACTION_MAX,
        description="Projects only: the next physical action, or null to clear it.",
    )
    done: StrictBool = Field(default=None, description="Mark the item done (true) or open (false).")  # type: ignore[assignment]  # None: left out


class Updated(Document):
    """update_capture's answer: the filed item as it is now, with its new etag."""

    item: dict[str, Any]


async def _update_capture(user_id: str, args: UpdateArgs, ports: AssistantPorts) -> Updated:
    changed = args.model_fields_set - {"capture_id", "etag"}
    patch = FiledPatch.model_validate({name: getattr(args, name) for name in changed})
    view = await edit_filed(user_id, args.capture_id, patch, args.etag, ports.adapters)
    # Document.to_json leaves a document's own etag out; here it is the point.
    return Updated(item={**view.to_json(), "etag": view.etag})


class TodayArgs(RequestBody):
    date: Day | None = Field(
        default=None,
        description="Optional. The day (YYYY-MM-DD) in the user's time zone; today if left out.",
    )


async def _today(user_id: str, args: TodayArgs, ports: AssistantPorts) -> Document:
    app = ports.adapters
    prefs = await get_preferences(user_id, ports.preferences)
    day = args.date or prefs.today(ports.now())
    return await day_digest(user_id, day, prefs, app.repo, app.filed)


CAPTURE_TOOL: Tool[NewCaptureArgs, AssistantPorts] = Tool(
    "capture",
    "Put something in the user's second brain. It is stored at once, then filed into a bucket "
    "(people, projects, ideas, admin). Returns the capture: its status and filedBucket once "
    "filed; status needs_clarification or needs_review with questionText when it needs the "
    "user to say more (ask them, then call answer_question); received or classifying if it is "
    "still being filed (read it later with get_capture).",
    NewCaptureArgs,
    _capture,
    writes=True,
)
ANSWER_QUESTION_TOOL: Tool[AnswerArgs, AssistantPorts] = Tool(
    "answer_question",
    "Answer the question a capture asked (its status is needs_clarification or needs_review, "
    "its questionText says what it wants to know). The capture is filed again with the "
    "answer; returns it as capture does.",
    AnswerArgs,
    _answer_question,
    writes=True,
)
UPDATE_CAPTURE_TOOL: Tool[UpdateArgs, AssistantPorts] = Tool(
    "update_capture",
    "Change a filed item: its title, due date, next action (projects only) or done. Send only "
    "what changes, with the etag the item was read with. Returns the item and its new etag.",
    UpdateArgs,
    _update_capture,
    writes=True,
)
TODAY_TOOL: Tool[TodayArgs, AssistantPorts] = Tool(
    "today",
    "The user's digest for a day: what is due or overdue (admin, projects, people), the "
    "questions waiting for an answer, open projects and people to follow up, and what came in "
    "the day before. Use it for 'what's due', 'what's on today' or to plan the day.",
    TodayArgs,
    _today,
)
