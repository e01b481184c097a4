"""Query strings: each route's parameters as the client writes them (camelCase, text), the
model /api/openapi.json documents, parsed into the use case's plain input or a 422 about the
first parameter that is wrong. Unknown parameters are ignored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from shared.domain.capture import LISTED, Status
from shared.domain.documents import Day
from shared.domain.filed import person_key
from shared.domain.ports import FiledFilter
from shared.http.problems import Problem
from shared.services.ask import MAX_QUESTION_CHARS, THREAD_ID_PATTERN, ThreadQuestion
from shared.services.inbox import MAX_PAGE, InboxQuery
from shared.services.recall import (
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_RELATED,
    MAX_SEARCH,
    BucketQuery,
    PersonQuery,
    RelatedQuery,
    SearchQuery,
)
from shared.services.recall import MAX_PAGE as MAX_BUCKET_PAGE

M = TypeVar("M", bound=BaseModel)

# "1.0", "1.12.3-beta": a longer protocolVersion is no version (the events feed says the same).
MAX_VERSION_CHARS = 20
# What a client may filter by, as a type: pydantic checks it, and documents it as an enum. A
# Literal built at run time, which a type checker cannot read: to it, a str.
if TYPE_CHECKING:
    ListedStatus = str
else:
    ListedStatus = Literal[tuple(s.value for s in LISTED)]


def _digits(value: object) -> object:
    # ASCII digits only, and few: str.isdigit() also takes "²" and 5000-digit numbers, which
    # int() refuses, and pydantic would also read " 5", "+5", "5.0" and "1_0".
    if isinstance(value, str) and not (value.isascii() and value.isdigit() and len(value) <= 3):
        raise ValueError("not a whole number of at most 3 digits")
    return value


def _empty_is_none(value: object) -> object:
    return value or None


class _Params(BaseModel):
    # Only the camelCase names: `?continuation_token=` is an unknown parameter, ignored.
    model_config = ConfigDict(alias_generator=to_camel, frozen=True)


class InboxParams(_Params):
    """The query of GET /api/inbox, `?limit=1..100&status=<status>&continuationToken=...`."""

    limit: int = Field(default=20, ge=1, le=MAX_PAGE)
    status: ListedStatus | None = None
    continuation_token: str | None = Field(
        default=None, description="From the previous page's `continuationToken`."
    )

    _limit_digits = field_validator("limit", mode="before")(_digits)
    _token = field_validator("continuation_token", mode="before")(_empty_is_none)


def parse_inbox_query(params: Mapping[str, str]) -> InboxQuery:
    """GET /api/inbox's query (one value each), or a 422 about the first parameter that is
    wrong."""
    try:
        query = InboxParams.model_validate(params)
    except ValidationError as exc:
        name = exc.errors()[0]["loc"][0]
        raise Problem(422, _INVALID_INBOX_QUERY.get(str(name), f"{name} is not valid.")) from exc
    return InboxQuery(
        limit=query.limit,
        status=Status(query.status) if query.status else None,
        continuation_token=query.continuation_token,
    )


_INVALID_INBOX_QUERY = {
    "limit": f"limit must be a whole number from 1 to {MAX_PAGE}.",
    "status": f"status must be one of: {', '.join(LISTED)}.",
}


class FeedParams(_Params):
    """The query of GET /api/captures/{id}/events. A client declares the AG-UI version it
    speaks as a POST run would in its RunAgentInput: from 1.0 on, a capture that asks the user
    ends the feed with an interrupt."""

    protocol_version: str | None = Field(
        default=None,
        max_length=MAX_VERSION_CHARS,
        description="The AG-UI protocol version the client speaks, e.g. `1.0`.",
    )


def parse_feed_query(params: Mapping[str, str]) -> FeedParams:
    try:
        return FeedParams.model_validate(params)
    except ValidationError as exc:
        raise Problem(422, "protocolVersion must be a version such as 1.0.") from exc


class BucketParams(_Params):
    """`?limit=1..100&continuationToken=&person=&done=true|false&dueBefore=YYYY-MM-DD`."""

    limit: int = Field(default=20, ge=1, le=MAX_BUCKET_PAGE)
    continuation_token: str | None = Field(
        default=None, max_length=400, description="From the previous page's `continuationToken`."
    )
    person: str | None = Field(
        default=None,
        max_length=MAX_NAME_CHARS,
        description="Only items naming this person (case- and accent-insensitive; empty: all).",
    )
    done: Literal["true", "false"] | None = None
    due_before: Day | None = Field(
        default=None, description="Only items due before this day (YYYY-MM-DD)."
    )

    _limit_digits = field_validator("limit", mode="before")(_digits)
    _empty = field_validator("continuation_token", "person", mode="before")(_empty_is_none)

    def query(self) -> BucketQuery:
        where = FiledFilter(
            person_key=person_key(self.person) if self.person else None,
            done=None if self.done is None else self.done == "true",
            due_before=self.due_before,
        )
        return BucketQuery(self.limit, self.continuation_token, where)


def parse_bucket_query(params: Mapping[str, str]) -> BucketQuery:
    """GET /api/buckets/{bucket}'s query, or a 422 about the first parameter that is wrong."""
    return _query(BucketParams, params, _INVALID_BUCKET_QUERY).query()


