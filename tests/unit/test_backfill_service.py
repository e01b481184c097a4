"""The embeddings backfill on the fakes: a user's captures without a current vector embedded a
page at a time, each page sending the next; a message delivered twice acting once; a crash
mid-page resumed from the message; ties at a page's edge neither lost nor repeated; a model
that is down left to the queue's retries; another user's captures untouched."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.domain.capture import InboxItem, Status
from shared.domain.documents import utcnow
from shared.domain.errors import EmbedderUnavailable, StorageUnavailable
from shared.domain.messages import BackfillJob
from shared.services.backfill import backfill_page
from shared.services.embedding import is_current
from tests.fakes import USER, Fakes, text_item

START = utcnow() - timedelta(days=30)


def seed(fakes: Fakes, count: int, *, user: str = USER, same_instant: bool = False) -> list[str]:
    ids = []
    for n in range(count):
        at = START if same_instant else START + timedelta(minutes=n)
        item = text_item(f"capture number {n} about the garden", user_id=user, created_at=at)
        ids.append(fakes.repo.seed(item).id)
    return ids


async def run_all(fakes: Fakes, job: BackfillJob, page_size: int) -> int:
    """Deliver the start message and every page's message it leads to; the messages run."""
    runs = 0
    queue = [job]
    while queue:
        done = await backfill_page(
            queue.pop(0), fakes.repo, fakes.embedder, fakes.queues, page_size=page_size
        )
        runs += 1
        if done.next is not None:
            queue.append(fakes.queues.backfill[-1])
    return runs


def current(fakes: Fakes, user: str = USER) -> list[InboxItem]:
    return [i for i in fakes.repo.inbox(user) if is_current(i, fakes.embedder)]


async def test_every_capture_is_embedded_a_page_at_a_time(fakes: Fakes) -> None:
    ids = seed(fakes, 7)
    theirs = seed(fakes, 2, user="someone-else")
    runs = await run_all(fakes, BackfillJob(user_id=USER), page_size=3)
    assert runs == 3 and len(fakes.queues.backfill) == 2
    assert {i.id for i in current(fakes)} == set(ids)
    assert current(fakes, "someone-else") == [] and len(theirs) == 2
    assert len(fakes.embedder.texts) == 7  # each once


async def test_a_message_delivered_twice_acts_once(fakes: Fakes) -> None:
    seed(fakes, 4)
    job = BackfillJob(user_id=USER)
    first = await backfill_page(job, fakes.repo, fakes.embedder, fakes.queues, page_size=10)
    before = {i.id: i.etag for i in fakes.repo.inbox(USER)}
    again = await backfill_page(job, fakes.repo, fakes.embedder, fakes.queues, page_size=10)
    assert (first.embedded, again.embedded, again.current) == (4, 0, 4)
    assert len(fakes.embedder.texts) == 4  # no second model call
    assert {i.id: i.etag for i in fakes.repo.inbox(USER)} == before  # no second write


async def test_a_crash_mid_page_resumes_from_the_message(fakes: Fakes) -> None:
    seed(fakes, 5)
    job = BackfillJob(user_id=USER)

    def down() -> None:
        raise StorageUnavailable("down")

    # Two saves go through, the third fails (the process dies): the message comes again.
    for hook in (lambda: None, lambda: None, down):
        fakes.repo.before_next("save", hook)
    with pytest.raises(StorageUnavailable):
        await backfill_page(job, fakes.repo, fakes.embedder, fakes.queues, page_size=3)
    assert len(current(fakes)) == 2
    assert fakes.queues.backfill == []  # the next page is not sent before this one is done
    resumed = await backfill_page(job, fakes.repo, fakes.embedder, fakes.queues, page_size=3)
    assert (resumed.embedded, resumed.current) == (1, 2)
    assert resumed.next is not None and fakes.queues.backfill == [resumed.next]
    await run_all(fakes, resumed.next, page_size=3)
    assert len(current(fakes)) == 5


async def test_ties_at_a_pages_edge_are_neither_lost_nor_repeated(fakes: Fakes) -> None:
    ids = seed(fakes, 5, same_instant=True)
    await run_all(fakes, BackfillJob(user_id=USER), page_size=2)
    assert {i.id for i in current(fakes)} == set(ids)
    assert len(fakes.embedder.texts) == 5
    assert [len(j.seen) for j in fakes.queues.backfill] == [2, 4]


async def test_a_model_that_is_down_leaves_the_page_to_the_queue(fakes: Fakes) -> None:
    seed(fakes, 2)
    fakes.embedder.fail_next("embed", EmbedderUnavailable("down"))
    with pytest.raises(EmbedderUnavailable):
        await backfill_page(BackfillJob(user_id=USER), fakes.repo, fakes.embedder, fakes.queues)
    assert current(fakes) == [] and fakes.queues.backfill == []


async def test_a_capture_saved_meanwhile_is_embedded_as_it_is_now(fakes: Fakes) -> None:
    [capture_id] = seed(fakes, 1)
    deleted = fakes.repo.seed(text_item("gone", status=Status.DELETING, created_at=START))

    def edit() -> None:
        item = fakes.repo.stored(USER, capture_id)
        assert item is not None
        fakes.repo.seed(item.model_copy(update={"title": "Seed potatoes"}))

    fakes.repo.before_next("save", edit)
    done = await backfill_page(BackfillJob(user_id=USER), fakes.repo, fakes.embedder, fakes.queues)
    stored = fakes.repo.stored(USER, capture_id)
    assert (
        stored is not None
        and stored.title == "Seed potatoes"
        and is_current(stored, fakes.embedder)
    )
    assert done.embedded == 1
    gone = fakes.repo.stored(USER, deleted.id)
    assert gone is not None and gone.embedding is None  # a tombstone is never embedded
