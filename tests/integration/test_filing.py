"""Filing's crash-safety against real Cosmos: a move interrupted at any step converges when
re-run, and a capture deleted mid-filing leaves nothing behind."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import date

import pytest
from azure.storage.queue import QueueClient

from shared.bootstrap import adapters, reset, root
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket, Classification
from shared.domain.errors import CaptureDeleted
from shared.domain.messages import ClassifyJob
from shared.domain.ports import Adapters
from shared.services.bucket_pick import pick_bucket
from shared.services.filing import file_capture, filed_item_for
from shared.services.inbox import delete_capture
from shared.services.worker import handle_classify_job
from testkit.support import BUCKETS, clear_queue, docs


@pytest.fixture
async def app(provisioned: dict[str, str]) -> AsyncIterator[Adapters]:
    yield adapters()
    await reset()


async def filed_capture(app: Adapters, bucket: Bucket, text: str = "order tiles") -> InboxItem:
    item = InboxItem(
        id=str(uuid.uuid4()), user_id="dev", source="text", text=text, thread_id="t", run_id="r"
    )
    item, _ = await app.repo.add(item)
    guess = Classification(bucket=bucket, confidence=0.45, title="Tiles")
    return await file_capture(item, item.classified(guess), app.repo, app.outbox)


def filed_in(cosmos, capture_id: str) -> list[str]:
    return [b for b in BUCKETS if docs(cosmos, b, capture_id)]


async def test_a_move_interrupted_after_writing_the_new_item_converges(app, cosmos) -> None:
    item = await filed_capture(app, Bucket.IDEAS)
    # Step 1 of the move ran (the new filed item), then the process died.
    await app.repo.put_filed(filed_item_for(item.picked(Bucket.PROJECTS, "Tiles")))
    assert filed_in(cosmos, item.id) == ["Projects", "Ideas"]

    moved = await pick_bucket("dev", item.id, Bucket.PROJECTS, app)
    assert moved.filed_bucket is Bucket.PROJECTS and moved.chosen_by == "user"
    assert filed_in(cosmos, item.id) == ["Projects"]


async def test_a_move_interrupted_before_deleting_the_old_item_converges(app, cosmos) -> None:
    item = await filed_capture(app, Bucket.IDEAS)
    # Steps 1 and 2 ran (new filed item, inbox item naming it); the old item was not deleted.
    await app.repo.put_filed(filed_item_for(item.picked(Bucket.PEOPLE, "Tiles")))
    await app.repo.save(item.model_copy(update={"filed_bucket": Bucket.PEOPLE}))
    assert filed_in(cosmos, item.id) == ["People", "Ideas"]

    again = await pick_bucket("dev", item.id, Bucket.PEOPLE, app)
    assert again.filed_bucket is Bucket.PEOPLE
    assert filed_in(cosmos, item.id) == ["People"]
    (inbox,) = docs(cosmos, "Inbox", item.id)
    assert inbox["filedBucket"] == "People" and inbox["status"] == "filed"


async def test_filing_a_capture_deleted_meanwhile_leaves_no_filed_item(app, cosmos) -> None:
    item = InboxItem(
        id=str(uuid.uuid4()), user_id="dev", source="text", text="x", thread_id="t", run_id="r"
    )
    item, _ = await app.repo.add(item)
    await delete_capture("dev", item.id, app)
    guess = Classification(bucket=Bucket.ADMIN, confidence=0.9, title="X")
    with pytest.raises(CaptureDeleted):
        await file_capture(item, item.classified(guess), app.repo, app.outbox)
    assert filed_in(cosmos, item.id) == [] and docs(cosmos, "Inbox", item.id) == []


async def test_the_classifier_yields_to_a_capture_settled_first(app, cosmos) -> None:
    item = await filed_capture(app, Bucket.IDEAS)
    await pick_bucket("dev", item.id, Bucket.ADMIN, app)
    # A late duplicate delivery still holds the old copy: the user's choice stands.
    late = Classification(bucket=Bucket.PEOPLE, confidence=0.9, title="Late")
    stale = item.model_copy(update={"status": Status.QUEUED})
    result = await file_capture(stale, stale.classified(late), app.repo, app.outbox)
    assert result.filed_bucket is Bucket.ADMIN and result.chosen_by == "user"
    assert filed_in(cosmos, item.id) == ["Admin"]


@pytest.fixture
def outcomes_at_once(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Outcome messages visible as soon as they are sent (PUSH_DELAY_S=0), to peek at them:
    the setting reaches the queues through the composition root (list it before `app`)."""
    from shared.settings import get_settings

    monkeypatch.setenv("PUSH_DELAY_S", "0")
    get_settings.cache_clear()
    root.cache_clear()
    yield
    get_settings.cache_clear()  # read again, once the environment is restored


async def test_two_deliveries_at_once_both_ask_the_model_and_file_once(
    outcomes_at_once, app, cosmos, storage_conn
) -> None:
    clear_queue(storage_conn, "captures-outcomes")
    item = InboxItem(
        id=str(uuid.uuid4()),
        user_id="dev",
        source="text",
        text="launch it",
        thread_id="t",
        run_id="r",
    )
    item, _ = await app.repo.add(item)
    both_asked = asyncio.Barrier(2)
    asked: list[str] = []

    class AnswersWhenBothAsked:
        """Neither delivery can file before the other has read the capture and asked."""

        async def classify(self, text: str, *, said_on: date | None = None) -> Classification:
            asked.append(text)
            await asyncio.wait_for(both_asked.wait(), timeout=10)
            return Classification(bucket=Bucket.PROJECTS, confidence=0.95, title="Launch")

    racing = dataclasses.replace(app, classifier=AnswersWhenBothAsked())
    job = ClassifyJob(capture_id=item.id, user_id="dev")
    results = await asyncio.gather(
        handle_classify_job(job, racing), handle_classify_job(job, racing)
    )

    assert asked == ["launch it", "launch it"]
    # The ETag lets one save win; the other yields to it and keeps the filed item they share.
    assert [(r.status, r.filed_bucket) for r in results] == [(Status.FILED, Bucket.PROJECTS)] * 2
    assert filed_in(cosmos, item.id) == ["Projects"]
    (inbox,) = docs(cosmos, "Inbox", item.id)
    assert inbox["status"] == "filed" and inbox["filedBucket"] == "Projects"
    await app.outbox.drain()  # outcomes are published off the answer's path
    outcomes = QueueClient.from_connection_string(storage_conn, "captures-outcomes")
    published = [json.loads(base64.b64decode(m.content)) for m in outcomes.peek_messages(32)]
    assert [m["captureId"] for m in published] == [item.id]  # only the winner publishes
