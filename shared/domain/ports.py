"""The ports: what the services need from the world, as small protocols free of any SDK.

The adapters (shared/adapters/) implement them over Cosmos DB, Storage and the models;
shared/bootstrap.py picks and builds them; tests/fakes.py holds in-memory ones. Each method
says which errors of shared/domain/errors.py it may raise.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import NamedTuple, Protocol

from shared.domain.audio import StoredAudio
from shared.domain.capture import InboxItem, Status
from shared.domain.chat import AskThread, ChatTurn, ModelTurn, ToolSpec
from shared.domain.classification import Bucket, Classification
from shared.domain.digest import DigestJob, DigestRecord, Review
from shared.domain.filed import FiledItem
from shared.domain.messages import (
    BackfillJob,
    ClassifyJob,
    OutcomeMessage,
    QueueReceipt,
    TranscribeJob,
)
from shared.domain.policy import Policy
from shared.domain.preferences import Preferences
from shared.domain.push import Delivery, DeviceSlots, PushSubscription
from shared.domain.push_services import PushServices
from shared.domain.transcript import Transcript

# How many of a bucket's newest items holding known people `known_people` reads: about a year
# of a busy life's captures across the four buckets.
KNOWN_FROM_LATEST = 500


class CaptureRepository(Protocol):
    """The inbox and the four buckets. Every method may raise StorageUnavailable."""

    async def add(self, item: InboxItem) -> tuple[InboxItem, bool]:
        """Store a new inbox item; when its id exists already, return that one. (item, created)"""
        ...

    async def get(self, user_id: str, capture_id: str) -> InboxItem | None: ...

    async def save(self, item: InboxItem) -> InboxItem:
        """Replace the inbox item if unchanged since read; StaleItem if changed or deleted."""
        ...

    def newest(
        self,
        user_id: str,
        *,
        at_or_before: str | None,
        status: Status | None,
        page_items: int = 100,
    ) -> AsyncIterator[InboxItem]:
        """The user's inbox items, newest first (by createdAt), from `at_or_before` on, read
        `page_items` at a time."""
        ...

    async def on_thread(self, user_id: str, thread_id: str) -> list[InboxItem]:
        """The user's captures on an AG-UI thread, in no particular order."""
        ...

    async def remove(self, user_id: str, capture_id: str) -> None:
        """Delete the inbox item; idempotent."""
        ...

    async def put_filed(self, item: FiledItem) -> None: ...

    async def get_filed(self, user_id: str, bucket: Bucket, capture_id: str) -> FiledItem | None:
        """The capture's filed item in `bucket`, if it has one."""
        ...

    async def delete_filed(self, user_id: str, bucket: Bucket, capture_id: str) -> None:
        """Idempotent: deleting what is not there is fine."""
        ...

    async def known_people(self, user_id: str) -> frozenset[str]:
        """The names the user's filed items said with a person's cue (`peopleKnown`), which
        the people rules read a new capture with: of the KNOWN_FROM_LATEST newest items that
        hold any, in each bucket (what a capture's filing reads stays bounded however much
        the user has filed)."""
        ...


@dataclass(frozen=True)
class FiledFilter:
    """Which of a bucket's items to list (every one, by default)."""

    person_key: str | None = None  # filed.person_key of a name the item mentions
    done: bool | None = None
    due_before: date | None = None  # due strictly before; items without a date are left out


class Mention(NamedTuple):
    """What the people list needs of one filed item (a tuple: thousands are made per list)."""

    people: list[str]
    created_at: datetime
    done: bool


class FiledItems(Protocol):
    """Reading the four buckets back, and editing a filed item. Every method reads one user's
    partition only, and may raise StorageUnavailable."""

    async def get(self, user_id: str, bucket: Bucket, capture_id: str) -> FiledItem | None:
        """The filed item, with its ETag."""
        ...

    async def replace(self, item: FiledItem) -> FiledItem:
        """Replace the filed item if its ETag is still the stored one; StaleItem if it changed
        or is gone."""
        ...

    async def page(
        self, user_id: str, bucket: Bucket, where: FiledFilter, *, after: str | None, limit: int
    ) -> list[FiledItem]:
        """Up to `limit` items in the bucket's order (`list_order` ascending), after `after`."""
        ...

    async def newest_mentioning(
        self, user_id: str, person_key: str, limit: int, at_or_before: str | None = None
    ) -> list[FiledItem]:
        """The newest `limit` items of all four buckets that mention the person, newest first;
        with `at_or_before` (a stored createdAt), only those made then or earlier."""
        ...

    async def mentions(self, user_id: str) -> list[Mention]:
        """Every filed item that names someone, reduced to what the people list needs."""
        ...

    async def version(self, user_id: str) -> str | None:
        """A value that changes whenever any of the user's filed items is written or removed,
        read far more cheaply than the items; None when it cannot say so for sure now (a
        write within the store's clock's resolution)."""
        ...

    def every(self, user_id: str, bucket: Bucket) -> AsyncIterator[FiledItem]:
        """All the bucket's items in its order, read a page at a time."""
        ...


