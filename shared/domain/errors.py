"""Errors of the capture domain that services raise and callers act on."""

from __future__ import annotations


class CaptureDeleted(Exception):
    """The capture was deleted (or is being deleted) while this work was under way: the work
    stops, and what it wrote is taken back."""


class NotStored(Exception):
    """Nothing was stored; `message` is safe to show. Raised by a run's `store` when it refuses
    (a reused idempotency key, a follow-up to a capture that changed meanwhile), and reported
    as a run's progress."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
