"""In-memory fakes of the ports of shared/domain/ports.py, for testing the services without
emulators, processes or a network: the capture repository, the queues, the voice-notes store,
scripted models, the push subscriptions and a push sender; `Fakes.adapters` is the `Adapters`
bundle the services take, `Fakes.push` the `PushAdapters`.

They keep the semantics the services rely on, as the real adapters have them:
`FakeCaptureRepository` stores JSON documents as Cosmos does (every read is a fresh copy, every
write gets a new ETag, saves are ETag-guarded, deletes are idempotent), and
tests/integration/test_repository_contract.py runs one suite over it and over
`CosmosCaptureRepository` to keep it honest. Each call gives other tasks a turn, as a call over
the network would, so races can happen between two coroutines just as they do against the real
stores.

Every fake records its calls (`calls`) and takes faults for its next call: `fail_next(method,
error)` raises `error` there, and `before_next(method, hook)` runs `hook` (sync or async) just
before it, e.g. to let a concurrent writer or a DELETE land between a read and a save.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import itertools
import json
import math
import re
import uuid
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from shared.adapters.search import FILED_STATUSES, LOCAL_CANDIDATES
from shared.domain.audio import StoredAudio
from shared.domain.capture import InboxItem, Status
from shared.domain.chat import AskThread, ChatTurn, ModelTurn, ToolSpec
from shared.domain.classification import Bucket, Classification
from shared.domain.digest import DigestJob, DigestRecord, Review
from shared.domain.documents import utc_text, utcnow
from shared.domain.errors import AudioGone, NotConfigured, StaleItem, VoiceNoteTooLarge
from shared.domain.filed import FILED_MODELS, FiledItem, filed_model
from shared.domain.messages import (
    BackfillJob,
    ClassifyJob,
    OutcomeMessage,
    QueueReceipt,
    TranscribeJob,
)
from shared.domain.ports import (
    KNOWN_FROM_LATEST,
    Adapters,
    DigestAdapters,
    FiledFilter,
    Found,
    Mention,
    PushAdapters,
)
from shared.domain.preferences import Preferences
from shared.domain.push import Delivery, DeviceSlots, PushSubscription
from shared.domain.retrieval import rrf
from shared.domain.transcript import Transcript
from shared.services import background
from shared.services.outbox import QueueOutbox
from shared.services.recall import rank_by_words
from shared.settings import RECORDINGS_CONTAINER, get_settings

Hook = Callable[[], Awaitable[Any] | Any]


class Faults:
    """Call recording and fault injection, shared by the fakes."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._failures: dict[str, deque[BaseException]] = defaultdict(deque)
        self._hooks: dict[str, deque[Hook]] = defaultdict(deque)

    def fail_next(self, method: str, error: BaseException, *, times: int = 1) -> None:
        """The next `times` calls of `method` raise `error` (after any hook for them ran)."""
        self._known(method)
        self._failures[method].extend([error] * times)

    def before_next(self, method: str, hook: Hook) -> None:
        """Run `hook` just before the next call of `method` does anything. The hook may call
        the fake itself (a concurrent writer): its own calls are not the ones it was armed for."""
        self._known(method)
        self._hooks[method].append(hook)

    @property
    def armed(self) -> list[str]:
        """Methods with a fault or hook still waiting for their call (a test can check that
        what it arranged did happen)."""
        plans = [*self._failures.items(), *self._hooks.items()]
        return sorted({method for method, queue in plans if queue})

    def _known(self, method: str) -> None:
        # A port's methods are the async ones; the helpers for tests take no faults.
        attr = None if method.startswith("_") else getattr(self, method, None)
        if not (inspect.iscoroutinefunction(attr) or inspect.isasyncgenfunction(attr)):
            raise ValueError(f"{type(self).__name__} has no port method {method!r}")

    async def _step(self, method: str) -> None:
        self.calls.append(method)
        # Taken before the hook runs, so that the hook's own calls do not use them up.
        hook = self._hooks[method].popleft() if self._hooks[method] else None
        failure = self._failures[method].popleft() if self._failures[method] else None
        # A real adapter call leaves the loop to other tasks while it waits for an answer.
        await asyncio.sleep(0)
        if hook is not None:
            result = hook()
            if inspect.isawaitable(result):
                await result
        if failure is not None:
            raise failure


# -- the capture repository --------------------------------------------------------------------