@dataclass(frozen=True)
class Found:
    """Captures matching a search; `ranked` when the store ordered them by relevance;
    `similarity`, by id, the cosine similarity of each one's vector to the query's (hybrid
    search: a capture without a vector has none)."""

    items: list[InboxItem]
    ranked: bool
    similarity: dict[str, float] = field(default_factory=dict)


class CaptureSearch(Protocol):
    """Finding the caller's captures (the Inbox, every capture not tombstoned), by words and
    by meaning. Every method reads one user's partition only. StorageUnavailable."""

    async def search(self, user_id: str, terms: list[str], limit: int) -> Found:
        """The user's captures (not tombstoned) whose text, title, clarification answers or
        transcript contain any of `terms` (lowercase words): the best `limit` when ranked, else
        the newest matches (at least `limit`) for the caller to score. StorageUnavailable."""
        ...

    async def hybrid(
        self, user_id: str, terms: list[str], q: str, vector: list[float], limit: int
    ) -> Found:
        """The best `limit` of the user's captures for the words `terms` (of the query `q`) and
        the meaning `vector` (the query's embedding), full-text and vector rankings fused by
        reciprocal rank (domain/retrieval.rrf, k 60), best first (`ranked`). A capture with
        no embedding yet can still come by its words."""
        ...

    async def nearest(
        self, user_id: str, vector: list[float], limit: int, *, excluding: str
    ) -> Found:
        """The user's filed captures (filed or needs_review, with an embedding) nearest to
        `vector` by cosine similarity (`similarity`), nearest first, up to `limit`, leaving out
        `excluding`."""
        ...


class Embedder(Protocol):
    """Text to vectors (unit length, `dimensions` long). `model` names the model, so that a
    stored vector's `embedded_from` says which one made it; below `min_similarity` (cosine)
    two texts are unrelated for this model: a search hit by meaning alone, or a related
    item, must reach it."""

    model: str
    dimensions: int
    min_similarity: float

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order. EmbedderUnavailable when the model cannot answer
        now."""
        ...

    # From this cosine two single words' vectors mean about the same for this model ("bike"
    # and "cycling"); None where this model's single words are not compared.
    word_line: float | None

    async def word_similarities(self, terms: list[str], words: list[str]) -> list[list[float]]:
        """Each term's cosine to each word (single words' vectors, in order: a row a term),
        the words' vectors remembered (a person's vocabulary repeats). EmbedderUnavailable."""
        ...


class CaptureQueues(Protocol):
    """At-least-once queues: a job may be delivered more than once. StorageUnavailable."""

    async def enqueue_classify(self, job: ClassifyJob, delay_s: float = 0) -> QueueReceipt | None:
        """Send a job, visible to the worker after `delay_s`; its receipt, for `cancel`."""
        ...

    async def enqueue_transcribe(self, job: TranscribeJob) -> None:
        """Send a job to transcribe a kept recording again (`captures-transcribe`)."""
        ...

    async def cancel(self, receipt: QueueReceipt) -> None:
        """Delete a message not yet delivered; one already gone is no error."""
        ...

    # How long an outcome stays out of its readers' sight (PUSH_DELAY_S): set where the queues
    # are built, from the Policy, so that no service reads it.
    outcome_delay_s: float

    async def publish_outcome(
        self, message: OutcomeMessage, delay_s: float | None = None
    ) -> QueueReceipt | None:
        """Publish an outcome, visible to its readers (the push worker) after `delay_s`
        (None: `outcome_delay_s`); its receipt, for `cancel`."""
        ...


class BackfillQueue(Protocol):
    async def enqueue_backfill(self, job: BackfillJob) -> None:
        """Send the embeddings backfill's next page (at least once). StorageUnavailable."""
        ...


# A message on its way to a queue: the task whose result is its receipt (None: not sent).
Sending = asyncio.Task[QueueReceipt | None]


