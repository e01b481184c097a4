"""What the services may rely on from a `CaptureRepository`, checked on both implementations:
the in-memory fake of tests/fakes.py (marked unit too: it needs no emulator) and
`CosmosCaptureRepository` on the local Cosmos server. The same assertions pass on both, so the
unit tests' fake is honest."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any, Protocol

import pytest

from shared.adapters import repository
from shared.domain.capture import Clarification, InboxItem, Status
from shared.domain.classification import Bucket, Classification
from shared.domain.documents import utc_text, utcnow
from shared.domain.errors import StaleItem
from shared.domain.filed import IdeaItem, PersonItem
from shared.domain.ports import CaptureRepository
from tests import fakes
from tests.fakes import FakeCaptureRepository, new_id, text_item


class Subject(Protocol):
    repo: CaptureRepository

    def filed(self, user_id: str, bucket: Bucket, capture_id: str) -> dict[str, Any] | None:
        """The stored document of a filed item, or None."""
        ...


class OnFake:
    def __init__(self) -> None:
        self.repo = FakeCaptureRepository()

    def filed(self, user_id: str, bucket: Bucket, capture_id: str) -> dict[str, Any] | None:
        item = self.repo.filed(user_id, capture_id).get(bucket)
        return item.to_json() if item else None


class OnCosmos:
    def __init__(self, database) -> None:
        from shared import bootstrap
        from shared.adapters.repository import CosmosCaptureRepository

        self.repo = CosmosCaptureRepository(bootstrap.root().clients.cosmos_database())
        self._database = database  # a sync client, for looking at what was stored

    def filed(self, user_id: str, bucket: Bucket, capture_id: str) -> dict[str, Any] | None:
        from azure.cosmos.exceptions import CosmosResourceNotFoundError

        container = self._database.get_container_client(bucket.value)
        try:
            return container.read_item(capture_id, partition_key=user_id)
        except CosmosResourceNotFoundError:
            return None


@pytest.fixture
async def subject(backend: Any) -> AsyncIterator[Subject]:
    if backend is None:
        yield OnFake()
        return
    from shared.bootstrap import reset

    yield OnCosmos(backend)
    await reset()


@pytest.fixture
def user() -> str:
    """A user of this test alone: the Cosmos database is shared by the whole session."""
    return f"contract-{new_id()}"


def same_content(a: InboxItem, b: InboxItem) -> bool:
    return a.to_json() == b.to_json()


async def listed(
    repo: CaptureRepository,
    user: str,
    at_or_before: str | None = None,
    status: Status | None = None,
) -> list[str]:
    return [i.id async for i in repo.newest(user, at_or_before=at_or_before, status=status)]


async def test_add_stores_a_new_item_with_an_etag(subject: Subject, user: str) -> None:
    item = text_item(user_id=user, clarifications=[Clarification(run_id="f1", text="more")])
    stored, created = await subject.repo.add(item)
    assert created is True
    assert stored.etag and same_content(stored, item)
    got = await subject.repo.get(user, item.id)
    assert got is not None and got.etag == stored.etag and same_content(got, item)


async def test_what_an_add_returns_is_what_a_read_finds(subject, user) -> None:
    # The Cosmos adapter answers a new item's add from what it sent and the ETag it got back
    # (the document is not echoed): whole, the vector and its key too.
    item = text_item(user_id=user).embedded([0.25, -0.5, 0.125], "model:key")
    added, created = await subject.repo.add(item)
    got = await subject.repo.get(user, item.id)
    assert created is True and got is not None and added == got
    assert added.embedding == [0.25, -0.5, 0.125] and added.embedded_from == "model:key"


async def test_adding_an_id_twice_returns_the_first_item_unchanged(subject, user) -> None:
    first, _ = await subject.repo.add(text_item("the first", user_id=user))
    again, created = await subject.repo.add(text_item("the second", id=first.id, user_id=user))
    assert created is False
    assert again.text == "the first" and again.etag == first.etag
    stored = await subject.repo.get(user, first.id)
    assert stored is not None and stored.text == "the first"


async def test_ids_are_per_user(subject, user) -> None:
    other = f"{user}-other"
    mine, _ = await subject.repo.add(text_item("mine", user_id=user))
    theirs, created = await subject.repo.add(text_item("theirs", id=mine.id, user_id=other))
    assert created is True and theirs.text == "theirs"
    got = await subject.repo.get(user, mine.id)
    assert got is not None and got.text == "mine"
    await subject.repo.remove(other, mine.id)
    assert await subject.repo.get(user, mine.id) is not None


async def test_get_of_a_missing_item_is_none(subject, user) -> None:
    assert await subject.repo.get(user, new_id()) is None


async def test_every_read_is_a_copy(subject, user) -> None:
    item = text_item("as stored", user_id=user)
    added, _ = await subject.repo.add(item)
    got = await subject.repo.get(user, item.id)
    assert got is not None
    for copy in (item, added, got):  # neither what was passed in, nor what came back
        copy.text = "changed"
        copy.clarifications.append(Clarification(run_id="x", text="y"))
    again = await subject.repo.get(user, item.id)
    assert again is not None and again.text == "as stored" and again.clarifications == []


async def test_save_replaces_the_item_and_gives_it_a_new_etag(subject, user) -> None:
    stored, _ = await subject.repo.add(text_item(user_id=user))
    saved = await subject.repo.save(stored.model_copy(update={"status": Status.QUEUED}))
    assert saved.status is Status.QUEUED
    assert saved.etag and saved.etag != stored.etag
    got = await subject.repo.get(user, stored.id)
    assert got is not None and got.status is Status.QUEUED and got.etag == saved.etag


async def test_what_a_save_returns_is_what_a_read_finds(subject, user) -> None:
    # The Cosmos adapter answers a save from what it sent and the ETag it got back: whole
    # (the vector and its key too), as a read of it finds it.
    stored, _ = await subject.repo.add(text_item(user_id=user))
    guess = Classification(bucket=Bucket.PEOPLE, confidence=0.9, title="Call Sarah")
    settled = stored.classified(guess).embedded([0.25, -0.5, 0.125], "model:key")
    saved = await subject.repo.save(settled)
    got = await subject.repo.get(user, stored.id)
    assert got is not None and saved == got
    assert saved.embedding == [0.25, -0.5, 0.125] and saved.embedded_from == "model:key"


async def test_save_over_a_stale_etag_raises_stale_item_and_changes_nothing(subject, user) -> None:
    stored, _ = await subject.repo.add(text_item(user_id=user))
    await subject.repo.save(stored.model_copy(update={"status": Status.QUEUED}))
    with pytest.raises(StaleItem):
        await subject.repo.save(stored.model_copy(update={"status": Status.FILED}))
    got = await subject.repo.get(user, stored.id)
    assert got is not None and got.status is Status.QUEUED


async def test_save_after_remove_raises_stale_item_and_does_not_recreate(subject, user) -> None:
    stored, _ = await subject.repo.add(text_item(user_id=user))
    await subject.repo.remove(user, stored.id)
    with pytest.raises(StaleItem):
        await subject.repo.save(stored)
    with pytest.raises(StaleItem):  # without an ETag too: there is nothing to replace
        await subject.repo.save(stored.model_copy(update={"etag": None}))
    assert await subject.repo.get(user, stored.id) is None


async def test_save_without_an_etag_replaces_whatever_is_stored(subject, user) -> None:
    stored, _ = await subject.repo.add(text_item(user_id=user))
    await subject.repo.save(stored.model_copy(update={"status": Status.QUEUED}))
    blind = stored.model_copy(update={"etag": None, "status": Status.FAILED})
    saved = await subject.repo.save(blind)
    assert saved.status is Status.FAILED and saved.etag


async def test_newest_lists_newest_first_with_its_filters(subject, user) -> None:
    start = utcnow() - timedelta(hours=1)
    statuses = [Status.FILED, Status.QUEUED, Status.FILED, Status.DELETING, Status.FILED]
    items = [
        text_item(f"n{n}", user_id=user, status=s, created_at=start + timedelta(seconds=n))
        for n, s in enumerate(statuses)
    ]
    for item in [items[2], items[0], items[4], items[1], items[3]]:  # stored out of order
        await subject.repo.add(item)
    await subject.repo.add(text_item("another user's", user_id=f"{user}-other"))
    ids = [i.id for i in items]

    assert await listed(subject.repo, user) == ids[::-1]  # tombstones included: callers judge
    in_pages = subject.repo.newest(user, at_or_before=None, status=None, page_items=2)
    assert [i.id async for i in in_pages] == ids[::-1]  # read two at a time, all the same
    cut = utc_text(items[2].created_at)  # the bound is inclusive
    assert await listed(subject.repo, user, at_or_before=cut) == [ids[2], ids[1], ids[0]]
    assert await listed(subject.repo, user, status=Status.FILED) == [ids[4], ids[2], ids[0]]
    both = await listed(subject.repo, user, at_or_before=cut, status=Status.FILED)
    assert both == [ids[2], ids[0]]
    assert await listed(subject.repo, f"{user}-nobody") == []


async def test_newest_reads_whole_items(subject, user) -> None:
    item = text_item(user_id=user, clarifications=[Clarification(run_id="f", text="answer")])
    stored, _ = await subject.repo.add(item)
    (found,) = [i async for i in subject.repo.newest(user, at_or_before=None, status=None)]
    assert same_content(found, item) and found.etag == stored.etag


async def test_remove_is_idempotent_and_the_id_can_be_used_again(subject, user) -> None:
    stored, _ = await subject.repo.add(text_item("old", user_id=user))
    await subject.repo.remove(user, stored.id)
    await subject.repo.remove(user, stored.id)
    await subject.repo.remove(user, new_id())  # never there
    assert await subject.repo.get(user, stored.id) is None
    again, created = await subject.repo.add(text_item("new", id=stored.id, user_id=user))
    assert created is True and again.text == "new"


async def test_filed_items_are_upserted_and_deleted_idempotently(subject, user) -> None:
    capture_id = new_id()
    person = PersonItem(
        id=capture_id, user_id=user, inbox_item_id=capture_id, title="Sarah", text="x", confidence=1
    )
    await subject.repo.put_filed(person)
    await subject.repo.put_filed(person.model_copy(update={"title": "Call Sarah"}))  # upsert
    stored = subject.filed(user, Bucket.PEOPLE, capture_id)
    assert stored is not None and stored["title"] == "Call Sarah"
    assert stored["inboxItemId"] == capture_id and stored["bucket"] == "People"
    idea = IdeaItem(
        id=capture_id, user_id=user, inbox_item_id=capture_id, title="I", text="x", confidence=1
    )
    await subject.repo.put_filed(idea)  # the same id in another bucket is another item

    await subject.repo.delete_filed(user, Bucket.PEOPLE, capture_id)
    await subject.repo.delete_filed(user, Bucket.PEOPLE, capture_id)
    await subject.repo.delete_filed(user, Bucket.ADMIN, capture_id)  # never there
    await subject.repo.delete_filed(f"{user}-other", Bucket.IDEAS, capture_id)  # not theirs
    assert subject.filed(user, Bucket.PEOPLE, capture_id) is None
    assert subject.filed(user, Bucket.IDEAS, capture_id) is not None


async def test_on_thread_finds_the_users_captures_of_that_thread_only(
    subject: Subject, user: str
) -> None:
    mine = [text_item(user_id=user, thread_id="t-shared") for _ in range(2)]
    for item in [*mine, text_item(user_id=user, thread_id="t-other")]:
        await subject.repo.add(item)
    await subject.repo.add(text_item(user_id=f"{user}-else", thread_id="t-shared"))
    found = await subject.repo.on_thread(user, "t-shared")
    assert sorted(i.id for i in found) == sorted(i.id for i in mine)
    assert await subject.repo.on_thread(user, "t-none") == []


async def test_a_document_cosmos_cannot_read_is_left_out_of_lists(cosmos, user: str) -> None:
    """Cosmos only: a stored document the app cannot read (an old or hand-made one) leaves the
    user's inbox list and thread readable rather than failing them."""
    from shared import bootstrap
    from shared.adapters.repository import CosmosCaptureRepository
    from shared.bootstrap import reset

    repo = CosmosCaptureRepository(bootstrap.root().clients.cosmos_database())
    good = text_item(user_id=user, thread_id="t-broken")
    await repo.add(good)
    broken = {"id": new_id(), "userId": user, "threadId": "t-broken", "status": "no-such-status"}
    cosmos.get_container_client("Inbox").create_item(broken)
    try:
        assert await listed(repo, user) == [good.id]
        assert [i.id for i in await repo.on_thread(user, "t-broken")] == [good.id]
    finally:
        await reset()


