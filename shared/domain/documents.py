"""The base of every document, message and request body: pydantic models, free of SDK types.

Field names are camelCase on the wire and in Cosmos (the clients' contract), snake_case
in Python.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

from shared.domain.text import ValidTextModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def utc_text(value: datetime) -> str:
    # One fixed width, so that stored strings sort as the instants do (the inbox pages on it).
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


Timestamp = Annotated[datetime, PlainSerializer(utc_text, when_used="json")]

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _written_day(value: object) -> object:
    # Only YYYY-MM-DD: pydantic would also read a number as seconds since 1970.
    if not (isinstance(value, date) or (isinstance(value, str) and _DAY.fullmatch(value))):
        raise ValueError("not a day written YYYY-MM-DD")
    return value


# A day a client sends: YYYY-MM-DD and a real one (no 2026-02-31).
Day = Annotated[date, BeforeValidator(_written_day)]


class Document(ValidTextModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json(self) -> dict[str, Any]:
        """The stored / sent form: camelCase, ISO dates, no Cosmos system fields."""
        return self.model_dump(mode="json", by_alias=True, exclude={"etag"})


class RequestBody(Document):
    """A JSON body a client sends us: a field we do not know is a mistake worth a 422."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
