"""What every transcriber offers the pipeline: audio bytes in, a `Transcript` out, and the two
failure kinds the caller must tell apart (bad audio versus transcriber down)."""

from __future__ import annotations

from typing import Protocol

from shared.domain.text import ValidTextModel


class Transcript(ValidTextModel):
    text: str
    language: str | None
    duration_s: float | None = None  # not every service reports it


class AudioUndecodable(Exception):
    """The audio cannot be decoded: a final, failed outcome for this capture, not a retry."""


class TranscriberUnavailable(Exception):
    """The transcriber cannot run now (model missing, broken or overloaded): retry later."""


class Transcriber(Protocol):
    async def transcribe(self, audio: bytes, filename: str) -> Transcript:
        """Transcribe one recording; `filename` is informational (the format is sniffed)."""
        ...
