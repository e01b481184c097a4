"""What happens to a capture, as the use cases report it: its progress through the pipeline and
the stage a reader sees it at. Any door (AG-UI, plain JSON) tells a client from these."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import IntEnum

from shared.domain.capture import InboxItem, Status
from shared.domain.errors import Refused


@dataclass(frozen=True)
class Stored:
    """The capture (or the answer) is stored; the classifier's turn."""

    item: InboxItem


@dataclass(frozen=True)
class Settled:
    """Classified and filed: the item carries its outcome."""

    item: InboxItem


@dataclass(frozen=True)
class Deferred:
    """Stored, but classifying must wait for the worker (or, failing that, a retry)."""

    item: InboxItem


# A store-and-file reports Stored (or the Refused that stopped it), then Settled, Deferred or a
# Refused.
Progress = Stored | Settled | Deferred | Refused


# What a resume's last answer did (services/resume.py), for the door to tell.
@dataclass(frozen=True)
class Answered:
    """The capture as the answer left it (or, replayed, as it stands): to be told with its
    outcome when `with_outcome` and it has one, else by its status."""

    item: InboxItem
    with_outcome: bool


@dataclass(frozen=True)
class Refiling:
    """An answer to "what did you mean?": the capture is filed again, with this progress."""

    progress: AsyncIterator[Progress]


Resumed = Answered | Refiling


class Stage(IntEnum):
    """How far a capture is, as a reader following it sees it (it never steps back)."""

    WAITING = 0  # for the audio
    TRANSCRIBING = 1
    CLASSIFYING = 2  # text stored, the classifier's turn
    SETTLED = 3
    FAILED = 4


def stage_of(item: InboxItem) -> Stage:
    if item.status is Status.FAILED:
        return Stage.FAILED
    if item.is_settled:
        return Stage.SETTLED
    if item.status is Status.AWAITING_UPLOAD:
        return Stage.WAITING
    if item.status is Status.TRANSCRIBING:
        return Stage.TRANSCRIBING
    return Stage.CLASSIFYING


@dataclass(frozen=True)
class StageReached:
    """A capture, as a reader following it read it, at a stage further than the last one."""

    item: InboxItem
    stage: Stage


@dataclass(frozen=True)
class Stopped:
    """A reader stopped following a capture before its end: deleted, or out of time."""

    code: str
    message: str