class FakeCaptureRepository(Faults):
    """`CaptureRepository` on dicts of JSON text, one per container, keyed as Cosmos keys them
    (partition key userId, then id)."""

    def __init__(self) -> None:
        super().__init__()
        self._inbox: dict[tuple[str, str], str] = {}
        self._filed: dict[tuple[Bucket, str, str], str] = {}
        self._etags = itertools.count(1)

    # The protocol

    async def add(self, item: InboxItem) -> tuple[InboxItem, bool]:
        await self._step("add")
        key = (item.user_id, item.id)
        if key in self._inbox:
            return self._read(key), False
        self._write(key, item)
        return self._read(key), True

    async def get(self, user_id: str, capture_id: str) -> InboxItem | None:
        await self._step("get")
        key = (user_id, capture_id)
        return self._read(key) if key in self._inbox else None

    async def save(self, item: InboxItem) -> InboxItem:
        await self._step("save")
        key = (item.user_id, item.id)
        stored = self._inbox.get(key)
        # As Cosmos's replace: gone is stale; with an ETag, only over that very version.
        if stored is None or (item.etag is not None and json.loads(stored)["_etag"] != item.etag):
            raise StaleItem(item.id)
        self._write(key, item)
        return self._read(key)

    async def newest(
        self,
        user_id: str,
        *,
        at_or_before: str | None,
        status: Status | None,
        page_items: int = 100,
    ) -> AsyncIterator[InboxItem]:
        await self._step("newest")
        docs = [json.loads(text) for (user, _), text in self._inbox.items() if user == user_id]
        if at_or_before is not None:
            docs = [d for d in docs if d["createdAt"] <= at_or_before]  # strings, as stored
        if status is not None:
            docs = [d for d in docs if d["status"] == status.value]
        # Newest first; items of the same instant in the order they were added, every time.
        for doc in sorted(docs, key=lambda d: d["createdAt"], reverse=True):
            yield InboxItem.model_validate(doc)

    async def on_thread(self, user_id: str, thread_id: str) -> list[InboxItem]:
        await self._step("on_thread")
        docs = [json.loads(text) for (user, _), text in self._inbox.items() if user == user_id]
        return [InboxItem.model_validate(d) for d in docs if d["threadId"] == thread_id]

    async def remove(self, user_id: str, capture_id: str) -> None:
        await self._step("remove")
        self._inbox.pop((user_id, capture_id), None)

    async def put_filed(self, item: FiledItem) -> None:
        await self._step("put_filed")
        self._write_filed(item)

    async def get_filed(self, user_id: str, bucket: Bucket, capture_id: str) -> FiledItem | None:
        await self._step("get_filed")
        text = self._filed.get((bucket, user_id, capture_id))
        return FILED_MODELS[bucket].model_validate(json.loads(text)) if text else None

    async def delete_filed(self, user_id: str, bucket: Bucket, capture_id: str) -> None:
        await self._step("delete_filed")
        self._filed.pop((bucket, user_id, capture_id), None)

    async def known_people(self, user_id: str) -> frozenset[str]:
        await self._step("known_people")
        per_bucket: dict[Bucket, list[dict]] = {}
        for (bucket, user, _), text in self._filed.items():
            doc = json.loads(text)
            if user == user_id and doc.get("peopleKnown"):
                per_bucket.setdefault(bucket, []).append(doc)
        newest = (
            sorted(docs, key=lambda d: d["createdAt"], reverse=True)[:KNOWN_FROM_LATEST]
            for docs in per_bucket.values()
        )
        return frozenset(name for docs in newest for doc in docs for name in doc["peopleKnown"])

    # For tests: the state to start from, and what is stored, without counting as a call or
    # meeting a fault

    def seed(self, item: InboxItem) -> InboxItem:
        """Store `item` as it is (over whatever has its id); the stored item, with its ETag."""
        key = (item.user_id, item.id)
        self._write(key, item)
        return self._read(key)

    def stored(self, user_id: str, capture_id: str) -> InboxItem | None:
        key = (user_id, capture_id)
        return self._read(key) if key in self._inbox else None

    def inbox(self, user_id: str | None = None) -> list[InboxItem]:
        return [self._read(key) for key in self._inbox if user_id in (None, key[0])]

    def filed(self, user_id: str, capture_id: str) -> dict[Bucket, FiledItem]:
        """The capture's filed items, by bucket (in the buckets' order)."""
        found: dict[Bucket, FiledItem] = {}
        for bucket in Bucket:
            text = self._filed.get((bucket, user_id, capture_id))
            if text is not None:
                found[bucket] = FILED_MODELS[bucket].model_validate(json.loads(text))
        return found

    def filed_buckets(self, user_id: str, capture_id: str) -> list[Bucket]:
        return list(self.filed(user_id, capture_id))

    def filed_count(self) -> int:
        return len(self._filed)

    def _write(self, key: tuple[str, str], item: InboxItem) -> None:
        # What Cosmos keeps: the JSON form (no etag of the caller's), with its own new ETag.
        self._inbox[key] = json.dumps({**item.stored_json(), "_etag": self._new_etag()})

    def _write_filed(self, item: FiledItem) -> None:
        key = (item.bucket, item.user_id, item.id)
        self._filed[key] = json.dumps({**item.to_json(), "_etag": self._new_etag()})

    def _new_etag(self) -> str:
        return f'"{next(self._etags):08x}-0000-0000-0000-fake00000000"'

    def filed_docs(self, user_id: str, bucket: Bucket) -> list[dict]:
        """The user's stored documents in `bucket`, as JSON (for FakeFiledItems)."""
        return [
            json.loads(text)
            for (b, user, _), text in self._filed.items()
            if (b, user) == (bucket, user_id)
        ]

    def _read(self, key: tuple[str, str]) -> InboxItem:
        return InboxItem.model_validate(json.loads(self._inbox[key]))


