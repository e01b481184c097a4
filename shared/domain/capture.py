"""A capture (its inbox item) and its lifecycle: the statuses, the transitions between them,
and the questions services ask of a capture. Nothing else changes a capture's status.

Every transition returns the changed copy and leaves `self` alone; the caller saves it
(ETag-guarded). A transition from a status that does not allow it raises IllegalTransition:
services check the predicates first, so reaching one is a bug.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from shared.domain.classification import Bucket, Classification, excerpt_to_classify
from shared.domain.documents import Document, Timestamp, utcnow
from shared.domain.due_dates import due_date_in
from shared.domain.errors import IllegalTransition
from shared.domain.filed import FiledItem
from shared.domain.interrupts import (
    AnswerPayload,
    BucketPayload,
    InterruptKind,
    InterruptRecord,
    response_of,
)
from shared.domain.outcomes import (
    FILED_OUTCOMES,
    FailureCode,
    Outcome,
    decide,
    question_for,
)
from shared.domain.people import people_in
from shared.domain.retrieval import embedding_text
from shared.domain.transcript import TranscriptSegment


class Status(StrEnum):
    AWAITING_UPLOAD = "awaiting_upload"  # voice: stored, waiting for its audio
    RECEIVED = "received"  # text stored; no model has been asked yet
    TRANSCRIBING = "transcribing"
    QUEUED = "queued"  # waiting for the classify worker
    FILED = "filed"  # CLASSIFIED
    NEEDS_REVIEW = "needs_review"  # LOW_CONFIDENCE: filed provisionally
    NEEDS_CLARIFICATION = "needs_clarification"  # MISUNDERSTOOD: nothing filed
    UNRESOLVED = "unresolved"
    FAILED = "failed"
    # A tombstone: DELETE blanks the capture first, so that no write racing the delete can
    # bring it back or leave a filed copy behind; then it removes everything.
    DELETING = "deleting"


# What a user's edit may change (PATCH /api/captures/{id}); the filed item follows.
EDITABLE = frozenset({"title", "due_date", "next_action", "done"})

# The status subsets, each defined here only.
AWAITING_AUDIO = frozenset({Status.AWAITING_UPLOAD, Status.TRANSCRIBING})
AWAITING_CLASSIFIER = frozenset({Status.RECEIVED, Status.QUEUED})
# The classifier has had its say: re-running it would file twice.
SETTLED = frozenset(
    {Status.FILED, Status.NEEDS_REVIEW, Status.NEEDS_CLARIFICATION, Status.UNRESOLVED}
)
# A run of the capture has an end to tell: an outcome, or a failure.
ENDED = SETTLED | {Status.FAILED}
# What the inbox lists and a client may filter by: all but the tombstone.
LISTED = tuple(s for s in Status if s is not Status.DELETING)

STATUS_OF_OUTCOME = {
    Outcome.CLASSIFIED: Status.FILED,
    Outcome.LOW_CONFIDENCE: Status.NEEDS_REVIEW,
    Outcome.MISUNDERSTOOD: Status.NEEDS_CLARIFICATION,
    Outcome.UNRESOLVED: Status.UNRESOLVED,
}

# The outcomes that ask the user something, and what they ask.
ASKS = {Outcome.MISUNDERSTOOD: InterruptKind.ANSWER, Outcome.LOW_CONFIDENCE: InterruptKind.BUCKET}


# Each transition, and the statuses it may start from.
TRANSITIONS: dict[str, frozenset[Status]] = {
    "start_transcribing": AWAITING_AUDIO,  # again after a crash mid-transcription
    "transcribed": frozenset({Status.TRANSCRIBING}),
    # FAILED too: a capture whose worker gave up (CLASSIFY_FAILED) is queued again by a
    # retried run, and filed by a later job.
    "queued": AWAITING_CLASSIFIER | {Status.FAILED},
    "classified": AWAITING_CLASSIFIER | {Status.FAILED},
    "picked": AWAITING_CLASSIFIER | SETTLED | {Status.FAILED},
    # A typed answer: to "what did you mean?", or to "which bucket?" (the provisional filed item
    # stays until the answer's outcome replaces it).
    "reopened": frozenset({Status.NEEDS_CLARIFICATION, Status.NEEDS_REVIEW}),
    # The user dismisses the question; the capture stays as it is (unfiled, or provisionally
    # filed).
    "interrupt_cancelled": frozenset({Status.NEEDS_CLARIFICATION, Status.NEEDS_REVIEW}),
    "failed": AWAITING_AUDIO | AWAITING_CLASSIFIER,
    "tombstoned": frozenset(LISTED),
}


class Clarification(Document):
    """A user's answer to MISUNDERSTOOD, sent as a follow-up run."""

    run_id: str
    text: str
    at: Timestamp = Field(default_factory=utcnow)