class Outbox(Protocol):
    """What follows a write of a capture (shared/services/outbox.py): the delayed check sent
    before it, the outcome told after it, and what a stream delivered live. Best effort, beside
    the write: nothing here raises."""

    async def send_check(self, job: ClassifyJob, delay_s: float) -> Sending:
        """Send the delayed check that finishes the capture if this process does not; waits
        for it a moment at most."""
        ...

    def cancel_check(self, check: Sending) -> None:
        """Delete the check: another job stands in for it."""
        ...

    def publish(self, item: InboxItem) -> None:
        """Tell the settled (or failed) version `item` to the outcomes' readers (push)."""
        ...

    def hold(self, item: InboxItem, check: Sending) -> None:
        """A live run settled `item`: its stream delivers it, else it is published; `check`,
        the run's, stands until then."""
        ...

    def tell_unseen(self, item: InboxItem) -> None:
        """A check found `item` settled: publish it, unless it was seen or needs no telling."""
        ...

    def delivered(self, item: InboxItem) -> None:
        """A stream sent the client `item`'s outcome (or failure): no push is to say it again."""
        ...


class VoiceNoteStore(Protocol):
    """Voice notes' blobs: uploads (the upload container, which the blob trigger watches) and
    recordings kept apart from them once transcribed. `container` is where a blob is, as the
    inbox item's `audio_container` records it (None: the upload container). StorageUnavailable."""

    async def upload_url(self, name: str, expires_at: datetime) -> str:
        """A URL that allows one PUT creating exactly this upload (no read, no overwrite)."""
        ...

    async def upload(
        self, name: str, chunks: AsyncIterator[bytes], content_type: str, limit: int
    ) -> int:
        """Stream `chunks` into the upload; the byte count. VoiceNoteTooLarge past `limit`."""
        ...

    async def keep(self, name: str, retention: str) -> str:
        """Copy the upload `name` into the recordings' container (server-side, waited for),
        tagged `retention`; the container it is kept in. Idempotent: a copy already there is
        only tagged again. AudioGone when neither the upload nor a copy is there."""
        ...

    async def delete(self, name: str, container: str | None = None) -> None:
        """Delete the blob and any snapshots of it (the upload URL's create permission also
        allows taking snapshots); idempotent."""
        ...

    async def exists(self, name: str, container: str | None = None) -> bool: ...

    async def stat(self, name: str, container: str | None = None) -> StoredAudio | None:
        """The blob's size, type and creation time; None when there is none."""
        ...

    def read(
        self, name: str, offset: int, length: int, container: str | None = None
    ) -> AsyncIterator[bytes]:
        """`length` bytes of the blob from `offset`, a piece at a time as storage sends them
        (never the whole recording in memory); AudioGone if it is no longer there."""
        ...

    async def read_all(self, name: str, container: str | None = None) -> bytes | None:
        """The whole recording (to transcribe it again); None when it is gone."""
        ...

    async def tag_retention(self, name: str, retention: str, container: str | None = None) -> None:
        """Set the blob's `retention` tag, which storage's lifecycle policy deletes by; a blob
        that is gone is no error."""
        ...

    def every(self) -> AsyncIterator[StoredAudio]:
        """Every blob in both containers (kept recordings, then uploads), a page at a time,
        with its `retention` tag and its container."""
        ...


class Classifier(Protocol):
    async def classify(self, text: str, *, said_on: date | None = None) -> Classification:
        """Guess the bucket of `text` (a capture as `excerpt_to_classify` gives it: a long one's
        start and end), its relative dates counted from `said_on` (the day the words were
        said; today when not given); ClassifierUnavailable when the model cannot answer."""
        ...


class Transcriber(Protocol):
    async def transcribe(self, audio: bytes, filename: str, *, max_seconds: float) -> Transcript:
        """Transcribe one recording; `filename` is informational (the format is sniffed).
        AudioTooLong once more than `max_seconds` of it has been decoded (no container's
        word is taken for its length, and no more than that is decoded), AudioUndecodable
        for bad audio, TranscriberUnavailable when it cannot run now."""
        ...


@dataclass(frozen=True)
class Adapters:
    """Everything a service may use, passed in by the entrypoint (built by shared/bootstrap.py)."""

    repo: CaptureRepository
    classifier: Classifier
    queues: CaptureQueues
    voice: VoiceNoteStore
    transcriber: Transcriber
    filed: FiledItems
    search: CaptureSearch
    policy: Policy
    outbox: Outbox
    embedder: Embedder


# Web Push: a bundle of its own, used by the push routes and the push worker only.