class FakeFiledItems(Faults):
    """`FiledItems` over the filed documents of a FakeCaptureRepository, queried as the Cosmos
    adapter's queries do (tests/integration/test_filed_items_contract.py runs both)."""

    def __init__(self, repo: FakeCaptureRepository) -> None:
        super().__init__()
        self._repo = repo

    async def get(self, user_id: str, bucket: Bucket, capture_id: str) -> FiledItem | None:
        await self._step("get")
        return self._repo.filed(user_id, capture_id).get(bucket)

    async def replace(self, item: FiledItem) -> FiledItem:
        await self._step("replace")
        stored = self._repo.filed(item.user_id, item.id).get(item.bucket)
        if stored is None or stored.etag != item.etag:
            raise StaleItem(item.id)
        self._repo._write_filed(item)
        return self._repo.filed(item.user_id, item.id)[item.bucket]

    async def page(
        self, user_id: str, bucket: Bucket, where: FiledFilter, *, after: str | None, limit: int
    ) -> list[FiledItem]:
        await self._step("page")
        docs = [d for d in self._repo.filed_docs(user_id, bucket) if _matches(d, where)]
        if after is not None:
            docs = [d for d in docs if d["listOrder"] > after]
        docs.sort(key=lambda d: d["listOrder"])
        return [filed_model(d) for d in docs[:limit]]

    async def newest_mentioning(
        self, user_id: str, person_key: str, limit: int, at_or_before: str | None = None
    ) -> list[FiledItem]:
        await self._step("naming")
        docs = [
            d
            for bucket in Bucket
            for d in self._repo.filed_docs(user_id, bucket)
            if person_key in d["peopleKeys"]
            and (at_or_before is None or d["createdAt"] <= at_or_before)
        ]
        docs.sort(key=lambda d: d["createdAt"], reverse=True)
        return [filed_model(d) for d in docs[:limit]]

    async def version(self, user_id: str) -> str | None:
        await self._step("version")
        docs = [
            json.dumps(d, sort_keys=True) for b in Bucket for d in self._repo.filed_docs(user_id, b)
        ]
        return hashlib.sha256("\n".join(sorted(docs)).encode()).hexdigest()

    async def mentions(self, user_id: str) -> list[Mention]:
        await self._step("mentions")
        return [
            Mention(
                people=d["people"],
                created_at=datetime.fromisoformat(d["createdAt"]),
                done=d["done"],
            )
            for bucket in Bucket
            for d in self._repo.filed_docs(user_id, bucket)
            if d["people"]
        ]

    async def every(self, user_id: str, bucket: Bucket) -> AsyncIterator[FiledItem]:
        await self._step("every")
        docs = sorted(self._repo.filed_docs(user_id, bucket), key=lambda d: d["listOrder"])
        for doc in docs:
            yield filed_model(doc)


def _matches(doc: dict, where: FiledFilter) -> bool:
    if where.person_key is not None and where.person_key not in doc["peopleKeys"]:
        return False
    if where.done is not None and doc["done"] != where.done:
        return False
    due = doc["dueDate"]
    return where.due_before is None or (due is not None and due < where.due_before.isoformat())


class FakeCaptureSearch(Faults):
    """`CaptureSearch` as the local path runs it: lowercased substrings of text, title and
    answers, newest matches first, unranked."""

    def __init__(self, repo: FakeCaptureRepository) -> None:
        super().__init__()
        self._repo = repo

    async def search(self, user_id: str, terms: list[str], limit: int) -> Found:
        await self._step("search")
        found = []
        for item in self._repo.inbox(user_id):
            fields = [item.text or "", item.title or "", *(c.text for c in item.clarifications)]
            lowered = [f.lower() for f in fields]
            if not item.is_deleted and any(t in f for t in terms for f in lowered):
                found.append(item)
        found.sort(key=lambda i: utc_text(i.created_at), reverse=True)
        return Found(items=found[: max(limit, LOCAL_CANDIDATES)], ranked=False)

    async def hybrid(
        self, user_id: str, terms: list[str], q: str, vector: list[float], limit: int
    ) -> Found:
        """As the local stand-in: the word matches ranked by the service's score and the
        vectors by cosine, fused by the domain's RRF."""
        await self._step("hybrid")
        by_words = rank_by_words((await self.search(user_id, terms, limit)).items, terms, q)
        held = [i for i in self._repo.inbox(user_id) if not i.is_deleted and i.embedding]
        by_meaning = sorted(held, key=lambda i: _dot(vector, i.embedding or []), reverse=True)
        fused = rrf([[i.id for i in by_words], [i.id for i in by_meaning[:LOCAL_CANDIDATES]]])
        items = {i.id: i for i in [*by_words, *held]}
        found = [items[i] for i, _ in fused][:limit]
        similarity = {i.id: _dot(vector, i.embedding) for i in found if i.embedding}
        return Found(items=found, ranked=True, similarity=similarity)

    async def nearest(
        self, user_id: str, vector: list[float], limit: int, *, excluding: str
    ) -> Found:
        await self._step("nearest")
        filed = [
            i
            for i in self._repo.inbox(user_id)
            if i.embedding and i.id != excluding and i.status.value in FILED_STATUSES
        ]
        filed.sort(key=lambda i: _dot(vector, i.embedding or []), reverse=True)
        near = filed[:limit]
        similarity = {i.id: _dot(vector, i.embedding or []) for i in near}
        return Found(items=near, ranked=True, similarity=similarity)


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=False)) if len(a) == len(b) else -1.0


