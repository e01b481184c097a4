"""The recall services on the fakes: a bucket's pages and filters, the people list and a
person's page, search's score and snippet, editing a filed item (ETag, merge patch, the inbox
title), the export's zip, and the Azure search query's text."""

from __future__ import annotations

import io
import json
import struct
import unicodedata
import zipfile
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.documents import utcnow
from shared.domain.errors import (
    Conflict,
    Invalid,
    Malformed,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
)
from shared.http.queries import BucketParams
from shared.services.edit import FiledPatch, edit_filed
from shared.services.export import (
    NAME_BYTES,
    VaultNames,
    _entry,
    export_zip,
    markdown,
    safe_name,
    same_name_key,
)
from shared.services.filing import file_capture
from shared.services.recall import (
    BucketQuery,
    PersonQuery,
    SearchQuery,
    bucket_named,
    find_folded,
    get_person,
    list_bucket,
    list_people,
    score,
    search,
    search_terms,
    snippet,
)
from tests.fakes import USER, Fakes, text_item

START = utcnow() - timedelta(days=2)


async def file(fakes: Fakes, text: str, bucket: Bucket, n: int, title: str = "") -> InboxItem:
    """A capture made n minutes after START, filed in `bucket` by the user."""
    item = fakes.repo.seed(text_item(text, created_at=START + timedelta(minutes=n)))
    return await file_capture(
        item, item.picked(bucket, title or text[:30]), fakes.repo, fakes.outbox
    )


def query(**params: Any) -> BucketQuery:
    """The query as GET /api/buckets/{bucket}'s parameters give it."""
    return BucketParams.model_validate(params).query()


async def test_a_bucket_pages_newest_first_to_the_end(fakes: Fakes) -> None:
    made = [await file(fakes, f"idea {n}", Bucket.IDEAS, n) for n in range(5)]
    await file(fakes, "not an idea", Bucket.ADMIN, 9)
    seen, token = [], None
    while True:
        page = await list_bucket(
            USER, Bucket.IDEAS, query(limit="2", continuationToken=token), fakes.filed
        )
        seen += [i.id for i in page.items]
        token = page.continuation_token
        if token is None:
            break
    assert seen == [i.id for i in reversed(made)]
    assert page.bucket is Bucket.IDEAS and page.items[0].etag


async def test_admin_by_due_date_and_the_filters(fakes: Fakes) -> None:
    await file(fakes, "pay rent on the 1st of March", Bucket.ADMIN, 0)
    await file(fakes, "renew passport", Bucket.ADMIN, 1)
    await file(fakes, "ask Zoë about the MOT tomorrow", Bucket.ADMIN, 2)
    page = await list_bucket(USER, Bucket.ADMIN, query(), fakes.filed)
    assert [i.text[:5] for i in page.items] == ["ask Z", "pay r", "renew"]
    assert page.items[0].people == ["Zoë"] and page.items[0].due_date is not None
    zoe = await list_bucket(USER, Bucket.ADMIN, query(person="ZOE"), fakes.filed)
    assert [i.people for i in zoe.items] == [["Zoë"]]
    soon = utcnow().date() + timedelta(days=2)
    due = await list_bucket(USER, Bucket.ADMIN, query(dueBefore=soon.isoformat()), fakes.filed)
    assert [i.text[:5] for i in due.items] == ["ask Z"]
    assert (await list_bucket(USER, Bucket.ADMIN, query(done="true"), fakes.filed)).items == []


@pytest.mark.parametrize(
    "params",
    [{"limit": "0"}, {"limit": "101"}, {"limit": "5.0"}, {"done": "yes"},
     {"dueBefore": "2026-02-31"}, {"dueBefore": "1700000000"}, {"person": "x" * 101}],
)  # fmt: skip
def test_bad_bucket_queries_are_refused(params: dict) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        query(**params)


async def test_a_token_that_is_not_ours_is_malformed(fakes: Fakes) -> None:
    for token in ("%%%", "bm90IG91cnM", "AA"):
        with pytest.raises(Malformed):
            await list_bucket(USER, Bucket.IDEAS, query(continuationToken=token), fakes.filed)


def test_bucket_names() -> None:
    assert bucket_named("admin") is Bucket.ADMIN
    with pytest.raises(NotFound) as refused:
        bucket_named("Admin")
    assert refused.value.code == "NO_SUCH_BUCKET"