_INVALID_BUCKET_QUERY = {
    "limit": f"limit must be a whole number from 1 to {MAX_BUCKET_PAGE}.",
    "continuationToken": "continuationToken is not valid.",
    "person": "person must be a name of 1 to 100 characters.",
    "done": "done must be true or false.",
    "dueBefore": "dueBefore must be a day, YYYY-MM-DD.",
}


class PersonParams(_Params):
    """`?limit=1..100&continuationToken=`: a person's items a page at a time, newest first."""

    limit: int = Field(default=20, ge=1, le=MAX_BUCKET_PAGE)
    continuation_token: str | None = Field(
        default=None, max_length=1000, description="From the previous page's `continuationToken`."
    )

    _limit_digits = field_validator("limit", mode="before")(_digits)
    _token = field_validator("continuation_token", mode="before")(_empty_is_none)


def parse_person_query(params: Mapping[str, str]) -> PersonQuery:
    """GET /api/people/{name}'s query, or a 422 about the first parameter that is wrong."""
    query = _query(PersonParams, params, _INVALID_PERSON_QUERY)
    return PersonQuery(query.limit, query.continuation_token)


_INVALID_PERSON_QUERY = {
    "limit": f"limit must be a whole number from 1 to {MAX_BUCKET_PAGE}.",
    "continuationToken": "continuationToken is not valid.",
}


class SearchParams(_Params):
    q: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for.")
    limit: int = Field(default=20, ge=1, le=MAX_SEARCH)

    _limit_digits = field_validator("limit", mode="before")(_digits)

    @field_validator("q")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("blank")
        return value


def parse_search_query(params: Mapping[str, str]) -> SearchQuery:
    query = _query(SearchParams, params, _INVALID_SEARCH_QUERY)
    return SearchQuery(query.q, query.limit)


class RelatedParams(_Params):
    """`?limit=1..20`: how many related items at most."""

    limit: int = Field(default=5, ge=1, le=MAX_RELATED)

    _limit_digits = field_validator("limit", mode="before")(_digits)


def parse_related_query(params: Mapping[str, str]) -> RelatedQuery:
    query = _query(RelatedParams, params, _INVALID_RELATED_QUERY)
    return RelatedQuery(query.limit)


_INVALID_RELATED_QUERY = {"limit": f"limit must be a whole number from 1 to {MAX_RELATED}."}

_INVALID_SEARCH_QUERY = {
    "q": f"q must be 1 to {MAX_QUERY_CHARS} characters, not only spaces.",
    "limit": f"limit must be a whole number from 1 to {MAX_SEARCH}.",
}


class ExportParams(BaseModel):
    """`?audio=true`: the voice notes' recordings too, each beside its note."""

    model_config = ConfigDict(frozen=True)

    audio: bool = Field(
        default=False, description="Put each kept recording beside its note, embedded in it."
    )


def parse_export_query(params: Mapping[str, str]) -> ExportParams:
    return _query(ExportParams, params, {"audio": "audio must be true or false."})


class AskParams(_Params):
    """The query of GET /api/ask: `?q=<question>&threadId=<thread>`."""

    q: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The question.")
    thread_id: str | None = Field(
        default=None,
        pattern=THREAD_ID_PATTERN,
        description="A thread of your choosing (letters, digits, `.`, `_`, `:`, `-`; up to "
        "100): its earlier questions and answers count, and this one joins them.",
    )


def parse_ask_query(params: Mapping[str, str]) -> ThreadQuestion:
    query = _query(AskParams, params, _INVALID_ASK_QUERY)
    return ThreadQuestion(query.q, query.thread_id)


_INVALID_ASK_QUERY = {
    "q": f"q must be 1 to {MAX_QUESTION_CHARS} characters.",
    "threadId": "threadId must be 1 to 100 letters, digits, '.', '_', ':' or '-'.",
}


class DigestParams(BaseModel):
    """`?date=YYYY-MM-DD`: the local day (today in the user's zone when left out)."""

    model_config = ConfigDict(frozen=True)

    date: Day | None = Field(default=None, description="The local day, YYYY-MM-DD.")


def parse_digest_query(params: Mapping[str, str]) -> DigestParams:
    return _query(DigestParams, params, {"date": "date must be a day, YYYY-MM-DD."})


class ReviewParams(BaseModel):
    """`?week=YYYY-Www`: the ISO week (this week in the user's zone when left out)."""

    model_config = ConfigDict(frozen=True)

    week: str | None = Field(
        default=None, pattern=r"^[0-9]{4}-W[0-9]{2}$", description="The ISO week, e.g. 2026-W48."
    )


def parse_review_query(params: Mapping[str, str]) -> ReviewParams:
    return _query(ReviewParams, params, {"week": "week must be an ISO week, YYYY-Www."})


def _query(model: type[M], params: Mapping[str, str], messages: dict[str, str]) -> M:
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        name = str(loc[0]) if loc else "query"
        raise Problem(
            422, messages.get(name, f"{name} is not valid."), code="INVALID_QUERY"
        ) from exc