class WordsEmbedder(Faults):
    """An `Embedder` without a model: each word (casefolded) hashed into one of 64 dimensions,
    the counts made unit length, so texts sharing words are near and others are not (no
    paraphrase: that is the real model's, tested in integration and e2e). `texts` records
    every text it embedded."""

    model = "words-64"
    dimensions = 64
    min_similarity = 0.3

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.word_vectors: dict[str, list[float]] = {}
        self.words_compared: list[tuple[list[str], list[str]]] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        await self._step("embed")
        self.texts.extend(texts)
        return [_words_vector(t, self.dimensions) for t in texts]

    # Single words are not compared unless a test says from what cosine (`word_line`) and
    # gives the words' vectors (`word_vectors`): two words not both given are 1.0 alike where
    # they are the same word, else 0.0.
    word_line: float | None = None

    async def word_similarities(self, terms: list[str], words: list[str]) -> list[list[float]]:
        await self._step("word_similarities")
        self.words_compared.append((list(terms), list(words)))

        def cosine(a: str, b: str) -> float:
            va, vb = self.word_vectors.get(a), self.word_vectors.get(b)
            if va is None or vb is None:
                return float(a == b)
            norm = math.sqrt(sum(x * x for x in va) * sum(y * y for y in vb)) or 1.0
            return sum(x * y for x, y in zip(va, vb, strict=True)) / norm

        return [[cosine(t, w) for w in words] for t in terms]


def _words_vector(text: str, dimensions: int) -> list[float]:
    counts = [0.0] * dimensions
    for word in re.findall(r"\w+", text.casefold()):
        counts[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dimensions] += 1.0
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    return [round(c / norm, 6) for c in counts]


# -- the queues --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SentJob:
    job: ClassifyJob
    delay_s: float


class FakeQueues(Faults):
    """`CaptureQueues` as lists. Messages go through their JSON form as on the real queues, so
    whoever takes one gets its own copy."""

    def __init__(self, outcome_delay_s: float = 0.5) -> None:
        super().__init__()
        self.outcome_delay_s = outcome_delay_s
        self.sent: list[SentJob] = []  # every classify job sent, in order
        self.pending: deque[SentJob] = deque()  # sent and not yet delivered
        self.delivered: list[ClassifyJob] = []
        self.outcomes: list[OutcomeMessage] = []
        self.cancelled: list[ClassifyJob] = []
        self.cancelled_outcomes: list[OutcomeMessage] = []  # taken out of `outcomes`
        self.transcribe_jobs: list[TranscribeJob] = []
        self.backfill: list[BackfillJob] = []  # the embeddings backfill's pages sent

    async def enqueue_backfill(self, job: BackfillJob) -> None:
        await self._step("enqueue_backfill")
        self.backfill.append(BackfillJob.model_validate_json(job.model_dump_json(by_alias=True)))

    async def enqueue_classify(self, job: ClassifyJob, delay_s: float = 0) -> QueueReceipt:
        await self._step("enqueue_classify")
        copy = ClassifyJob.model_validate_json(job.model_dump_json(by_alias=True))
        sent = SentJob(copy, delay_s)
        self.sent.append(sent)
        self.pending.append(sent)
        return QueueReceipt(queue="captures-classify", message_id=str(id(sent)), pop_receipt="p")

    async def enqueue_transcribe(self, job: TranscribeJob) -> None:
        await self._step("enqueue_transcribe")
        self.transcribe_jobs.append(
            TranscribeJob.model_validate_json(job.model_dump_json(by_alias=True))
        )

    async def cancel(self, receipt: QueueReceipt) -> None:
        """Take the job out of `pending` (a delivered one is gone already); `cancelled` lists
        the jobs taken out."""
        await self._step("cancel")
        for sent in list(self.pending):
            if str(id(sent)) == receipt.message_id:
                self.pending.remove(sent)
                self.cancelled.append(sent.job)
        for outcome in list(self.outcomes):
            if str(id(outcome)) == receipt.message_id:
                self.outcomes.remove(outcome)
                self.cancelled_outcomes.append(outcome)

    async def publish_outcome(
        self, message: OutcomeMessage, delay_s: float | None = None
    ) -> QueueReceipt:
        await self._step("publish_outcome")
        copy = OutcomeMessage.model_validate_json(message.model_dump_json(by_alias=True))
        self.outcomes.append(copy)
        return QueueReceipt(queue="captures-outcomes", message_id=str(id(copy)), pop_receipt="p")

    def jobs_for(self, capture_id: str) -> list[SentJob]:
        return [s for s in self.sent if s.job.capture_id == capture_id]

    async def deliver(
        self,
        handler: Callable[[ClassifyJob], Awaitable[Any]],
        *,
        twice: bool = False,
        concurrently: bool = False,
        max_delay_s: float | None = None,
    ) -> list[Any]:
        """Hand the jobs pending now to `handler` (the worker), oldest first, as the queue
        would: at least once. `twice` delivers each job a second time (one after the other, or
        both at once with `concurrently`); `max_delay_s` leaves jobs sent with a longer delay
        pending (not due yet). Jobs the handler sends stay pending for the next call. A job
        whose handler raises goes back to the front, as an unacknowledged message becomes
        visible again, and the error propagates. The handler's results, in order."""
        due = [s for s in self.pending if max_delay_s is None or s.delay_s <= max_delay_s]
        results: list[Any] = []
        for sent in due:
            self.pending.remove(sent)
            copies = [
                ClassifyJob.model_validate_json(sent.job.model_dump_json(by_alias=True))
                for _ in range(2 if twice else 1)
            ]
            try:
                if concurrently:
                    self.delivered.extend(copies)
                    results.extend(await asyncio.gather(*(handler(c) for c in copies)))
                else:
                    for copy in copies:
                        self.delivered.append(copy)
                        results.append(await handler(copy))
            except BaseException:
                self.pending.appendleft(sent)
                raise
        return results


# -- the voice notes ---------------------------------------------------------------------------


