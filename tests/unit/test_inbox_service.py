"""shared/services/inbox.py on the fakes: reading one capture, paging the inbox newest first, and
deleting a capture with everything it left (tombstone first)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.documents import utcnow
from shared.domain.errors import Conflict, Malformed, NotFound, StorageUnavailable
from shared.services.filing import file_capture, filed_item_for
from shared.services.inbox import InboxQuery, delete_capture, get_capture, list_inbox
from shared.services.retry_stale import ATTEMPTS
from tests.fakes import USER, Fakes, guess, new_id, text_item, voice_item


async def filed(fakes: Fakes, bucket: Bucket = Bucket.PEOPLE) -> InboxItem:
    item = fakes.repo.seed(text_item())
    result = await file_capture(item, item.classified(guess(bucket, 0.9)), fakes.repo, fakes.outbox)
    fakes.repo.calls.clear()
    return result


# -- one capture ---------------------------------------------------------------------------------


async def test_get_capture_returns_ones_own_capture(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    assert await get_capture(USER, item.id, fakes.repo) == item


@pytest.mark.parametrize("whose", ["unknown", "another user's", "deleted", "not an id"])
async def test_get_capture_is_not_found_alike(fakes: Fakes, whose: str) -> None:
    item = fakes.repo.seed(text_item())
    user, capture_id = {
        "unknown": (USER, new_id()),
        "another user's": ("other", item.id),
        "deleted": (USER, fakes.repo.seed(text_item().tombstoned()).id),
        "not an id": (USER, item.id.upper()),
    }[whose]
    with pytest.raises(NotFound) as missing:
        await get_capture(user, capture_id, fakes.repo)
    assert (missing.value.code, missing.value.message) == (None, "There is no such capture.")
    if whose == "not an id":
        assert fakes.repo.calls == []  # no store call for what cannot be an id


# -- delete --------------------------------------------------------------------------------------


async def test_delete_tombstones_then_removes_filed_items_audio_and_the_item(fakes: Fakes) -> None:
    item = fakes.repo.seed(voice_item(status=Status.RECEIVED, text="Call Sarah"))
    fakes.voice.put(item.audio_blob, b"audio")
    item = await file_capture(
        item, item.classified(guess(Bucket.PEOPLE, 0.9)), fakes.repo, fakes.outbox
    )
    fakes.repo.calls.clear()
    steps: list[str] = []
    tombstone_seen: list[InboxItem | None] = []

    def look() -> None:  # what a reader sees just before the filed items go
        if not tombstone_seen:
            tombstone_seen.append(fakes.repo.stored(USER, item.id))

    fakes.repo.before_next("delete_filed", look)
    fakes.voice.before_next("delete", lambda: steps.append("audio"))
    await delete_capture(USER, item.id, fakes.adapters)

    # The tombstone, every bucket emptied, one read to see that nobody wrote meanwhile.
    assert fakes.repo.calls == ["get", "save", *["delete_filed"] * 4, "get", "remove"]
    assert [s.delay_s > 0 for s in fakes.queues.sent] == [True]  # its check went out first
    (tombstone,) = tombstone_seen
    assert tombstone.is_deleted and tombstone.text is None and tombstone.title is None
    assert steps == ["audio"] and fakes.voice.blobs == {}
    assert fakes.repo.stored(USER, item.id) is None and fakes.repo.filed_count() == 0


async def test_delete_is_idempotent_and_touches_only_ones_own(fakes: Fakes) -> None:
    item = await filed(fakes)
    await delete_capture("other", item.id, fakes.adapters)
    assert fakes.repo.stored(USER, item.id) == item
    assert fakes.repo.filed_buckets(USER, item.id) == [Bucket.PEOPLE]

    await delete_capture(USER, item.id, fakes.adapters)
    await delete_capture(USER, item.id, fakes.adapters)
    await delete_capture(USER, "not-a-uuid", fakes.adapters)
    assert fakes.repo.inbox() == [] and fakes.repo.filed_count() == 0


async def test_delete_sweeps_every_bucket(fakes: Fakes) -> None:
    item = await filed(fakes, Bucket.IDEAS)
    # A move interrupted earlier left a filed item the inbox item does not name.
    await fakes.repo.put_filed(filed_item_for(item.picked(Bucket.ADMIN, "A title")))
    await delete_capture(USER, item.id, fakes.adapters)
    assert fakes.repo.filed_count() == 0


async def test_deleting_again_finishes_a_delete_that_stopped_part_way(fakes: Fakes) -> None:
    item = await filed(fakes)
    fakes.repo.fail_next("delete_filed", ConnectionError("the process died"))
    with pytest.raises(ConnectionError):
        await delete_capture(USER, item.id, fakes.adapters)
    left = fakes.repo.stored(USER, item.id)
    assert left.is_deleted and left.text is None  # the tombstone: none of the user's words

    await delete_capture(USER, item.id, fakes.adapters)
    assert fakes.repo.stored(USER, item.id) is None and fakes.repo.filed_count() == 0


async def test_a_write_racing_the_tombstone_is_read_again_then_swept(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item(status=Status.QUEUED))

    async def worker_files_it() -> None:
        current = await fakes.repo.get(USER, item.id)
        filed = current.classified(guess(Bucket.PROJECTS, 0.9))
        await file_capture(current, filed, fakes.repo, fakes.outbox)

    fakes.repo.before_next("save", worker_files_it)
    await delete_capture(USER, item.id, fakes.adapters)
    assert fakes.repo.armed == [] and fakes.repo.calls.count("save") == 3  # its own twice
    assert fakes.repo.stored(USER, item.id) is None and fakes.repo.filed_count() == 0


async def test_a_capture_that_keeps_changing_is_a_conflict(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    for _ in range(ATTEMPTS):
        fakes.repo.before_next("save", lambda: fakes.repo.seed(fakes.repo.stored(USER, item.id)))
    with pytest.raises(Conflict) as conflict:
        await delete_capture(USER, item.id, fakes.adapters)
    assert (conflict.value.code, conflict.value.message) == (
        "CONFLICT",
        "This capture keeps changing. Please try again.",
    )
    assert fakes.repo.stored(USER, item.id).text == item.text  # nothing was removed


# -- the inbox -----------------------------------------------------------------------------------


def seed_inbox(fakes: Fakes, count: int, user: str = USER, **fields) -> list[str]:
    """`count` captures a second apart; their ids, newest first."""
    start = utcnow() - timedelta(hours=1)
    items = [
        fakes.repo.seed(
            text_item(f"idea {n}", user_id=user, created_at=start + timedelta(seconds=n), **fields)
        )
        for n in range(count)
    ]
    return [i.id for i in reversed(items)]


def query(limit: int = 20, token: str | None = None, status: Status | None = None) -> InboxQuery:
    return InboxQuery(limit=limit, status=status, continuation_token=token)


async def pages(fakes: Fakes, limit: int) -> list[list[str]]:
    """Every page's ids, following the continuation tokens to the end (or failing after 20
    pages: a token that does not move on would loop for ever)."""
    seen, token = [], None
    for _ in range(20):
        page = await list_inbox(USER, query(limit, token), fakes.repo)
        seen.append([i.id for i in page.items])
        token = page.continuation_token
        if token is None:
            return seen
    raise AssertionError(f"the inbox kept paging: {seen[:5]}...")


async def test_the_inbox_pages_newest_first_with_a_continuation_token(fakes: Fakes) -> None:
    ids = seed_inbox(fakes, 7)
    seen = await pages(fakes, 3)
    assert seen == [ids[0:3], ids[3:6], ids[6:7]]


async def test_a_full_last_page_has_no_token(fakes: Fakes) -> None:
    ids = seed_inbox(fakes, 6)
    assert await pages(fakes, 3) == [ids[0:3], ids[3:6]]
    assert await pages(fakes, 20) == [ids]


async def test_captures_arriving_meanwhile_do_not_shift_the_pages(fakes: Fakes) -> None:
    ids = seed_inbox(fakes, 5)
    first = await list_inbox(USER, query(2), fakes.repo)
    fakes.repo.seed(text_item("newer"))  # arrives while the client reads the first page
    rest = await list_inbox(USER, query(10, first.continuation_token), fakes.repo)
    assert [i.id for i in rest.items] == ids[2:]


async def test_captures_of_the_same_instant_are_each_listed_once(fakes: Fakes) -> None:
    same = utcnow() - timedelta(minutes=5)
    ids = [fakes.repo.seed(text_item(f"n{n}", created_at=same)).id for n in range(5)]
    seen = await pages(fakes, 2)
    flat = [i for page in seen for i in page]
    assert sorted(flat) == sorted(ids) and len(flat) == 5
    assert [len(p) for p in seen] == [2, 2, 1]


async def test_deleted_captures_are_never_listed(fakes: Fakes) -> None:
    ids = seed_inbox(fakes, 5)
    for capture_id in (ids[1], ids[2]):
        fakes.repo.seed(fakes.repo.stored(USER, capture_id).tombstoned())
    seen = await pages(fakes, 2)
    assert seen == [[ids[0], ids[3]], [ids[4]]]


async def test_the_inbox_filters_by_status_and_isolates_users(fakes: Fakes) -> None:
    waiting = seed_inbox(fakes, 3, status=Status.NEEDS_CLARIFICATION)
    seed_inbox(fakes, 2, status=Status.FILED)
    seed_inbox(fakes, 2, user="other", status=Status.NEEDS_CLARIFICATION)
    page = await list_inbox(USER, query(status=Status.NEEDS_CLARIFICATION), fakes.repo)
    assert [i.id for i in page.items] == waiting
    assert {(i.user_id, i.status.value) for i in page.items} == {(USER, "needs_clarification")}


async def test_items_are_listed_in_their_stored_form(fakes: Fakes) -> None:
    (capture_id,) = seed_inbox(fakes, 1)
    (listed,) = (await list_inbox(USER, query(), fakes.repo)).to_json()["items"]
    assert listed == fakes.repo.stored(USER, capture_id).to_json()
    assert "_etag" not in listed and "etag" not in listed


@pytest.mark.parametrize("token", ["not-a-token", "e30", "eyJ0IjogMX0"])
async def test_a_bad_continuation_token_is_malformed(fakes: Fakes, token: str) -> None:
    with pytest.raises(Malformed) as bad:
        await list_inbox(USER, query(token=token), fakes.repo)
    assert (bad.value.code, bad.value.message) == (
        "BAD_TOKEN",
        "The continuation token is not valid.",
    )


async def test_the_delayed_check_finishes_a_delete_cut_short(fakes: Fakes) -> None:
    from shared.services.worker import handle_classify_job

    item = await filed(fakes)
    fakes.repo.fail_next("delete_filed", StorageUnavailable("Cosmos took too long"))
    with pytest.raises(StorageUnavailable):
        await delete_capture(USER, item.id, fakes.adapters)
    (check,) = [s.job for s in fakes.queues.sent if s.delay_s > 0 and s.job.capture_id == item.id]
    assert fakes.repo.filed_count() == 1  # the cut-short delete left the filed item

    assert await handle_classify_job(check, fakes.adapters) is None
    assert fakes.repo.stored(USER, item.id) is None and fakes.repo.filed_count() == 0