class PushSubscriptions(Protocol):
    """The users' push subscriptions, partitioned by user. Every method may raise
    StorageUnavailable."""

    async def add(self, subscription: PushSubscription) -> tuple[PushSubscription, bool]:
        """Store a new subscription; when the user has its id already, return that one.
        (subscription, created)"""
        ...

    async def get(self, user_id: str, subscription_id: str) -> PushSubscription | None: ...

    async def for_user(self, user_id: str) -> list[PushSubscription]:
        """The user's subscriptions, in no particular order."""
        ...

    async def save(self, subscription: PushSubscription) -> PushSubscription:
        """Replace the subscription if unchanged since read; StaleItem if changed or removed."""
        ...

    async def remove(self, user_id: str, subscription_id: str) -> None:
        """Idempotent: removing what is not there is fine."""
        ...

    async def slots(self, user_id: str) -> DeviceSlots | None:
        """The user's DeviceSlots, if they have any yet."""
        ...

    async def save_slots(self, slots: DeviceSlots) -> DeviceSlots:
        """Create (no etag) or replace (etag) the user's DeviceSlots; StaleItem if someone
        created or changed them first."""
        ...


class PushSender(Protocol):
    """Web Push (RFC 8030) with an encrypted payload (RFC 8291) and VAPID (RFC 8292). Both
    methods raise NotConfigured when the deployment has no usable VAPID key pair."""

    async def application_server_key(self) -> str:
        """The VAPID public key, as browsers take it (base64url uncompressed point)."""
        ...

    async def send(self, subscription: PushSubscription, payload: bytes, topic: str) -> Delivery:
        """Push `payload` to the device. PushUnavailable when the push service cannot take it
        now (429, 5xx, no answer): retry later."""
        ...


@dataclass(frozen=True)
class PushAdapters:
    """What the push routes and the push worker use besides `Adapters` (shared/bootstrap.py)."""

    subscriptions: PushSubscriptions
    sender: PushSender
    push_services: PushServices


# The tap on the shoulder: a bundle of its own, for the digest routes, timer and worker.


class PreferencesStore(Protocol):
    """The users' preferences (container `Preferences`, one document per user). Every method
    may raise StorageUnavailable."""

    async def get(self, user_id: str) -> Preferences | None: ...

    async def save(self, preferences: Preferences) -> Preferences:
        """Create (no etag) or replace (etag) the user's preferences; StaleItem if someone
        created or changed them first."""
        ...

    async def replace(self, preferences: Preferences) -> Preferences:
        """Store the user's preferences whatever is stored, created if there are none: a PUT
        sets every one of them, so of writers at once the last one stored wins, and each
        answers with what it stored."""
        ...

    def due(self, now: datetime) -> AsyncIterator[Preferences]:
        """Every user's preferences with the digest on and `next_digest_at` at or before `now`,
        across partitions, read a page at a time."""
        ...


class DigestLog(Protocol):
    """The digests sent (container `Digests`), by user and local day. StorageUnavailable."""

    async def get(self, user_id: str, record_id: str) -> DigestRecord | None: ...

    async def add(self, record: DigestRecord) -> tuple[DigestRecord, bool]:
        """Create the record; when its id exists already, return that one. (record, created)"""
        ...

    async def save(self, record: DigestRecord) -> DigestRecord:
        """Replace the record if unchanged since read; StaleItem if changed."""
        ...


class DigestQueue(Protocol):
    async def enqueue_digest(self, job: DigestJob) -> None:
        """Send one user's digest job (at least once). StorageUnavailable."""
        ...


class ReviewSummarizer(Protocol):
    async def summarize(self, review: Review) -> str | None:
        """Two sentences on the week, by the model; None when it cannot answer now."""
        ...


@dataclass(frozen=True)
class DigestAdapters:
    """What the digest routes, its timer and its worker use besides `Adapters` and
    `PushAdapters` (shared/bootstrap.py)."""

    preferences: PreferencesStore
    digests: DigestLog
    queue: DigestQueue
    summarizer: ReviewSummarizer | None  # None: the rules' summary (no model configured)


class AskModel(Protocol):
    """The ask agent's model: one turn of a tool-calling conversation (the adapter holds the
    system prompt and the answer's format). ModelUnavailable when it cannot answer now or
    answers what cannot be read."""

    async def turn(
        self, conversation: Sequence[ChatTurn], tools: Sequence[ToolSpec], *, must_answer: bool
    ) -> ModelTurn:
        """The model's next turn: tool calls, or (always when `must_answer`) the answer."""
        ...


class AskThreads(Protocol):
    """The plain-JSON door's ask threads, partitioned by user. StorageUnavailable."""

    async def get(self, user_id: str, thread_id: str) -> AskThread | None: ...

    async def save(self, thread: AskThread) -> AskThread:
        """Create the thread (no ETag) or replace it under its ETag; StaleItem if someone
        created or changed it first."""
        ...
