"""What the recall services may rely on from `FiledItems` and `CaptureSearch`, checked on the
fakes of tests/fakes.py (marked unit too) and on the Cosmos adapters against the local Cosmos
server (search on its local path: CONTAINS over lowercased fields), with the same assertions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import date, timedelta
from typing import Any

import pytest

from shared.domain.capture import Clarification, Status
from shared.domain.classification import Bucket
from shared.domain.documents import utc_text, utcnow
from shared.domain.errors import StaleItem
from shared.domain.filed import FILED_MODELS, FiledItem, person_key
from shared.domain.ports import (
    CaptureRepository,
    CaptureSearch,
    FiledFilter,
    FiledItems,
)
from tests.fakes import Fakes, new_id, text_item

START = utcnow() - timedelta(days=1)


class Subject:
    repo: CaptureRepository
    filed: FiledItems
    search: CaptureSearch


class OnFake(Subject):
    def __init__(self) -> None:
        fakes = Fakes()
        self.repo, self.filed, self.search = fakes.repo, fakes.filed, fakes.search


class OnCosmos(Subject):
    def __init__(self) -> None:
        from shared import bootstrap
        from shared.adapters.filed_items import CosmosFiledItems
        from shared.adapters.repository import CosmosCaptureRepository
        from shared.adapters.search import CosmosCaptureSearch

        database = bootstrap.root().clients.cosmos_database()
        self.repo = CosmosCaptureRepository(database)
        self.filed = CosmosFiledItems(database)
        self.search = CosmosCaptureSearch(database, full_text=False)


@pytest.fixture
async def subject(backend: Any) -> AsyncIterator[Subject]:
    if backend is None:
        yield OnFake()
        return
    from shared.bootstrap import reset

    yield OnCosmos()
    await reset()


@pytest.fixture
def user() -> str:
    return f"recall-{new_id()}"


def filed(user: str, bucket: Bucket, n: int, **fields: Any) -> FiledItem:
    """The n-th item of a bucket, n seconds after START (a larger n is newer)."""
    return FILED_MODELS[bucket](
        id=fields.pop("id", None) or new_id(),
        user_id=user,
        inbox_item_id="x",
        title=fields.pop("title", f"item {n}"),
        text=fields.pop("text", f"text {n}"),
        confidence=0.9,
        created_at=START + timedelta(seconds=n),
        **fields,
    )


async def put(subject: Subject, *items: FiledItem) -> list[FiledItem]:
    for item in items:
        await subject.repo.put_filed(item)
    return list(items)


EVERY = FiledFilter()


async def ids(subject: Subject, user: str, bucket: Bucket, where=EVERY, **kw) -> list:
    page = await subject.filed.page(
        user, bucket, where, after=kw.get("after"), limit=kw.get("limit", 50)
    )
    return [i.id for i in page]


async def test_a_bucket_lists_newest_first_by_keyset(subject: Subject, user: str) -> None:
    items = await put(subject, *(filed(user, Bucket.PROJECTS, n) for n in (2, 0, 3, 1)))
    await put(subject, filed(f"{user}-other", Bucket.PROJECTS, 5))
    newest_first = [i.id for i in sorted(items, key=lambda i: i.created_at, reverse=True)]
    assert await ids(subject, user, Bucket.PROJECTS) == newest_first
    first = await subject.filed.page(user, Bucket.PROJECTS, FiledFilter(), after=None, limit=2)
    assert [i.id for i in first] == newest_first[:2]
    rest = await ids(subject, user, Bucket.PROJECTS, after=first[-1].list_order)
    assert rest == newest_first[2:]


async def test_admin_lists_by_due_date_with_none_last(subject: Subject, user: str) -> None:
    later = filed(user, Bucket.ADMIN, 1, due_date=date(2026, 12, 5))
    sooner = filed(user, Bucket.ADMIN, 0, due_date=date(2026, 12, 1))
    undated_old = filed(user, Bucket.ADMIN, 2)
    undated_new = filed(user, Bucket.ADMIN, 3)
    await put(subject, undated_old, later, undated_new, sooner)
    expected = [sooner.id, later.id, undated_new.id, undated_old.id]
    assert await ids(subject, user, Bucket.ADMIN) == expected
    before = FiledFilter(due_before=date(2026, 12, 5))  # strictly before; no date: left out
    assert await ids(subject, user, Bucket.ADMIN, before) == [sooner.id]


async def test_filters_by_person_and_done(subject: Subject, user: str) -> None:
    zoe = filed(user, Bucket.PEOPLE, 0, people=["Zoë", "Tom"])
    zoe_done = filed(user, Bucket.PEOPLE, 1, people=["ZOE"], done=True)
    tom = filed(user, Bucket.PEOPLE, 2, people=["Tom"])
    await put(subject, zoe, zoe_done, tom)
    by_key = FiledFilter(person_key=person_key("zoe"))
    assert await ids(subject, user, Bucket.PEOPLE, by_key) == [zoe_done.id, zoe.id]
    open_zoe = FiledFilter(person_key=person_key("Zoë"), done=False)
    assert await ids(subject, user, Bucket.PEOPLE, open_zoe) == [zoe.id]
    assert await ids(subject, user, Bucket.PEOPLE, FiledFilter(done=True)) == [zoe_done.id]


async def test_replace_is_guarded_by_the_etag(subject: Subject, user: str) -> None:
    (item,) = await put(subject, filed(user, Bucket.PROJECTS, 0))
    stored = await subject.filed.get(user, Bucket.PROJECTS, item.id)
    assert stored is not None and stored.etag
    saved = await subject.filed.replace(stored.model_copy(update={"done": True}))
    assert saved.done and saved.etag and saved.etag != stored.etag
    with pytest.raises(StaleItem):
        await subject.filed.replace(stored.model_copy(update={"title": "old copy"}))
    got = await subject.filed.get(user, Bucket.PROJECTS, item.id)
    assert got is not None and got.done and got.title == item.title
    await subject.repo.delete_filed(user, Bucket.PROJECTS, item.id)
    with pytest.raises(StaleItem):  # gone: nothing to replace, and nothing re-created
        await subject.filed.replace(saved)
    assert await subject.filed.get(user, Bucket.PROJECTS, item.id) is None
    assert await subject.filed.get(f"{user}-other", Bucket.PROJECTS, item.id) is None


async def test_naming_reads_all_buckets_newest_first(subject: Subject, user: str) -> None:
    a = filed(user, Bucket.PROJECTS, 0, people=["Zoë"])
    b = filed(user, Bucket.ADMIN, 2, people=["zoe"])
    c = filed(user, Bucket.IDEAS, 1, people=["Zoe Ng"])  # another person
    d = filed(user, Bucket.PEOPLE, 3, people=["Zoë"])
    await put(subject, a, b, c, d, filed(f"{user}-other", Bucket.PEOPLE, 4, people=["Zoë"]))
    found = await subject.filed.newest_mentioning(user, person_key("ZOË"), 10)
    assert [i.id for i in found] == [d.id, b.id, a.id]
    assert [i.id for i in await subject.filed.newest_mentioning(user, "zoe", 2)] == [d.id, b.id]
    assert await subject.filed.newest_mentioning(user, "nobody", 10) == []


async def test_naming_goes_on_at_or_before_an_instant(subject: Subject, user: str) -> None:
    a = filed(user, Bucket.PROJECTS, 0, people=["Ana"])
    b = filed(user, Bucket.ADMIN, 1, people=["Ana"])
    c = filed(user, Bucket.IDEAS, 1, people=["Ana"])  # the same instant as b
    d = filed(user, Bucket.PEOPLE, 2, people=["Ana"])
    await put(subject, a, b, c, d)
    first = await subject.filed.newest_mentioning(user, "ana", 2)
    assert first[0].id == d.id and first[1].id in (b.id, c.id)
    # At or before the tie's instant: both of it (the caller leaves out what it sent), then a.
    rest = await subject.filed.newest_mentioning(user, "ana", 10, utc_text(b.created_at))
    assert {i.id for i in rest[:2]} == {b.id, c.id} and [i.id for i in rest[2:]] == [a.id]
    oldest = await subject.filed.newest_mentioning(user, "ana", 1, utc_text(a.created_at))
    assert [i.id for i in oldest] == [a.id]


async def test_mentions_are_the_items_naming_someone(subject: Subject, user: str) -> None:
    await put(
        subject,
        filed(user, Bucket.PEOPLE, 0, people=["Ana"], done=True),
        filed(user, Bucket.ADMIN, 1, people=["Ana", "Ben"]),
        filed(user, Bucket.IDEAS, 2),
        filed(f"{user}-other", Bucket.PEOPLE, 3, people=["Cy"]),
    )
    found = sorted(await subject.filed.mentions(user), key=lambda m: m.created_at)
    assert [(m.people, m.done) for m in found] == [(["Ana"], True), (["Ana", "Ben"], False)]
    assert found[0].created_at == START


async def test_the_version_changes_with_every_write_and_removal(
    subject: Subject, user: str
) -> None:
    """What the people list's cache relies on: the version is the same while nothing changes,
    differs after a write, an edit or a removal, and is None (no promise) within the store's
    clock's second of a write; another user's writes leave it alone."""

    async def settled() -> str:
        # Cosmos's _ts is whole seconds: the version is promised once the write's second is over.
        return await eventually_async(lambda: subject.filed.version(user))

    [item] = await put(subject, filed(user, Bucket.IDEAS, 0, people=["Ana"]))
    first = await settled()
    assert await subject.filed.version(user) == first
    await put(subject, filed(f"{user}-other", Bucket.IDEAS, 1))
    assert await settled() == first
    stored = await subject.filed.get(user, Bucket.IDEAS, item.id)
    assert stored is not None
    await subject.filed.replace(stored.model_copy(update={"done": True}))
    edited = await settled()
    assert edited != first
    await subject.repo.delete_filed(user, Bucket.IDEAS, item.id)
    removed = await settled()
    assert removed not in (first, edited)


async def eventually_async(probe: Any) -> Any:
    """Poll the coroutine function `probe` until it answers something truthy (10 s at most)."""
    async with asyncio.timeout(10):
        # Polling a store's answer: there is no event to wait on.
        while not (value := await probe()):  # noqa: ASYNC110
            await asyncio.sleep(0.1)
    return value


async def test_every_reads_the_whole_bucket_in_pages(
    subject: Subject, user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared.adapters import filed_items

    monkeypatch.setattr(filed_items, "EXPORT_PAGE", 3)
    items = await put(subject, *(filed(user, Bucket.IDEAS, n) for n in range(7)))
    got = [i.id async for i in subject.filed.every(user, Bucket.IDEAS)]
    assert got == [i.id for i in reversed(items)]


async def test_search_matches_text_titles_and_answers(subject: Subject, user: str) -> None:
    def capture(n: int, text: str, **fields: Any):
        return text_item(text, user_id=user, created_at=START + timedelta(seconds=n), **fields)

    in_text = capture(0, "Ask the TILER about grout")
    in_title = capture(1, "something", title="Tiler quote")
    answer = [Clarification(run_id="f", text="the tiler, I mean")]
    in_answer = capture(2, "mmm", clarifications=answer)
    deleted = capture(3, "tiler", status=Status.DELETING)
    unrelated = capture(4, "paint the fence")
    for item in (in_text, in_title, in_answer, deleted, unrelated):
        await subject.repo.add(item)
    await subject.repo.add(text_item("tiler", user_id=f"{user}-other"))

    found = await subject.search.search(user, ["tiler"], 10)
    assert not found.ranked
    assert [i.id for i in found.items] == [in_answer.id, in_title.id, in_text.id]
    two = await subject.search.search(user, ["fence", "grout"], 10)
    assert [i.id for i in two.items] == [unrelated.id, in_text.id]
    by_answer = await subject.search.search(user, ["fence", "mean"], 10)  # the 2nd term's answer
    assert [i.id for i in by_answer.items] == [unrelated.id, in_answer.id]
    # Unranked, the newest matches come back beyond `limit`, for the caller to score.
    few = await subject.search.search(user, ["tiler"], 2)
    assert [i.id for i in few.items] == [in_answer.id, in_title.id, in_text.id]
    assert (await subject.search.search(user, ["nothing"], 10)).items == []
