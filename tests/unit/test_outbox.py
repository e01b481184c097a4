"""shared/services/outbox.py on the fakes: what follows a write. The delayed check goes out
before it; a live run's outcome is held for its stream and, delivered, sends nothing but the
check's deletion; an outcome nobody delivered is published; one published and then delivered
is taken back, else marked seen live. Each outbox keeps its own (one per process)."""

from __future__ import annotations

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.errors import StorageUnavailable
from shared.domain.messages import ClassifyJob
from shared.services.outbox import QueueOutbox
from tests.fakes import USER, Fakes, guess, text_item


def settled(fakes: Fakes) -> InboxItem:
    return fakes.repo.seed(text_item().classified(guess(Bucket.PEOPLE, 0.9, "Call Sarah")))


def check_of(item: InboxItem) -> ClassifyJob:
    return ClassifyJob(capture_id=item.id, user_id=USER, tells_outcome=True)


async def held(fakes: Fakes) -> InboxItem:
    """A live run's outcome, held under the check the run sent before its write."""
    item = settled(fakes)
    check = await fakes.outbox.send_check(check_of(item), 120)
    fakes.outbox.hold(item, check)
    return item


def told(fakes: Fakes, item: InboxItem) -> bool:
    return any(o.settled_at == item.updated_at for o in fakes.queues.outcomes)


async def test_a_held_outcome_delivered_sends_nothing_but_the_checks_deletion(
    fakes: Fakes,
) -> None:
    item = await held(fakes)
    fakes.outbox.delivered(item)
    await fakes.drain()
    assert not fakes.queues.outcomes and not fakes.queues.pending
    assert [j.capture_id for j in fakes.queues.cancelled] == [item.id]
    assert not fakes.repo.stored(USER, item.id).was_shown_live  # nothing written either


async def test_a_held_outcome_nobody_delivered_is_published_then_its_check_deleted(
    fakes: Fakes,
) -> None:
    item = await held(fakes)
    assert not fakes.queues.outcomes  # held, for the queues' outcome delay
    await fakes.drain()
    assert told(fakes, item) and not fakes.queues.pending


async def test_an_outcome_whose_check_was_not_sent_is_published_as_any(fakes: Fakes) -> None:
    item = settled(fakes)
    fakes.queues.fail_next("enqueue_classify", StorageUnavailable("down"))
    check = await fakes.outbox.send_check(check_of(item), 120)
    fakes.outbox.hold(item, check)
    await fakes.drain()
    assert told(fakes, item)


async def test_a_published_outcome_delivered_is_taken_back(fakes: Fakes) -> None:
    item = settled(fakes)
    fakes.outbox.publish(item)
    await fakes.drain()
    fakes.outbox.delivered(item)
    await fakes.drain()
    assert not fakes.queues.outcomes
    assert [o.capture_id for o in fakes.queues.cancelled_outcomes] == [item.id]
    fakes.outbox.delivered(item)  # a replayed run: nothing is left to take back or mark
    await fakes.drain()
    assert not fakes.repo.stored(USER, item.id).was_shown_live


async def test_an_outcome_this_process_did_not_tell_is_marked_seen_live(fakes: Fakes) -> None:
    item = settled(fakes)
    fakes.outbox.delivered(item)  # told by another instance, say: nothing here to take back
    await fakes.drain()
    assert fakes.repo.stored(USER, item.id).was_shown_live


async def test_an_unseen_outcome_is_told_at_once_a_seen_one_not(fakes: Fakes) -> None:
    unseen = settled(fakes)
    fakes.outbox.tell_unseen(unseen)
    seen = fakes.repo.seed(settled(fakes).shown_live())
    fakes.outbox.tell_unseen(seen)
    await fakes.drain()
    assert told(fakes, unseen) and not told(fakes, seen)


async def test_what_an_outbox_holds_is_its_own(fakes: Fakes) -> None:
    """A process's outbox: another one (another process) has nothing of it to release."""
    item = await held(fakes)
    other = QueueOutbox(fakes.queues, fakes.repo)
    other.delivered(item)  # it held nothing: it marks the version seen
    await other.drain()
    await fakes.drain()
    assert told(fakes, item)  # the holder, never told it was delivered, published it


async def test_a_process_that_dies_holding_an_outcome_leaves_its_check(fakes: Fakes) -> None:
    item = await held(fakes)
    fakes.outbox.abandon()
    await fakes.drain()
    assert not fakes.queues.outcomes and not fakes.queues.cancelled
    assert [s.job for s in fakes.queues.pending] == [check_of(item)]
