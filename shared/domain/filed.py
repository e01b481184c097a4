"""What the bucket containers hold: one filed item per filed capture, with the details its
bucket cares about."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field

from shared.domain.classification import Bucket
from shared.domain.documents import Document, Timestamp, utcnow


class FiledItem(Document):
    """What a bucket container holds: the same id as its inbox item, pointing back to it."""

    id: str
    user_id: str
    inbox_item_id: str
    bucket: Bucket
    title: str
    text: str
    confidence: float
    # The `settledAt` of the inbox item's outcome this was filed from (None before it existed).
    settled_at: Timestamp | None = None
    created_at: Timestamp = Field(default_factory=utcnow)


class PersonItem(FiledItem):
    bucket: Literal[Bucket.PEOPLE] = Bucket.PEOPLE
    people: list[str] = Field(default_factory=list, description="Names mentioned")
    follow_up: str | None = None


class ProjectItem(FiledItem):
    bucket: Literal[Bucket.PROJECTS] = Bucket.PROJECTS
    next_action: str | None = None


class IdeaItem(FiledItem):
    bucket: Literal[Bucket.IDEAS] = Bucket.IDEAS
    one_liner: str | None = None


class AdminItem(FiledItem):
    bucket: Literal[Bucket.ADMIN] = Bucket.ADMIN
    due_date: date | None = None


FILED_MODELS: dict[Bucket, type[FiledItem]] = {
    Bucket.PEOPLE: PersonItem,
    Bucket.PROJECTS: ProjectItem,
    Bucket.IDEAS: IdeaItem,
    Bucket.ADMIN: AdminItem,
}