class FakeVoiceNotes(Faults):
    """`VoiceNoteStore` as a dict of blob name to bytes: an upload by its name, a kept
    recording as `voice-recordings/{name}`."""

    BASE_URL = "http://127.0.0.1:10000/devstoreaccount1/voice-notes"
    KEPT = RECORDINGS_CONTAINER

    def __init__(self) -> None:
        super().__init__()
        self.blobs: dict[str, bytes] = {}
        self.content_types: dict[str, str] = {}
        self.upload_urls: dict[str, datetime] = {}  # name: when its URL expires
        self.created: dict[str, datetime] = {}
        self.tags: dict[str, str] = {}  # name: its `retention` tag

    @staticmethod
    def key(name: str, container: str | None = None) -> str:
        if container not in (None, RECORDINGS_CONTAINER):
            raise ValueError(f"not a voice notes' container: {container!r}")
        return f"{container}/{name}" if container else name

    async def upload_url(self, name: str, expires_at: datetime) -> str:
        await self._step("upload_url")
        self.upload_urls[name] = expires_at
        expiry = quote(utc_text(expires_at))
        return f"{self.BASE_URL}/{quote(name)}?se={expiry}&sp=c&sig=fake"

    async def upload(
        self, name: str, chunks: AsyncIterator[bytes], content_type: str, limit: int
    ) -> int:
        await self._step("upload")
        data = bytearray()
        async for chunk in chunks:
            data += chunk
            if len(data) > limit:
                raise VoiceNoteTooLarge(f"more than {limit} bytes")  # nothing committed
        if name not in self.blobs:  # create only: a retried upload finds the first one there
            self.put(name, bytes(data), content_type)
        return len(data)

    async def keep(self, name: str, retention: str) -> str:
        await self._step("keep")
        kept = self.key(name, self.KEPT)
        if kept not in self.blobs:
            if name not in self.blobs:
                raise AudioGone(name)
            self.put(kept, self.blobs[name], self.content_types[name])
        self.tags[kept] = retention
        return self.KEPT

    async def delete(self, name: str, container: str | None = None) -> None:
        await self._step("delete")
        key = self.key(name, container)
        self.blobs.pop(key, None)
        self.content_types.pop(key, None)
        self.tags.pop(key, None)

    async def exists(self, name: str, container: str | None = None) -> bool:
        await self._step("exists")
        return self.key(name, container) in self.blobs

    async def stat(self, name: str, container: str | None = None) -> StoredAudio | None:
        await self._step("stat")
        key = self.key(name, container)
        return self._stored(key) if key in self.blobs else None

    async def read(
        self, name: str, offset: int, length: int, container: str | None = None
    ) -> AsyncIterator[bytes]:
        await self._step("read")
        key = self.key(name, container)
        if key not in self.blobs:
            raise AudioGone(name)
        data = self.blobs[key][offset : offset + length]
        for start in range(0, len(data), 4096):  # in pieces, as storage sends them
            yield data[start : start + 4096]

    async def read_all(self, name: str, container: str | None = None) -> bytes | None:
        await self._step("read_all")
        return self.blobs.get(self.key(name, container))

    async def tag_retention(self, name: str, retention: str, container: str | None = None) -> None:
        await self._step("tag_retention")
        key = self.key(name, container)
        if key in self.blobs:
            self.tags[key] = retention

    async def every(self) -> AsyncIterator[StoredAudio]:
        await self._step("every")
        kept = sorted(k for k in self.blobs if k.startswith(f"{self.KEPT}/"))
        for key in kept + sorted(k for k in self.blobs if k not in kept):
            yield self._stored(key)

    def _stored(self, key: str) -> StoredAudio:
        kept = key.startswith(f"{self.KEPT}/")
        return StoredAudio(
            name=key.removeprefix(f"{self.KEPT}/"),
            size=len(self.blobs[key]),
            content_type=self.content_types[key],
            created_at=self.created[key],
            retention=self.tags.get(key),
            container=self.KEPT if kept else None,
        )

    def put(
        self,
        name: str,
        data: bytes,
        content_type: str = "audio/mp4",
        created_at: datetime | None = None,
    ) -> None:
        """A blob as the phone's PUT to its upload URL leaves it (not a call of the app's);
        `voice-recordings/{name}` for a kept recording."""
        self.blobs[name] = data
        self.content_types[name] = content_type
        self.created[name] = created_at or utcnow()


# -- the models --------------------------------------------------------------------------------

Answer = Any  # a reply, an exception to raise, or a callable (sync or async) making the reply


class _Scripted:
    def __init__(self, answers: tuple[Answer, ...], default: Answer | None) -> None:
        self.script: deque[Answer] = deque(answers)
        self.default = default

    def then(self, *answers: Answer) -> None:
        """More answers, after those still in the script."""
        self.script.extend(answers)

    async def _answer(self, *args: Any) -> Any:
        await asyncio.sleep(0)  # as a model call would, let other tasks run meanwhile
        answer = self.script.popleft() if self.script else self.default
        if answer is None:
            raise AssertionError(f"{type(self).__name__}: no answer scripted for this call")
        if isinstance(answer, BaseException) or (
            isinstance(answer, type) and issubclass(answer, BaseException)
        ):
            raise answer
        if callable(answer):
            answer = answer(*args)
            if inspect.isawaitable(answer):
                answer = await answer
        return answer


