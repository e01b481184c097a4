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
    # The buckets its question names, best first ("Projects or Admin?"): a client offers them
    # as buttons, whatever the outcome, rather than reading them out of the words.
    named_buckets: list[Bucket] = Field(
        default_factory=list, description="The buckets the question names"
    )


# What a classifier reads of a capture: its start and its end. A capture is kept whole however
# long it is, but what it is about is said at its start (and often summed up at its end); a
# model reading 100,000 characters would cost more and take longer for no better bucket, and
# the offline encoder reads 256 word pieces anyway.
EXCERPT_HEAD_CHARS = 3000
EXCERPT_TAIL_CHARS = 1000
EXCERPT_GAP = "\n…\n"
# How far back from a cut a space is looked for, so that words stay whole.
_WORD_ROOM = 40


def excerpt_to_classify(text: str) -> str:
    """`text` as the classifier reads it: whole when short, else its start and its end cut at
    words with a visible gap between them. Never what is stored: only what a model is asked."""
    if len(text) <= EXCERPT_HEAD_CHARS + EXCERPT_TAIL_CHARS + len(EXCERPT_GAP):
        return text
    head = text[:EXCERPT_HEAD_CHARS]
    space = head.rfind(" ", EXCERPT_HEAD_CHARS - _WORD_ROOM)
    head = head[:space] if space > 0 else head
    tail = text[-EXCERPT_TAIL_CHARS:]
    space = tail.find(" ", 0, _WORD_ROOM)
    tail = tail[space + 1 :] if space >= 0 else tail
    return head.rstrip() + EXCERPT_GAP + tail.lstrip()
