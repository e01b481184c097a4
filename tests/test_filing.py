"""Filing's crash-safety against real Cosmos: a move interrupted at any step converges when
re-run, and a capture deleted mid-filing leaves nothing behind."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from shared.bucket_pick import pick_bucket
from shared.classifier.protocol import Bucket, Classification
from shared.errors import CaptureDeleted
from shared.filing import file_capture, filed_item_for
from shared.inbox import delete_capture
from shared.models import InboxItem, Status
from shared.wiring import Adapters, adapters, reset
from tests.support import docs

BUCKETS = [b.value for b in Bucket]


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
    return await file_capture(item, guess, app.repo, app.queues)


def filed_in(cosmos, capture_id: str) -> list[str]:
    return [b for b in BUCKETS if docs(cosmos, b, capture_id)]


async def test_a_move_interrupted_after_writing_the_new_item_converges(app, cosmos) -> None:
    item = await filed_capture(app, Bucket.IDEAS)
    # Step 1 of the move ran (the new filed item), then the process died.
    choice = Classification(bucket=Bucket.PROJECTS, confidence=1.0, title="Tiles")
    await app.repo.put_filed(filed_item_for(item, Bucket.PROJECTS, choice))
    assert filed_in(cosmos, item.id) == ["Projects", "Ideas"]

    moved = await pick_bucket("dev", item.id, Bucket.PROJECTS, app)
    assert moved.filed_bucket is Bucket.PROJECTS and moved.chosen_by == "user"
    assert filed_in(cosmos, item.id) == ["Projects"]


async def test_a_move_interrupted_before_deleting_the_old_item_converges(app, cosmos) -> None:
    item = await filed_capture(app, Bucket.IDEAS)
    # Steps 1 and 2 ran (new filed item, inbox item naming it); the old item was not deleted.
    choice = Classification(bucket=Bucket.PEOPLE, confidence=1.0, title="Tiles")
    await app.repo.put_filed(filed_item_for(item, Bucket.PEOPLE, choice))
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
        await file_capture(item, guess, app.repo, app.queues)
    assert filed_in(cosmos, item.id) == [] and docs(cosmos, "Inbox", item.id) == []


async def test_the_classifier_yields_to_a_capture_settled_first(app, cosmos) -> None:
    item = await filed_capture(app, Bucket.IDEAS)
    await pick_bucket("dev", item.id, Bucket.ADMIN, app)
    # A late duplicate delivery still holds the old copy: the user's choice stands.
    late = Classification(bucket=Bucket.PEOPLE, confidence=0.9, title="Late")
    stale = item.model_copy(update={"status": Status.QUEUED})
    result = await file_capture(stale, late, app.repo, app.queues)
    assert result.filed_bucket is Bucket.ADMIN and result.chosen_by == "user"
    assert filed_in(cosmos, item.id) == ["Admin"]