class ScriptedClassifier(_Scripted):
    """A `Classifier` answering from a script, in order, then with `default` (if any).
    `texts` records every text it was asked about."""

    def __init__(self, *answers: Answer, default: Classification | None = None) -> None:
        super().__init__(answers, default)
        self.texts: list[str] = []
        self.said_on: list[date | None] = []

    async def classify(self, text: str, *, said_on: date | None = None) -> Classification:
        self.texts.append(text)
        self.said_on.append(said_on)
        return await self._answer(text)


class ScriptedTranscriber(_Scripted):
    """A `Transcriber` answering from a script (`Transcript`s or exceptions such as
    AudioUndecodable). `heard` records (filename, audio) of every call, `limits` the
    `max_seconds` each was held to."""

    def __init__(self, *answers: Answer, default: Transcript | None = None) -> None:
        super().__init__(answers, default)
        self.heard: list[tuple[str, bytes]] = []
        self.limits: list[float] = []

    async def transcribe(self, audio: bytes, filename: str, *, max_seconds: float) -> Transcript:
        self.heard.append((filename, audio))
        self.limits.append(max_seconds)
        return await self._answer(audio, filename)


class ScriptedAskModel(_Scripted):
    """An `AskModel` answering from a script (`ModelTurn`s, or exceptions such as
    ModelUnavailable). `heard` records each turn's conversation, `musts` its `must_answer`."""

    def __init__(self, *answers: Answer, default: ModelTurn | None = None) -> None:
        super().__init__(answers, default)
        self.heard: list[list[ChatTurn]] = []
        self.offered: list[list[str]] = []
        self.musts: list[bool] = []

    async def turn(
        self, conversation: Sequence[ChatTurn], tools: Sequence[ToolSpec], *, must_answer: bool
    ) -> ModelTurn:
        self.heard.append(list(conversation))
        self.offered.append([t.name for t in tools])
        self.musts.append(must_answer)
        return await self._answer(list(conversation))


# -- Web Push ----------------------------------------------------------------------------------


class FakePushSubscriptions(Faults):
    """`PushSubscriptions` on a dict of JSON text keyed as Cosmos keys it (userId, then id), with
    the repository's semantics: fresh copies, a new ETag per write, ETag-guarded saves."""

    def __init__(self) -> None:
        super().__init__()
        self._docs: dict[tuple[str, str], str] = {}
        self._slots: dict[str, str] = {}
        self._etags = itertools.count(1)

    async def add(self, subscription: PushSubscription) -> tuple[PushSubscription, bool]:
        await self._step("add")
        key = (subscription.user_id, subscription.id)
        if key in self._docs:
            return self._read(key), False
        self._write(key, subscription)
        return self._read(key), True

    async def get(self, user_id: str, subscription_id: str) -> PushSubscription | None:
        await self._step("get")
        key = (user_id, subscription_id)
        return self._read(key) if key in self._docs else None

    async def for_user(self, user_id: str) -> list[PushSubscription]:
        await self._step("for_user")
        return [self._read(key) for key in self._docs if key[0] == user_id]

    async def save(self, subscription: PushSubscription) -> PushSubscription:
        await self._step("save")
        key = (subscription.user_id, subscription.id)
        stored = self._docs.get(key)
        if stored is None or (
            subscription.etag is not None and json.loads(stored)["_etag"] != subscription.etag
        ):
            raise StaleItem(subscription.id)
        self._write(key, subscription)
        return self._read(key)

    async def remove(self, user_id: str, subscription_id: str) -> None:
        await self._step("remove")
        self._docs.pop((user_id, subscription_id), None)

    async def slots(self, user_id: str) -> DeviceSlots | None:
        await self._step("slots")
        text = self._slots.get(user_id)
        return DeviceSlots.model_validate(json.loads(text)) if text else None

    async def save_slots(self, slots: DeviceSlots) -> DeviceSlots:
        await self._step("save_slots")
        stored = self._slots.get(slots.user_id)
        current = json.loads(stored)["_etag"] if stored else None
        if current != slots.etag:
            raise StaleItem(slots.id)
        etag = f'"{next(self._etags):08x}-slots"'
        self._slots[slots.user_id] = json.dumps({**slots.to_json(), "_etag": etag})
        return DeviceSlots.model_validate(json.loads(self._slots[slots.user_id]))

    # For tests, without counting as a call

    def seed(self, subscription: PushSubscription) -> PushSubscription:
        key = (subscription.user_id, subscription.id)
        self._write(key, subscription)
        return self._read(key)

    def stored(self, user_id: str, subscription_id: str) -> PushSubscription | None:
        key = (user_id, subscription_id)
        return self._read(key) if key in self._docs else None

    def all(self) -> list[PushSubscription]:
        return [self._read(key) for key in self._docs]

    def _write(self, key: tuple[str, str], subscription: PushSubscription) -> None:
        etag = f'"{next(self._etags):08x}-push"'
        self._docs[key] = json.dumps({**subscription.to_json(), "_etag": etag})

    def _read(self, key: tuple[str, str]) -> PushSubscription:
        return PushSubscription.model_validate(json.loads(self._docs[key]))


@dataclass(frozen=True)
class Push:
    """One notification as the fake push service took it."""

    subscription_id: str
    endpoint: str
    payload: dict[str, Any]
    topic: str


