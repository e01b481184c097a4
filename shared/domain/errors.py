"""Errors of the capture domain: what services raise and callers act on.

`Refused` and its kinds are answers for the client (the HTTP edge turns each kind into one
problem+json status); the rest are raised by the ports and handled by the services.
"""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    """A request the service will not carry out. `message` is safe to show, `code` is stable
    for clients, `details` go into the answer as they are."""

    def __init__(self, message: str, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details


class NotFound(Refused):
    """No such capture for this user (another user's capture is not found either)."""


class Conflict(Refused):
    """The capture is not in a state that allows this (now)."""


class Malformed(Refused):
    """Something the client sent back to us (e.g. a continuation token) is not ours."""


class Invalid(Refused):
    """The request is well-formed but its content is not acceptable."""


class TooLarge(Refused):
    """The content is over a size limit."""


class UnsupportedType(Refused):
    """The content is of a type we do not take."""


class LimitReached(Refused):
    """A per-user limit is reached; trying again after `retry_after_s` may work."""

    def __init__(self, message: str, code: str, retry_after_s: int) -> None:
        super().__init__(message, code)
        self.retry_after_s = retry_after_s


class NotConfigured(Refused):
    """This deployment has not set up what the request needs (e.g. Web Push's VAPID keys)."""


class PreconditionFailed(Refused):
    """The client's If-Match names a version that is no longer the stored one."""


class PreconditionRequired(Refused):
    """A change that must name the version it applies to (If-Match) came without one."""


class NotStored(Exception):
    """Nothing was stored; `message` is safe to show. Raised by a run's `store` when it refuses
    (a reused idempotency key, a follow-up to a capture that changed meanwhile), and reported
    as a run's progress."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CaptureDeleted(Exception):
    """The capture was deleted (or is being deleted) while this work was under way: the work
    stops, and what it wrote is taken back."""


class IllegalTransition(Exception):
    """A capture was asked to change in a way its lifecycle does not allow: a bug, not input."""


# What the ports raise.


class StaleItem(Exception):
    """The item changed (ETag mismatch) or was deleted since it was read."""


class StorageUnavailable(Exception):
    """Cosmos or Blob/Queue storage could not be reached or refused the request for now:
    retry later."""


class VoiceNoteTooLarge(Exception):
    """The upload went past the size limit; nothing was committed."""


class ClassifierUnavailable(Exception):
    """The model could not answer now (down, rate limited, timed out): queue and retry later."""


class TranscriberUnavailable(Exception):
    """The transcriber cannot run now (model missing, broken or overloaded): retry later."""


class AudioUndecodable(Exception):
    """The audio cannot be decoded: a final, failed outcome for this capture, not a retry."""


class AudioTooLong(Exception):
    """The audio plays longer than a voice note may, as counted while decoding it (whatever
    its container says): a final, failed outcome for this capture, not a retry."""


class PushUnavailable(Exception):
    """A push service could not take a notification now (429, 5xx, unreachable): the queue
    retries the outcome message."""
