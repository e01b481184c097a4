"""What every transcriber returns for one recording."""

from __future__ import annotations

from shared.domain.text import ValidTextModel


class Transcript(ValidTextModel):
    text: str
    language: str | None
    duration_s: float | None = None  # not every service reports it