async def test_people_are_counted_however_they_are_written(fakes: Fakes) -> None:
    await file(fakes, "Zoë's birthday", Bucket.PEOPLE, 0)
    await file(fakes, "lunch with Zoë and Tom", Bucket.PEOPLE, 1)
    done = await file(fakes, "ask zoe about it, call Zoe", Bucket.PROJECTS, 2)
    stored = await fakes.filed.get(USER, Bucket.PROJECTS, done.id)
    assert stored is not None
    await fakes.filed.replace(stored.model_copy(update={"done": True, "people": ["Zoe"]}))
    listed = (await list_people(USER, fakes.filed)).people
    assert [(p.name, p.mentions, p.open_items) for p in listed] == [("Zoë", 3, 2), ("Tom", 1, 1)]
    assert listed[0].last_mentioned_at == START + timedelta(minutes=2)

    page = await get_person(USER, "ZOE", PersonQuery(), fakes.filed)
    assert page.name == "Zoë" and len(page.items) == 3
    assert page.items[0].id == done.id  # newest first, all buckets
    with pytest.raises(NotFound) as refused:
        await get_person(USER, "Nobody", PersonQuery(), fakes.filed)
    assert refused.value.code == "NO_SUCH_PERSON"
    with pytest.raises(NotFound):
        await get_person("someone-else", "Zoë", PersonQuery(), fakes.filed)


async def test_the_people_list_is_made_again_only_when_the_items_changed(fakes: Fakes) -> None:
    await file(fakes, "lunch with Zoë", Bucket.PEOPLE, 0)
    first = await list_people(USER, fakes.filed)
    read: list[bool] = []
    fakes.filed.before_next("mentions", lambda: read.append(True))
    # Nothing changed: the list made before, the mentions not read again.
    assert await list_people(USER, fakes.filed) is first
    assert fakes.filed.armed == ["mentions"] and read == []
    # A new item changes the version: made again.
    await file(fakes, "call Tom", Bucket.PEOPLE, 1)
    again = await list_people(USER, fakes.filed)
    assert read == [True] and [p.name for p in again.people] == ["Tom", "Zoë"]
    # Another user's list is their own.
    assert (await list_people("someone-else", fakes.filed)).people == []


async def test_a_person_pages_through_every_item_ties_included(fakes: Fakes) -> None:
    # Seven items naming Ana across the buckets, three of them at one instant: pages of two
    # give each item once, newest first, however the ties fall on the page boundaries.
    minutes = [0, 1, 1, 1, 2, 3, 4]
    buckets = [Bucket.ADMIN, Bucket.PEOPLE, Bucket.PROJECTS, Bucket.IDEAS]
    made = [
        await file(fakes, f"ask Ana about {n}", buckets[n % 4], m) for n, m in enumerate(minutes)
    ]
    await file(fakes, "ask Tom about it", Bucket.ADMIN, 5)
    seen, token = [], None
    while True:
        page = await get_person(
            USER, "ana", PersonQuery(limit=2, continuation_token=token), fakes.filed
        )
        assert len(page.items) <= 2 and page.name == "Ana"
        seen += [i.id for i in page.items]
        token = page.continuation_token
        if token is None:
            break
    assert sorted(seen) == sorted(i.id for i in made) and len(seen) == len(set(seen))
    created = [next(i.created_at for i in made if i.id == s) for s in seen]
    assert created == sorted(created, reverse=True)
    with pytest.raises(Malformed) as refused:
        await get_person(
            USER, "ana", PersonQuery(continuation_token="bm90LWEtZGF0ZXxh"), fakes.filed
        )
    assert refused.value.code == "BAD_TOKEN"


async def test_a_search_hit_carries_whom_the_capture_names_and_its_due_date(fakes: Fakes) -> None:
    # The answerer weighs a hit by them without reading each capture again.
    filed = await file(fakes, "Chase Priya for the tiler's quote by Friday", Bucket.ADMIN, 0)
    (hit,) = (await search(USER, SearchQuery(q="tiler quote"), fakes.search)).items
    assert hit.id == filed.id and hit.people == ["Priya"]
    assert filed.due_date is not None and hit.due_date == filed.due_date
    assert hit.to_json()["dueDate"] == filed.due_date.isoformat()