async def test_known_people_are_the_cued_names_of_the_users_filed_items(
    subject, user, monkeypatch: pytest.MonkeyPatch
) -> None:
    def filed(model, text: str, people: list[str], owner: str = user):
        capture_id = new_id()
        return model(
            id=capture_id,
            user_id=owner,
            inbox_item_id=capture_id,
            title="t",
            text=text,
            confidence=1,
            people=people,
        )

    assert await subject.repo.known_people(user) == frozenset()
    harj = filed(PersonItem, "Harj says the board paper slips", ["Harj"])
    await subject.repo.put_filed(harj)
    await subject.repo.put_filed(filed(IdeaItem, "ring nana elsie re the quiz", ["Nana Elsie"]))
    # Said with no person's cue, and another user's: neither is this user's known person.
    await subject.repo.put_filed(filed(IdeaItem, "Currys rang: the part's in", ["Currys"]))
    await subject.repo.put_filed(filed(PersonItem, "ask Priya", ["Priya"], f"{user}-other"))
    stored = subject.filed(user, Bucket.PEOPLE, harj.id)
    assert stored is not None and stored["peopleKnown"] == ["Harj"]
    assert await subject.repo.known_people(user) == frozenset({"Harj", "Elsie"})
    # Only a bucket's newest items that hold any are read: bounded however much is filed.
    later = filed(PersonItem, "met Tomasz for a coffee", ["Tomasz"])
    later = later.model_copy(update={"created_at": harj.created_at + timedelta(minutes=1)})
    await subject.repo.put_filed(later)
    monkeypatch.setattr(repository, "KNOWN_FROM_LATEST", 1)
    monkeypatch.setattr(fakes, "KNOWN_FROM_LATEST", 1)
    assert await subject.repo.known_people(user) == frozenset({"Tomasz", "Elsie"})