class FakePushSender(Faults):
    """`PushSender` that delivers to a list. `answer(endpoint, delivery_or_error)` decides what
    the push service says to an endpoint from then on (DELIVERED unless told); a `Delivery` is
    returned, an exception raised. `configured=False` is a deployment without VAPID keys."""

    PUBLIC_KEY = "BFakeVapidPublicKey"

    def __init__(self) -> None:
        super().__init__()
        self.pushes: list[Push] = []  # every notification delivered, in order
        self.attempts: list[str] = []  # the endpoint of every send, whatever came of it
        self.configured = True
        self._answers: dict[str, Delivery | BaseException] = {}

    def answer(self, endpoint: str, outcome: Delivery | BaseException) -> None:
        self._answers[endpoint] = outcome

    async def application_server_key(self) -> str:
        await self._step("application_server_key")
        if not self.configured:
            raise NotConfigured("Push notifications are not set up.", "PUSH_NOT_CONFIGURED")
        return self.PUBLIC_KEY

    async def send(self, subscription: PushSubscription, payload: bytes, topic: str) -> Delivery:
        await self._step("send")
        if not self.configured:
            raise NotConfigured("Push notifications are not set up.", "PUSH_NOT_CONFIGURED")
        self.attempts.append(subscription.endpoint)
        outcome = self._answers.get(subscription.endpoint, Delivery.DELIVERED)
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome is Delivery.DELIVERED:
            push = Push(subscription.id, subscription.endpoint, json.loads(payload), topic)
            self.pushes.append(push)
        return outcome

    def pushes_to(self, endpoint: str) -> list[Push]:
        return [p for p in self.pushes if p.endpoint == endpoint]


# -- the bundle --------------------------------------------------------------------------------


@dataclass
class Fakes:
    """One fake of each port; `adapters` is the bundle the services take."""

    repo: FakeCaptureRepository = field(default_factory=FakeCaptureRepository)
    classifier: ScriptedClassifier = field(default_factory=ScriptedClassifier)
    queues: FakeQueues = field(default_factory=FakeQueues)
    voice: FakeVoiceNotes = field(default_factory=FakeVoiceNotes)
    transcriber: ScriptedTranscriber = field(default_factory=ScriptedTranscriber)
    subscriptions: FakePushSubscriptions = field(default_factory=FakePushSubscriptions)
    sender: FakePushSender = field(default_factory=FakePushSender)
    # The users' preferences (whether recordings are kept), as the blob trigger reads them.
    preferences: FakePreferences = field(default_factory=lambda: FakePreferences())
    embedder: WordsEmbedder = field(default_factory=WordsEmbedder)
    # Over `repo`'s documents: what the pipeline files, these read back.
    filed: FakeFiledItems = field(init=False)
    search: FakeCaptureSearch = field(init=False)
    # The real outbox, over these fakes: one per test, as one per process.
    outbox: QueueOutbox = field(init=False)

    def __post_init__(self) -> None:
        self.filed = FakeFiledItems(self.repo)
        self.search = FakeCaptureSearch(self.repo)
        self.outbox = QueueOutbox(self.queues, self.repo)

    async def drain(self) -> None:
        """Wait for the work the services left running beside their answers: a run's own
        work, then what the outbox does after the writes (publishing, sending checks)."""
        await background.drain()
        await self.outbox.drain()

    @property
    def push(self) -> PushAdapters:
        return PushAdapters(
            subscriptions=self.subscriptions,
            sender=self.sender,
            push_services=get_settings().push_services,
        )

    @property
    def adapters(self) -> Adapters:
        return Adapters(
            repo=self.repo,
            classifier=self.classifier,
            queues=self.queues,
            voice=self.voice,
            transcriber=self.transcriber,
            filed=self.filed,
            search=self.search,
            policy=get_settings().policy(),
            outbox=self.outbox,
            embedder=self.embedder,
        )


# -- builders ----------------------------------------------------------------------------------

USER = "dev"


def new_id() -> str:
    return str(uuid.uuid4())


def text_item(text: str = "Call Sarah about the budget", **fields: Any) -> InboxItem:
    """A text capture as a run stores it (status received unless `fields` say otherwise)."""
    capture_id = fields.pop("id", None) or new_id()
    values: dict[str, Any] = {
        "user_id": USER,
        "source": "text",
        "thread_id": "t",
        "run_id": "r",
        "text": text,
        **fields,
    }
    return InboxItem(id=capture_id, **values)


def voice_item(extension: str = "m4a", **fields: Any) -> InboxItem:
    """A voice capture waiting for its audio, as POST /api/voice-notes stores it."""
    capture_id = fields.pop("id", None) or new_id()
    user_id = fields.pop("user_id", USER)
    values: dict[str, Any] = {
        "source": "voice",
        "thread_id": capture_id,
        "run_id": capture_id,
        "status": Status.AWAITING_UPLOAD,
        "audio_blob": f"{user_id}/{capture_id}.{extension}",
        "audio_content_type": "audio/mp4",
        **fields,
    }
    return InboxItem(id=capture_id, user_id=user_id, **values)


def guess(
    bucket: Bucket | None, confidence: float, title: str = "A title", question: str | None = None
) -> Classification:
    return Classification(bucket=bucket, confidence=confidence, title=title, question=question)


def job_for(item: InboxItem, *, handed_over: bool = False) -> ClassifyJob:
    return ClassifyJob(capture_id=item.id, user_id=item.user_id, handed_over=handed_over)


# -- ask threads -------------------------------------------------------------------------------


