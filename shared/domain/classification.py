"""What every classifier returns: a guess of the bucket, with its confidence.

The classifier only guesses; `shared.domain.outcomes` applies the server-side thresholds that
decide CLASSIFIED, LOW_CONFIDENCE or MISUNDERSTOOD.
"""

from datetime import date
from enum import StrEnum

from pydantic import Field

from shared.domain.text import ValidTextModel


class Bucket(StrEnum):
    PEOPLE = "People"
    PROJECTS = "Projects"
    IDEAS = "Ideas"
    ADMIN = "Admin"


class Classification(ValidTextModel):
    """A classifier's guess for one capture."""

    bucket: Bucket | None = Field(
        description="Best bucket, or None when the text is unintelligible"
    )
    confidence: float = Field(ge=0.0, le=1.0)
    title: str = Field(max_length=120, description="A short title for the filed item")
    question: str | None = Field(
        default=None, description="A clarifying question when the text cannot be filed"
    )
    # Details a model read (the OpenAI path); None: the server's rules read them from the text.
    people: list[str] | None = Field(default=None, description="The people named")
    due_date: date | None = Field(default=None, description="The day the capture names")
    # The buckets its question names, best first ("Projects or Admin?"): a client offers them
    # as buttons, whatever the outcome, rather than reading them out of the words.
    named_buckets: list[Bucket] = Field(
        default_factory=list, description="The buckets the question names"
    )