async def test_search_scores_titles_and_cuts_a_snippet(fakes: Fakes) -> None:
    words = "word " * 40
    await file(fakes, f"{words}then the tiler came back {words}", Bucket.PROJECTS, 0, "Bathroom")
    titled = await file(fakes, "quote for the bathroom", Bucket.PROJECTS, 1, "Tiler quote")
    results = await search(USER, SearchQuery(q="Tiler"), fakes.search)
    assert results.items[0].id == titled.id  # the title counts more
    hit = results.items[1]
    assert "tiler came back" in hit.snippet and hit.snippet.startswith("…")
    assert len(hit.snippet) < 200 and hit.bucket is Bucket.PROJECTS
    assert results.items[0].score > hit.score > 0
    assert search_terms("The tiler's QUOTE, the") == ["the", "tiler", "s", "quote"]
    assert search_terms("??") == ["??"]
    assert snippet(["no match here"], ["zzz"]) == "no match here"


@pytest.mark.parametrize(
    "before",
    [
        "İ" * 60,  # one character, two lowercased or folded
        "ß" * 60,  # one character, two folded
        "ﬁ" * 60,  # a ligature, two folded
        "ΐ" * 60,  # one character, three folded
        "İß ﬁ ŉ ǰ " * 30,
    ],
)
def test_a_snippet_is_cut_around_the_match_whatever_folding_does_to_lengths(before: str) -> None:
    text = f"{before} then the tiler came back with a quote"
    cut = snippet([text], ["tiler"])
    assert "the tiler came back" in cut and cut.startswith("…")
    assert len(cut) < 200


@pytest.mark.parametrize(
    ("text", "term", "at"),
    [
        ("İİİ tiler", "tiler", 4),
        ("STRASSE Straße", "straße", 0),  # folded, "straße" is "strasse": the first matches
        ("a ﬁle", "file", 2),
        ("ΌΣΟΣ", "όσος", 0),
        ("abc", "zzz", None),
        ("", "a", None),
    ],
)
def test_a_folded_match_is_an_offset_into_the_text_as_written(
    text: str, term: str, at: int | None
) -> None:
    assert find_folded(text, term) == at


def test_a_match_after_many_dotted_capitals_is_scored_and_cut() -> None:
    text = "İ" * 200 + " tiler " + "İ" * 200
    assert score("", [text], ["tiler"], "tiler") == 1.0
    assert snippet(["", text], ["tiler"]).count("tiler") == 1


async def test_search_is_the_callers_only(fakes: Fakes) -> None:
    await file(fakes, "the tiler", Bucket.PROJECTS, 0)
    assert (await search("someone-else", SearchQuery(q="tiler"), fakes.search)).items == []


async def filed_view(fakes: Fakes, bucket: Bucket = Bucket.PROJECTS):
    item = await file(fakes, "ask Ottilie for the tiler's number", bucket, 0, "Tiler")
    stored = await fakes.filed.get(USER, bucket, item.id)
    assert stored is not None
    return item, stored


def patch(**fields: Any) -> FiledPatch:
    return FiledPatch.model_validate(fields)


async def test_edit_applies_a_merge_patch_and_renames_the_inbox_item(fakes: Fakes) -> None:
    item, stored = await filed_view(fakes)
    change = patch(title=" New  title ", dueDate="2027-01-02", nextAction="Call", done=True)
    view = await edit_filed(USER, item.id, change, stored.etag, fakes.adapters)
    assert (view.title, view.due_date, view.next_action, view.done) == (
        "New title", date(2027, 1, 2), "Call", True,
    )  # fmt: skip
    assert view.etag != stored.etag and view.people == ["Ottilie"]
    inbox = fakes.repo.stored(USER, item.id)
    assert inbox is not None and inbox.title == "New title"
    assert inbox.updated_at == item.updated_at and inbox.status == item.status
    # null clears a date; quotes around the ETag or not, it is the same one
    cleared = await edit_filed(
        USER, item.id, patch(dueDate=None), view.etag.strip('"'), fakes.adapters
    )
    assert cleared.due_date is None and cleared.title == "New title"


async def test_edit_needs_the_current_etag(fakes: Fakes) -> None:
    item, stored = await filed_view(fakes)
    await edit_filed(USER, item.id, patch(done=True), stored.etag, fakes.adapters)
    with pytest.raises(PreconditionFailed) as stale:
        await edit_filed(USER, item.id, patch(done=False), stored.etag, fakes.adapters)
    assert stale.value.code == "PRECONDITION_FAILED"
    with pytest.raises(PreconditionRequired):
        await edit_filed(USER, item.id, patch(done=False), None, fakes.adapters)
    # Someone else's edit saves between our read and our save: 412 too, nothing of ours lands.
    current = await fakes.filed.get(USER, Bucket.PROJECTS, item.id)
    assert current is not None

    async def concurrent() -> None:
        await edit_filed(USER, item.id, patch(title="theirs"), current.etag, fakes.adapters)

    fakes.repo.before_next("save", concurrent)
    with pytest.raises(PreconditionFailed):
        await edit_filed(USER, item.id, patch(title="mine"), current.etag, fakes.adapters)
    after = await fakes.filed.get(USER, Bucket.PROJECTS, item.id)
    assert after is not None and after.title == "theirs"
    inbox = fakes.repo.stored(USER, item.id)
    assert inbox is not None and inbox.title == "theirs"


