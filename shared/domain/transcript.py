"""What every transcriber returns for one recording: its text, and the segments it heard with
their times (seconds from the start), which a player seeks to."""

from __future__ import annotations

from pydantic import Field

from shared.domain.documents import Document
from shared.domain.text import ValidTextModel


class TranscriptSegment(Document):
    """One stretch of speech: from `start` to `end` seconds into the recording."""

    start: float = Field(ge=0, description="Seconds from the start of the recording.")
    end: float = Field(ge=0, description="Seconds from the start of the recording.")
    text: str


class Transcript(ValidTextModel):
    text: str
    language: str | None
    duration_s: float | None = None  # not every service reports it
    # Empty when the service tells no times (gpt-4o-*-transcribe's "json").
    segments: list[TranscriptSegment] = Field(default_factory=list)


def segments_of(pieces: list[tuple[float, float, str]]) -> list[TranscriptSegment]:
    """Segments from (start, end, text), rounded to the millisecond, the empty ones left out."""
    return [
        TranscriptSegment(
            start=round(max(start, 0.0), 3), end=round(max(end, start, 0.0), 3), text=t
        )
        for start, end, raw in pieces
        if (t := raw.strip())
    ]
