"""Captures as the ask tools give them, for the answerer's unit tests: `c{n}`, on a day of
November 2026."""

from __future__ import annotations

from shared.services.ask_run import Source


def source(n: int, text: str, day: int, people: list[str] | None = None) -> Source:
    made = Source.of(
        {
            "id": f"c{n}",
            "createdAt": f"2026-11-{day:02d}T09:00:00Z",
            "text": text,
            "people": people or [],
        }
    )
    assert made is not None
    return made
