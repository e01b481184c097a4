"""The base of every document, message and request body: pydantic models, free of SDK types.

Field names are camelCase on the wire and in Cosmos (the clients' contract), snake_case
in Python.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

from shared.domain.text import ValidTextModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def utc_text(value: datetime) -> str:
    # One fixed width, so that stored strings sort as the instants do (the inbox pages on it).
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


Timestamp = Annotated[datetime, PlainSerializer(utc_text, when_used="json")]


class Document(ValidTextModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json(self) -> dict:
        """The stored / sent form: camelCase, ISO dates, no Cosmos system fields."""
        return self.model_dump(mode="json", by_alias=True, exclude={"etag"})


class RequestBody(Document):
    """A JSON body a client sends us: a field we do not know is a mistake worth a 422."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