class InboxItem(Document):
    """Every capture, whatever became of it. `id` is the capture id."""

    id: str
    user_id: str
    source: Literal["text", "voice"]
    text: str | None = None
    thread_id: str
    run_id: str
    status: Status = Status.RECEIVED
    outcome: Outcome | None = None
    filed_bucket: Bucket | None = None
    chosen_by: Literal["classifier", "user"] | None = None
    confidence: float | None = None
    title: str | None = None
    question_text: str | None = None
    error: FailureCode | None = None
    audio_blob: str | None = None  # voice: the recording's blob name
    # voice: the container `audio_blob` is in once the recording is kept apart from the uploads
    # (voice-recordings); None: the upload container (voice-notes), as for items stored before.
    audio_container: str | None = None
    audio_content_type: str | None = None
    # voice: the transcript's segments with their times (seconds), as the transcriber heard them.
    transcript_segments: list[TranscriptSegment] | None = None
    # voice: when the transcript stored was made, and when the user last asked for another
    # (POST /api/captures/{id}/transcribe): a request is pending while it is the later.
    transcribed_at: Timestamp | None = None
    transcription_requested_at: Timestamp | None = None
    # voice: when its recording was deleted (by the user, their retention, or not kept):
    # `audio_blob` is then None, so nothing names a blob that no longer exists.
    audio_deleted_at: Timestamp | None = None
    # The filed item's details, held here: the filed item is made from this document alone
    # (placement.py), so an edit saved here reaches it however the capture moves, and a move
    # carries them. Set when the capture is settled in a bucket (what a model read, the
    # server's rules filling in: shared/domain/details.py) and changed by the user's edits.
    # Not filed in a bucket: `people` and `dueDate` are what a model read (if anything), and
    # `nextAction` and `done` are None. `done` None on a filed capture also marks one settled
    # before the inbox item held its details: its filed item holds them (`holds_details`).
    people: list[str] | None = None
    due_date: date | None = None
    next_action: str | None = None  # Projects only
    done: bool | None = None
    # Follow-up answers, oldest first; the original `text` is never overwritten.
    clarifications: list[Clarification] = Field(default_factory=list)
    # The questions put to the user, oldest first; at most the last one is open.
    interrupts: list[InterruptRecord] = Field(default_factory=list)
    # The `updated_at` of the version whose outcome (or failure) a client was sent live, at the
    # end of a stream: the push worker does not notify what the user already saw.
    outcome_shown_at: Timestamp | None = None
    # When the current outcome was decided: the filed item made from it carries the same
    # instant, so a filed item left from an earlier outcome can be told apart (placement.py).
    settled_at: Timestamp | None = None
    created_at: Timestamp = Field(default_factory=utcnow)
    updated_at: Timestamp = Field(default_factory=utcnow)
    etag: str | None = Field(default=None, alias="_etag")
    # Its meaning, for search and related items (domain/retrieval.py): the vector of
    # `embedding_text`, and which model embedded which text (`embedding_key`). Stored, never
    # sent: `to_json` leaves them out, `stored_json` is what the repository writes.
    embedding: list[float] | None = Field(default=None, exclude=True)
    embedded_from: str | None = Field(default=None, exclude=True)

    def stored_json(self) -> dict[str, Any]:
        """The stored form: `to_json` and the embedding, where there is one."""
        stored = self.to_json()
        if self.embedding is not None:
            stored["embedding"] = self.embedding
            stored["embeddedFrom"] = self.embedded_from
        return stored

    def embedding_text(self) -> str:
        """What its vector is of (domain/retrieval.py): its words, as the classifier reads them."""
        return embedding_text(self.text_to_classify())

    def embedded(self, vector: list[float] | None, key: str | None) -> InboxItem:
        """With `vector` (of `embedding_text`, by the model `key` names); None clears it."""
        return self.model_copy(update={"embedding": vector, "embedded_from": key})

    # -- predicates ------------------------------------------------------------------------

    @property
    def is_deleted(self) -> bool:
        return self.status is Status.DELETING

    @property
    def is_settled(self) -> bool:
        return self.status in SETTLED

    @property
    def has_ended(self) -> bool:
        return self.status in ENDED

    @property
    def awaits_audio(self) -> bool:
        return self.status in AWAITING_AUDIO

    @property
    def holds_details(self) -> bool:
        """Whether this document holds its filed item's details (see `done`)."""
        return self.filed_bucket is not None and self.done is not None

    @property
    def open_interrupt(self) -> InterruptRecord | None:
        last = self.interrupts[-1] if self.interrupts else None
        return last if last is not None and last.is_open else None

    def interrupt(self, interrupt_id: str) -> InterruptRecord | None:
        return next((i for i in self.interrupts if i.id == interrupt_id), None)

    def text_to_classify(self) -> str:
        """The latest clarification first (it takes precedence), then what came before."""
        answers = [c.text for c in reversed(self.clarifications)]
        return "\n".join([*answers, self.text or ""]).strip()

    def words_day(self) -> date:
        """The day its latest words were said, which their "tomorrow" counts from: the latest
        answer's, else the capture's (a bucket picked days later says no words)."""
        said = self.clarifications[-1].at if self.clarifications else self.created_at
        return said.date()

    def can(self, transition: str) -> bool:
        return self.status in TRANSITIONS[transition]

    def may_be_classified(self) -> bool:
        return self.can("classified") and bool(self.text_to_classify())

    def may_be_picked(self) -> bool:
        """Only words can be filed: a voice note is picked once it has its transcript."""
        return self.can("picked") and bool(self.text_to_classify())

    def may_fail_with(self, code: FailureCode) -> bool:
        """A failure overwrites only a capture still waiting for the work that failed."""
        waiting = AWAITING_AUDIO if code.is_about_audio else AWAITING_CLASSIFIER
        return self.status in waiting

    # -- transitions -----------------------------------------------------------------------

    def start_transcribing(self) -> InboxItem:
        return self._to("start_transcribing", Status.TRANSCRIBING)

    def transcribed(self, text: str, segments: list[TranscriptSegment] | None = None) -> InboxItem:
        return self._to(
            "transcribed",
            Status.RECEIVED,
            text=text,
            transcript_segments=segments or [],
            transcribed_at=utcnow(),
        )

    @property
    def transcription_pending(self) -> bool:
        """A transcription the user asked for is still to be made."""
        asked = self.transcription_requested_at
        return asked is not None and (self.transcribed_at is None or self.transcribed_at < asked)

    def transcription_requested(self, at: Timestamp) -> InboxItem:
        """The user asked for the recording to be transcribed again. Not a change of its
        settlement: status and `updated_at` stay."""
        return self.model_copy(update={"transcription_requested_at": at})

    def retranscribed(
        self, text: str, segments: list[TranscriptSegment], at: Timestamp
    ) -> InboxItem:
        """A new transcript of the kept recording replaces the old one. Where it is filed, by
        whom, and the user's edits stay (the filed item follows the new words); an empty
        transcript (the new model heard nothing) leaves the words as they were."""
        if self.source != "voice" or self.is_deleted or self.text is None:
            raise IllegalTransition(f"capture {self.id} has no transcript to replace")
        words = {"text": text, "transcript_segments": segments} if text else {}
        return self.model_copy(update={**words, "transcribed_at": at})

    def audio_deleted(self, at: Timestamp) -> InboxItem:
        """Its recording is gone; the capture and its words stay."""
        return self.model_copy(
            update={"audio_blob": None, "audio_container": None, "audio_deleted_at": at}
        )

    def audio_kept_in(self, container: str) -> InboxItem:
        """Its recording was copied out of the uploads into `container`, where it is kept."""
        return self.model_copy(update={"audio_container": container})

    def queued(self) -> InboxItem:
        return self._to("queued", Status.QUEUED)

    def classified(self, c: Classification, known: frozenset[str] = frozenset()) -> InboxItem:
        """Settled by the classifier's guess: the thresholds decide the outcome, and the
        bucket is kept only for an outcome that files. `known`: the names the user's earlier
        captures said with a person's cue, which the people rules read this one with."""
        outcome = decide(c, rounds=len(self.clarifications))
        bucket = c.bucket if outcome in FILED_OUTCOMES else None
        return self._settled("classified", outcome, c, bucket, "classifier", known)

    def picked(self, bucket: Bucket, title: str) -> InboxItem:
        """Filed where the user says, whatever the classifier thought."""
        if not self.may_be_picked():
            raise IllegalTransition(f"capture {self.id} ({self.status}) has no text to file")
        choice = Classification(bucket=bucket, confidence=1.0, title=title)
        return self._settled("picked", Outcome.CLASSIFIED, choice, bucket, "user")

    def reopened(self, answer: Clarification) -> InboxItem:
        """A MISUNDERSTOOD (or LOW_CONFIDENCE) capture with the user's typed answer, back to
        the classifier as a new run of the same thread. The open question is resolved by the
        answer. `filed_bucket` stays: whoever files the answer moves the capture from there."""
        return self._to(
            "reopened",
            Status.RECEIVED,
            clarifications=[*self.clarifications, answer],
            interrupts=self._closing("resolved", response_of(AnswerPayload(answer=answer.text))),
            outcome=None,
            question_text=None,
            run_id=answer.run_id,
        )

    def interrupt_cancelled(self) -> InboxItem:
        """The user dismissed the open question: it is closed, the capture stays as it is."""
        if self.open_interrupt is None:
            raise IllegalTransition(f"capture {self.id} has no open question")
        return self._to("interrupt_cancelled", self.status, interrupts=self._closing("cancelled"))

    def failed(self, code: FailureCode) -> InboxItem:
        if not self.may_fail_with(code):
            raise IllegalTransition(f"capture {self.id} ({self.status}) cannot fail with {code}")
        return self._to("failed", Status.FAILED, error=code)

    def tombstoned(self) -> InboxItem:
        """The capture as DELETE leaves it while it removes the rest: no words of the user's."""
        return self._to(
            "tombstoned",
            Status.DELETING,
            text=None,
            title=None,
            question_text=None,
            clarifications=[],
            interrupts=[],
        )

    def edited(self, changes: dict[str, Any]) -> InboxItem:
        """The user edited what it filed (`title`, `due_date`, `next_action`, `done`). Not a
        change of its settlement: status and `updated_at` stay, so the version a push names is
        still this one."""
        if not self.holds_details:
            raise IllegalTransition(f"capture {self.id} holds no filed details to edit")
        unknown = set(changes) - EDITABLE
        if unknown:
            raise IllegalTransition(f"capture {self.id}: {sorted(unknown)} cannot be edited")
        return self.model_copy(update=changes)

    def holding(self, filed: FiledItem) -> InboxItem:
        """A capture settled before its inbox item held the details, taking them over from
        its filed item (which the user may have edited, title included)."""
        if self.filed_bucket is None or filed.bucket is not self.filed_bucket:
            raise IllegalTransition(f"capture {self.id} is not filed in {filed.bucket}")
        return self.model_copy(
            update={
                "title": filed.title,
                "people": list(filed.people),
                "due_date": filed.due_date,
                "next_action": getattr(filed, "next_action", None),
                "done": filed.done,
            }
        )

    def shown_live(self) -> InboxItem:
        """This version's outcome was sent to a client live. Not a change of the capture:
        `updated_at` stays, so it still names the version that was shown."""
        if not self.has_ended:
            raise IllegalTransition(f"capture {self.id} ({self.status}) has no outcome to show")
        return self.model_copy(update={"outcome_shown_at": self.updated_at})

    @property
    def was_shown_live(self) -> bool:
        return self.outcome_shown_at is not None and self.outcome_shown_at == self.updated_at

    def _settled(
        self,
        transition: str,
        outcome: Outcome,
        c: Classification,
        bucket: Bucket | None,
        chosen_by: Literal["classifier", "user"],
        known: frozenset[str] = frozenset(),
    ) -> InboxItem:
        picked = (
            response_of(BucketPayload(bucket=bucket)) if chosen_by == "user" and bucket else None
        )
        interrupts = self._closing("resolved", picked)
        asks = ASKS.get(outcome)
        # A user's pick keeps what the classifier read; a new guess brings its own.
        read = {"people": c.people, "due_date": c.due_date} if chosen_by == "classifier" else {}
        if asks is not None:
            # A which-bucket question's own buttons are every bucket (interrupt_for); another
            # question offers the buckets it names.
            named = c.named_buckets if asks is InterruptKind.ANSWER else []
            opened = InterruptRecord(
                id=f"{self.id}:{len(interrupts) + 1}", kind=asks, buckets=named
            )
            interrupts = [*interrupts, opened]
        settled = self._to(
            transition,
            STATUS_OF_OUTCOME[outcome],
            interrupts=interrupts,
            outcome=outcome,
            filed_bucket=bucket,
            chosen_by=chosen_by if bucket else None,
            confidence=c.confidence,
            title=c.title,
            question_text=question_for(outcome, c),
            error=None,
            **read,
        )
        settled = settled.model_copy(update={"settled_at": settled.updated_at})
        if bucket is None:
            return settled.model_copy(update={"next_action": None, "done": None})
        return settled.model_copy(update=self._filed_details(settled, c, chosen_by, known))

    def _filed_details(
        self,
        settled: InboxItem,
        c: Classification,
        chosen_by: Literal["classifier", "user"],
        known: frozenset[str],
    ) -> dict[str, Any]:
        """What `settled`'s filed item will hold besides its title and words. A user's move
        keeps what the capture held (the user's own edits too); otherwise what a model read
        stands, and the rules fill in what it left empty. Relative dates ("tomorrow") are read
        from the day its latest words were said, not the day it was settled: a capture asked
        about and picked days later keeps the day its words meant."""
        assert settled.filed_bucket is not None and settled.title is not None
        # The rules read what the classifier read (a long capture's start and end).
        text = excerpt_to_classify(settled.text_to_classify())
        today = settled.words_day()
        if chosen_by == "user" and self.holds_details:
            people, due, done = self.people or [], self.due_date, bool(self.done)
        else:
            read_people = c.people if chosen_by == "classifier" else self.people
            read_due = c.due_date if chosen_by == "classifier" else self.due_date
            people = read_people or people_in(text, known)
            due = read_due if read_due is not None else due_date_in(text, today)
            done = False
        next_action = None
        if settled.filed_bucket is Bucket.PROJECTS:
            # A project's next action is its title when filed, and the user's once edited.
            stays = chosen_by == "user" and self.holds_details
            stays = stays and self.filed_bucket is Bucket.PROJECTS
            next_action = self.next_action if stays else settled.title
        return {"people": people, "due_date": due, "next_action": next_action, "done": done}

    def _closing(
        self, status: Literal["resolved", "cancelled"], response: dict[str, Any] | None = None
    ) -> list[InterruptRecord]:
        """The interrupts with the open one (if any) closed."""
        return [i.closed(status, response) if i.is_open else i for i in self.interrupts]

    def _to(self, transition: str, status: Status, **changes: Any) -> InboxItem:
        if not self.can(transition):
            raise IllegalTransition(f"capture {self.id}: {transition} from {self.status}")
        return self.model_copy(update={**changes, "status": status, "updated_at": utcnow()})
