"""What every classifier returns: a guess of the bucket, with its confidence.

The classifier only guesses; `shared.domain.outcomes` applies the server-side thresholds that
decide CLASSIFIED, LOW_CONFIDENCE or MISUNDERSTOOD.
"""

from datetime import date
from enum import StrEnum

from pydantic import Field

from shared.domain.text import ValidTextModel

# The longest title a filed item has: a classifier's, a pick's, a user's edit.
TITLE_MAX = 120
# What a title cut short does not end with.
_TRAILING = " \t\n.,;:!?-\u2013\u2014\u2026"


def cut_title(text: str, limit: int = TITLE_MAX) -> str:
    """`text` on one line, at most `limit` characters, cut at a word boundary when it is
    longer (a word longer than the limit is cut). No ellipsis is stored: the title is data
    (searched, exported as a file name, edited by the user), the whole words stay in the
    capture's text, and a screen marks a cut itself."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1]
    cut = cut[: cut.rindex(" ")] if " " in cut else cut[:limit]
    return cut.rstrip(_TRAILING) or text[:limit]


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
    title: str = Field(max_length=TITLE_MAX, description="A short title for the filed item")
    question: str | None = Field(
        default=None, description="A clarifying question when the text cannot be filed"
    )
    # Details a model read (the OpenAI path); None: the server's rules read them from the text.
    people: list[str] | None = Field(default=None, description="The people named")
    due_date: date | None = Field(default=None, description="The day the capture names")
