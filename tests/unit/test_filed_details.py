"""The inbox item holds what its filed item holds (people, due date, next action, done): set
when it is settled in a bucket, changed by the user's edits, carried by a move, exported and
read back with the capture; the filed item is made from it alone (issue 39)."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, date, datetime

from shared.domain.classification import Bucket, Classification
from shared.services.bucket_pick import pick_bucket
from shared.services.edit import FiledPatch, edit_filed
from shared.services.export import export_zip
from shared.services.filing import file_capture
from shared.services.placement import converge, filed_item_for
from tests.fakes import USER, Fakes, text_item


async def classified(fakes: Fakes, text: str, bucket: Bucket, title: str):
    item = fakes.repo.seed(text_item(text))
    guess = Classification(bucket=bucket, confidence=0.9, title=title)
    return await file_capture(item, item.classified(guess), fakes.repo, fakes.outbox)


async def test_a_filed_capture_holds_its_filed_items_details(fakes: Fakes) -> None:
    admin = await classified(fakes, "Pay Zoë back on 2026-12-05", Bucket.ADMIN, "Pay Zoë back")
    filed = fakes.repo.filed(USER, admin.id)[Bucket.ADMIN]
    assert (admin.people, admin.due_date, admin.done) == (["Zoë"], date(2026, 12, 5), False)
    assert (filed.people, filed.due_date, filed.done) == (admin.people, admin.due_date, False)
    project = await classified(fakes, "Tile the bathroom", Bucket.PROJECTS, "Tile the bathroom")
    assert project.next_action == "Tile the bathroom" and admin.next_action is None
    # What a client reads of the capture (GET /api/captures/{id}, captures.jsonl).
    wire = admin.to_json()
    assert (wire["people"], wire["dueDate"], wire["nextAction"], wire["done"]) == (
        ["Zoë"], "2026-12-05", None, False,
    )  # fmt: skip


async def test_the_export_says_the_due_date_its_admin_item_has(fakes: Fakes) -> None:
    await classified(fakes, "Renew the passport on 2027-01-15", Bucket.ADMIN, "Renew passport")
    data = b"".join(
        [
            chunk
            async for chunk in export_zip(
                USER, datetime(2026, 12, 1, tzinfo=UTC), fakes.repo, fakes.filed
            )
        ]
    )
    archive = zipfile.ZipFile(io.BytesIO(data))
    (line,) = archive.read("captures.jsonl").decode().splitlines()
    assert json.loads(line)["dueDate"] == "2027-01-15"
    (note,) = [n for n in archive.namelist() if n.startswith("Admin/")]
    assert '\ndue: "2027-01-15"\n' in archive.read(note).decode()


async def test_an_edit_is_in_the_inbox_item_and_a_move_carries_it(fakes: Fakes) -> None:
    item = await classified(fakes, "Tile the bathroom", Bucket.PROJECTS, "Tile the bathroom")
    stored = fakes.repo.filed(USER, item.id)[Bucket.PROJECTS]
    patch = FiledPatch.model_validate(
        {"title": "Blue tiles", "dueDate": "2027-02-01", "nextAction": "Ring Ana", "done": True}
    )
    await edit_filed(USER, item.id, patch, stored.etag, fakes.adapters)
    inbox = fakes.repo.stored(USER, item.id)
    assert inbox is not None
    assert (inbox.title, inbox.due_date, inbox.next_action, inbox.done) == (
        "Blue tiles", date(2027, 2, 1), "Ring Ana", True,
    )  # fmt: skip
    # A crash between the two writes is what the delayed check the edit sent converges.
    assert [j.job.capture_id for j in fakes.queues.jobs_for(item.id)] == [item.id]

    moved = await pick_bucket(USER, item.id, Bucket.ADMIN, fakes.adapters)
    assert (moved.title, moved.due_date, moved.done, moved.next_action) == (
        "Blue tiles", date(2027, 2, 1), True, None,
    )  # fmt: skip
    filed = fakes.repo.filed(USER, item.id)
    assert list(filed) == [Bucket.ADMIN]
    assert (filed[Bucket.ADMIN].title, filed[Bucket.ADMIN].due_date) == (
        "Blue tiles", date(2027, 2, 1),
    )  # fmt: skip


async def test_a_filed_item_behind_its_inbox_item_is_brought_up_to_date(fakes: Fakes) -> None:
    item = await classified(fakes, "Call Ana about the tiles", Bucket.PEOPLE, "Call Ana")
    # As a process that died after saving an edit leaves it: the inbox item ahead.
    fakes.repo.seed(item.edited({"title": "Call Ana today"}))
    await converge(USER, item.id, fakes.repo)
    filed = fakes.repo.filed(USER, item.id)[Bucket.PEOPLE]
    assert (filed.title, filed.follow_up) == ("Call Ana today", "Call Ana today")


async def test_a_capture_filed_before_the_inbox_held_details_keeps_its_edits(
    fakes: Fakes,
) -> None:
    item = await classified(fakes, "Pay the council tax", Bucket.ADMIN, "Council tax")
    # As stored before: the inbox item without the details; the filed item edited by the user
    # (a date), and retitled with the inbox item left behind by a crash.
    legacy = fakes.repo.seed(item.model_copy(update={"done": None, "due_date": None}))
    old = filed_item_for(legacy).model_copy(update={"title": "Tax", "due_date": date(2027, 3, 1)})
    await fakes.repo.put_filed(old)
    await converge(USER, item.id, fakes.repo)  # the delayed check leaves the user's edit alone
    stored = fakes.repo.filed(USER, item.id)[Bucket.ADMIN]
    assert (stored.title, stored.due_date) == ("Tax", date(2027, 3, 1))

    patch = FiledPatch.model_validate({"done": True})
    view = await edit_filed(USER, item.id, patch, stored.etag, fakes.adapters)
    assert (view.title, view.due_date, view.done) == ("Tax", date(2027, 3, 1), True)
    inbox = fakes.repo.stored(USER, item.id)
    assert inbox is not None and inbox.holds_details
    assert (inbox.title, inbox.due_date, inbox.done) == ("Tax", date(2027, 3, 1), True)