class FakeAskThreads(Faults):
    """`AskThreads` on a dict of JSON text keyed by (user, thread), ETag-guarded as Cosmos is."""

    def __init__(self) -> None:
        super().__init__()
        self._docs: dict[tuple[str, str], str] = {}
        self._etags = itertools.count(1)

    async def get(self, user_id: str, thread_id: str) -> AskThread | None:
        await self._step("get")
        stored = self._docs.get((user_id, thread_id))
        return AskThread.model_validate(json.loads(stored)) if stored else None

    async def save(self, thread: AskThread) -> AskThread:
        await self._step("save")
        key = (thread.user_id, thread.id)
        stored = self._docs.get(key)
        current = json.loads(stored)["_etag"] if stored else None
        if current != thread.etag:
            raise StaleItem(thread.id)
        etag = f'"{next(self._etags):08x}-thread"'
        self._docs[key] = json.dumps({**thread.to_json(), "_etag": etag})
        return AskThread.model_validate(json.loads(self._docs[key]))


# -- the digest --------------------------------------------------------------------------------


class FakePreferences(Faults):
    """`PreferencesStore` on a dict of JSON text per user, ETag-guarded as Cosmos is."""

    def __init__(self) -> None:
        super().__init__()
        self._docs: dict[str, str] = {}
        self._etags = itertools.count(1)

    async def get(self, user_id: str) -> Preferences | None:
        await self._step("get")
        return self.stored(user_id)

    async def save(self, preferences: Preferences) -> Preferences:
        await self._step("save")
        stored = self._docs.get(preferences.user_id)
        current = json.loads(stored)["_etag"] if stored else None
        if current != preferences.etag:
            raise StaleItem(preferences.user_id)
        etag = f'"{next(self._etags):08x}-prefs"'
        self._docs[preferences.user_id] = json.dumps({**preferences.to_json(), "_etag": etag})
        return self.stored(preferences.user_id)  # type: ignore[return-value]  # just written

    async def replace(self, preferences: Preferences) -> Preferences:
        await self._step("replace")
        etag = f'"{next(self._etags):08x}-prefs"'
        self._docs[preferences.user_id] = json.dumps({**preferences.to_json(), "_etag": etag})
        return self.stored(preferences.user_id)  # type: ignore[return-value]  # just written

    async def due(self, now: datetime) -> AsyncIterator[Preferences]:
        await self._step("due")
        for user_id in list(self._docs):
            prefs = self.stored(user_id)
            if prefs and prefs.digest and prefs.next_digest_at and prefs.next_digest_at <= now:
                yield prefs

    def stored(self, user_id: str) -> Preferences | None:
        text = self._docs.get(user_id)
        return Preferences.model_validate(json.loads(text)) if text else None


class FakeDigestLog(Faults):
    """`DigestLog` on a dict of JSON text keyed (userId, id), ETag-guarded."""

    def __init__(self) -> None:
        super().__init__()
        self._docs: dict[tuple[str, str], str] = {}
        self._etags = itertools.count(1)

    async def get(self, user_id: str, record_id: str) -> DigestRecord | None:
        await self._step("get")
        return self.stored(user_id, record_id)

    async def add(self, record: DigestRecord) -> tuple[DigestRecord, bool]:
        await self._step("add")
        key = (record.user_id, record.id)
        if key in self._docs:
            return self.stored(*key), False  # type: ignore[return-value]  # just written
        self._write(record)
        return self.stored(*key), True  # type: ignore[return-value]  # just written

    async def save(self, record: DigestRecord) -> DigestRecord:
        await self._step("save")
        key = (record.user_id, record.id)
        stored = self._docs.get(key)
        if stored is None or json.loads(stored)["_etag"] != record.etag:
            raise StaleItem(record.id)
        self._write(record)
        return self.stored(*key)  # type: ignore[return-value]  # just written

    def stored(self, user_id: str, record_id: str) -> DigestRecord | None:
        text = self._docs.get((user_id, record_id))
        return DigestRecord.model_validate(json.loads(text)) if text else None

    def all(self) -> list[DigestRecord]:
        return [DigestRecord.model_validate(json.loads(t)) for t in self._docs.values()]

    def _write(self, record: DigestRecord) -> None:
        etag = f'"{next(self._etags):08x}-digest"'
        self._docs[(record.user_id, record.id)] = json.dumps({**record.to_json(), "_etag": etag})


class FakeDigestQueue(Faults):
    """`DigestQueue` as a list of the jobs sent (through their JSON form)."""

    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[DigestJob] = []

    async def enqueue_digest(self, job: DigestJob) -> None:
        await self._step("enqueue_digest")
        self.jobs.append(DigestJob.model_validate_json(job.model_dump_json(by_alias=True)))

    def take(self) -> list[DigestJob]:
        """The jobs sent so far, as a worker would receive them; the queue is left empty."""
        jobs, self.jobs = self.jobs, []
        return jobs


class ScriptedSummarizer(Faults):
    """`ReviewSummarizer` answering `answer` (None: the model could not answer)."""

    def __init__(self, answer: str | None) -> None:
        super().__init__()
        self.answer = answer
        self.asked: list[Review] = []

    async def summarize(self, review: Review) -> str | None:
        await self._step("summarize")
        self.asked.append(review)
        return self.answer


@dataclass
class DigestFakes:
    preferences: FakePreferences = field(default_factory=FakePreferences)
    digests: FakeDigestLog = field(default_factory=FakeDigestLog)
    queue: FakeDigestQueue = field(default_factory=FakeDigestQueue)
    summarizer: ScriptedSummarizer | None = None

    @property
    def adapters(self) -> DigestAdapters:
        return DigestAdapters(
            preferences=self.preferences,
            digests=self.digests,
            queue=self.queue,
            summarizer=self.summarizer,
        )
