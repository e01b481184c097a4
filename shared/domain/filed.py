"""What the bucket containers hold: one filed item per filed capture, with the details read from
it (the people named and a due date in every bucket, and what its own bucket cares about)."""

from __future__ import annotations

import unicodedata
from datetime import date
from typing import Any, Literal

from pydantic import Field, computed_field

from shared.domain.classification import Bucket
from shared.domain.documents import Document, Timestamp, utc_text, utcnow
from shared.domain.people_history import cued_people

# What an Admin item without a due date sorts as: after every real date.
_NO_DATE = "9999-12-31"


def person_key(name: str) -> str:
    """A name as it is matched: casefolded, accents stripped ("Zoë" and "zoe" are one key)."""
    decomposed = unicodedata.normalize("NFKD", name.strip().casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class FiledItem(Document):
    """What a bucket container holds: the same id as its inbox item, pointing back to it."""

    id: str
    user_id: str
    inbox_item_id: str
    bucket: Bucket
    title: str
    text: str
    confidence: float
    source: Literal["text", "voice"] = "text"
    people: list[str] = Field(default_factory=list, description="Names mentioned")
    due_date: date | None = None
    done: bool = False
    # The `settledAt` of the inbox item's outcome this was filed from (None before it existed).
    settled_at: Timestamp | None = None
    # The capture's own creation time (older items: when they were filed).
    created_at: Timestamp = Field(default_factory=utcnow)
    etag: str | None = Field(default=None, alias="_etag")

    # stored, so that a person's items are one ARRAY_CONTAINS away
    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form over a property
    @property
    def people_keys(self) -> list[str]:
        return list(dict.fromkeys(person_key(p) for p in self.people))

    # stored: the names said here with a person's cue ("Harj says", "ask harj"), which the
    # user's later captures are read with (people_history.py, CaptureRepository.known_people)
    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form over a property
    @property
    def people_known(self) -> list[str]:
        return cued_people(self.text, self.people)

    # stored: the bucket page's one ORDER BY and its keyset
    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form over a property
    @property
    def list_order(self) -> str:
        """Ascending in the order a bucket lists its items: newest first, and in Admin by due
        date first (none last). Unique, as it ends with the id."""
        # Each digit of the timestamp inverted: a later instant sorts first.
        newest_first = "".join(
            str(9 - int(ch)) if ch.isdigit() else ch for ch in utc_text(self.created_at)
        )
        if self.bucket is Bucket.ADMIN:
            due = self.due_date.isoformat() if self.due_date else _NO_DATE
            return f"{due}|{newest_first}|{self.id}"
        return f"{newest_first}|{self.id}"


class PersonItem(FiledItem):
    bucket: Literal[Bucket.PEOPLE] = Bucket.PEOPLE
    follow_up: str | None = None


class ProjectItem(FiledItem):
    bucket: Literal[Bucket.PROJECTS] = Bucket.PROJECTS
    next_action: str | None = None


class IdeaItem(FiledItem):
    bucket: Literal[Bucket.IDEAS] = Bucket.IDEAS
    one_liner: str | None = None


class AdminItem(FiledItem):
    bucket: Literal[Bucket.ADMIN] = Bucket.ADMIN


FILED_MODELS: dict[Bucket, type[FiledItem]] = {
    Bucket.PEOPLE: PersonItem,
    Bucket.PROJECTS: ProjectItem,
    Bucket.IDEAS: IdeaItem,
    Bucket.ADMIN: AdminItem,
}


def filed_model(doc: dict[str, Any]) -> FiledItem:
    """A stored filed document as the model of its bucket."""
    return FILED_MODELS[Bucket(doc["bucket"])].model_validate(doc)
