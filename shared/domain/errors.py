"""Errors of the capture domain: what services raise and callers act on.

`Refused` and its kinds are the one family a client is told: every door reads its `message`
and `code` (problem+json, whose status the kind decides in `shared/http/edge.py`; an AG-UI
`RUN_ERROR`; an MCP tool's error), and `refusal_for` says what any other exception is told
as. The rest are raised by the ports and handled by the services.
"""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    """A request the service will not carry out. `message` is safe to show, `code` is stable
    for clients (None: the kind says it all), `details` go into the answer as they are."""

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


class Unavailable(Refused):
    """Storage could not take the request now: the same request may work after
    `retry_after_s`."""

    def __init__(self, message: str, code: str | None = None, retry_after_s: int = 5) -> None:
        super().__init__(message, code)
        self.retry_after_s = retry_after_s


class Failed(Refused):
    """Something unexpected went wrong on our side (logged where it happened): nothing of it
    is told but that."""


STORAGE_DOWN = "Storage is unavailable right now. Please try again."
SOMETHING_WENT_WRONG = "Something went wrong on our side. Please try again."


def refusal_for(exc: Exception) -> Refused:
    """What a client is told of an exception a use case raised, whatever the door: a refusal
    as it is, storage down as `Unavailable`, anything else as `Failed` (INTERNAL)."""
    if isinstance(exc, Refused):
        return exc
    if isinstance(exc, StorageUnavailable):
        return Unavailable(STORAGE_DOWN)
    return Failed(SOMETHING_WENT_WRONG, "INTERNAL")


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


class ModelUnavailable(Exception):
    """The ask agent's model could not answer now (down, rate limited, timed out) or answered
    what cannot be read: the answer is made from the captures without it."""


class EmbedderUnavailable(Exception):
    """The embedding model could not answer now: the capture is kept without a vector (or with
    its old one), and the backfill embeds it later."""


class TranscriberUnavailable(Exception):
    """The transcriber cannot run now (model missing, broken or overloaded): retry later."""


class AudioUndecodable(Exception):
    """The audio cannot be decoded: a final, failed outcome for this capture, not a retry."""


class AudioGone(Exception):
    """The recording is no longer in storage (deleted meanwhile)."""


class AudioTooLong(Exception):
    """The audio plays longer than a voice note may, as counted while decoding it (whatever
    its container says): a final, failed outcome for this capture, not a retry."""


class PushUnavailable(Exception):
    """A push service could not take a notification now (429, 5xx, unreachable): the queue
    retries the outcome message."""