async def test_the_edit_is_retried_over_a_concurrent_save(fakes: Fakes) -> None:
    item, stored = await filed_view(fakes)

    def someone_saves() -> None:
        current = fakes.repo.stored(USER, item.id)
        assert current is not None
        fakes.repo.seed(current.shown_live())  # a new ETag under our feet

    fakes.repo.before_next("save", someone_saves)
    await edit_filed(USER, item.id, patch(title="Renamed"), stored.etag, fakes.adapters)
    inbox = fakes.repo.stored(USER, item.id)
    assert inbox is not None and inbox.title == "Renamed" and inbox.outcome_shown_at is not None
    filed = await fakes.filed.get(USER, Bucket.PROJECTS, item.id)
    assert filed is not None and filed.title == "Renamed"


async def test_what_cannot_be_edited(fakes: Fakes) -> None:
    item, stored = await filed_view(fakes, Bucket.IDEAS)
    for bad, code in ((patch(nextAction="x"), "NOT_A_PROJECT"),
                      (patch(title="   "), "INVALID_PATCH")):  # fmt: skip
        with pytest.raises(Invalid) as refused:
            await edit_filed(USER, item.id, bad, stored.etag, fakes.adapters)
        assert refused.value.code == code
    unfiled = fakes.repo.seed(text_item("not filed yet"))
    with pytest.raises(Conflict) as not_filed:
        await edit_filed(USER, unfiled.id, patch(done=True), "x", fakes.adapters)
    assert not_filed.value.code == "NOT_FILED"
    with pytest.raises(NotFound):
        await edit_filed("someone-else", item.id, patch(done=True), stored.etag, fakes.adapters)
    # Cannot be removed (title, done), not ours, not the type, not a day: 422 before any read.
    for wrong in ({"unknown": 1}, {"done": "true"}, {"title": ""}, {"dueDate": "tomorrow"},
                  {"dueDate": "2026-02-30"}, {"dueDate": 1700000000},
                  {"title": None}, {"done": None}):  # fmt: skip
        from pydantic import ValidationError

        with pytest.raises(ValidationError):
            FiledPatch.model_validate(wrong)


async def test_the_export_is_a_vault_and_the_inbox(fakes: Fakes) -> None:
    await file(fakes, "Call Zoë re: the [budget]?", Bucket.PEOPLE, 0, "Call Zoë re: [budget]?")
    await file(fakes, "again", Bucket.PEOPLE, 1, "Call Zoë re: [budget]?")
    await file(fakes, "due friday", Bucket.ADMIN, 2, ".hidden")
    fakes.repo.seed(text_item("still waiting"))
    fakes.repo.seed(text_item("someone else's", user_id="other"))
    now = datetime(2026, 5, 6, 7, 8, 10, tzinfo=UTC)
    data = b"".join([chunk async for chunk in export_zip(USER, now, fakes.repo, fakes.filed)])
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    created = START + timedelta(minutes=2)
    *minutes, seconds = created.timetuple()[:6]
    # MS-DOS times count two seconds at a time.
    assert archive.getinfo("Admin/hidden.md").date_time == (*minutes, seconds // 2 * 2)
    assert archive.getinfo("captures.jsonl").date_time == (2026, 5, 6, 7, 8, 10)
    names = sorted(archive.namelist())
    assert names == [
        "Admin/hidden.md",
        "People/Call Zoë re budget (2).md",
        "People/Call Zoë re budget.md",
        "captures.jsonl",
    ]
    note = archive.read("Admin/hidden.md").decode()
    assert note.startswith("---\nid: ") and '\nbucket: "Admin"\n' in note
    assert (
        '\ndue: "20' in note and "\ndone: false\n" in note and "\n# .hidden\n\ndue friday\n" in note
    )
    lines = archive.read("captures.jsonl").decode().splitlines()
    assert sorted(json.loads(line)["text"] for line in lines) == [
        "Call Zoë re: the [budget]?", "again", "due friday", "still waiting",
    ]  # fmt: skip


def test_a_zip_entry_carries_its_exact_time_in_the_extended_timestamp() -> None:
    when = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
    info = _entry("x.md", when)
    assert info.date_time == (2026, 5, 6, 7, 8, 9)
    assert info.extra == struct.pack("<HHBI", 0x5455, 5, 1, int(when.timestamp()))
    assert _entry("old.md", datetime(1970, 1, 2, tzinfo=UTC)).date_time == (1980, 1, 1, 0, 0, 0)


def item_titled(title: str, item_id: str = "id-1") -> Any:
    return type("I", (), {"title": title, "id": item_id})


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Zoe\u0308", "Zoë"),  # "e" and a combining diaeresis: one character, as macOS stores it
        ("con", "_con"),
        ("COM1", "_COM1"),
        ("nul.txt", "_nul.txt"),
        ("Lpt\u00b9", "_Lpt\u00b9"),
        ("aux . ", "_aux"),
        ("Console", "Console"),
        ("com10", "com10"),
        ("invoice\u202egpj.exe", "invoicegpj.exe"),  # a right-to-left override
        ("\u2066left\u2069 \u200fright\u200e", "left right"),  # isolates, marks
        ("zero\u200bwidth\ufeff\u00adsoft", "zerowidthsoft"),
        ("two\u2028lines\u2029here", "two lines here"),
        ("trailing dots...", "trailing dots"),
        ("\U0001f600" * 100, "\U0001f600" * 50),  # 200 bytes of UTF-8
        # The cut falls between a letter and its accent: never a letter without it.
        ("x" * 99 + "e\u0308\u0323", "x" * 99),
    ],
)
def test_a_vault_name_is_one_every_system_creates_as_written(title: str, name: str) -> None:
    made = safe_name(title)
    assert made == name
    assert len(made.encode()) <= NAME_BYTES and unicodedata.is_normalized("NFC", made)


def test_names_that_one_file_system_or_another_takes_for_one_are_made_unique() -> None:
    names = VaultNames()
    titles = ["Zoë", "Zoe\u0308", "ZOË", "zoe\u0308", "Zoe"]
    made = [names.name_for(item_titled(t)) for t in titles]
    assert made == ["Zoë", "Zoë (2)", "ZOË (3)", "zoë (4)", "Zoe"]
    assert len({same_name_key(n) for n in made}) == len(made)
    assert all(unicodedata.is_normalized("NFC", n) for n in made)


def test_vault_names() -> None:
    assert safe_name('a/b\\c:d*e?f"g<h>i|j#k^l[m]n') == "a b c d e f g h i j k l m n"
    assert safe_name("..  .env") == "env" and safe_name("x" * 300) == "x" * 100
    names = VaultNames()
    item = type("I", (), {"title": "Same", "id": "1"})
    assert [names.name_for(item) for _ in range(3)] == ["Same", "Same (2)", "Same (3)"]  # type: ignore[arg-type]  # a stand-in
    long = type("I", (), {"title": "y" * 150, "id": "2"})
    assert len(names.name_for(long)) == 100 and len(names.name_for(long)) == 100  # type: ignore[arg-type]  # a stand-in
    assert markdown  # used above


def test_the_azure_search_query() -> None:
    from shared.adapters.search import contains_query, full_text_query

    text, parameters = full_text_query("u1", ["tiler", "quote"], 100)
    assert text == (
        "SELECT TOP 100 * FROM c WHERE c.userId = @user AND c.status != @deleting AND ("
        "FullTextContainsAny(c.text, @t0, @t1) OR FullTextContainsAny(c.title, @t0, @t1) OR "
        "EXISTS(SELECT VALUE a FROM a IN c.clarifications WHERE CONTAINS(a.text, @t0, true) OR "
        "CONTAINS(a.text, @t1, true))) "
        "ORDER BY RANK RRF(FullTextScore(c.text, @t0, @t1), FullTextScore(c.title, @t0, @t1))"
    )
    assert {p["name"]: p["value"] for p in parameters} == {
        "@user": "u1", "@deleting": "deleting", "@t0": "tiler", "@t1": "quote",
    }  # fmt: skip
    local, _ = contains_query("u1", ["tiler"], 5)
    assert "FullText" not in local and "ORDER BY c.createdAt DESC" in local
