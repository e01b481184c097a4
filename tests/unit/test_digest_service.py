"""The digest on the fakes, on a fixed clock: preferences, what a day's digest and a week's
review hold, the timer's jobs, and one push per device per local day whatever happens: a rerun
of the timer, a duplicate message, two workers at once, a crash between the record and the
push or between two devices."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, date, datetime, timedelta

import pytest

from shared.domain.capture import Status
from shared.domain.classification import Bucket
from shared.domain.digest import (
    CLAIM,
    FIRST_DAY,
    LAST_DAY,
    SECTION_ITEMS,
    DigestJob,
    digest_key,
    digest_note,
    record_id,
)
from shared.domain.errors import Invalid, PushUnavailable, StorageUnavailable
from shared.domain.filed import AdminItem, IdeaItem, PersonItem, ProjectItem
from shared.domain.push import Delivery, PushKeys, PushSubscription
from shared.http.requests import parse_preferences
from shared.services.digest import (
    day_digest,
    enqueue_due_digests,
    get_preferences,
    put_preferences,
    send_digest,
    week_of,
    week_review,
)
from tests.fakes import USER, DigestFakes, Fakes, ScriptedSummarizer, new_id, text_item

# Sunday 29 March 2026, the morning the clocks go forward in London.
DAY = date(2026, 3, 29)
BEFORE = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
AT = datetime(2026, 3, 29, 6, 30, tzinfo=UTC)  # 07:30 BST
LATER = AT + timedelta(minutes=7)


class Crash(BaseException):
    """The process dies here: nothing after it runs, not even a handler's clean-up."""


@pytest.fixture
def digest() -> DigestFakes:
    return DigestFakes()


async def set_up(fakes: DigestFakes, user: str = USER, **prefs: object) -> None:
    # As a client's PUT would: the body through its parser, the defaults filled in.
    body = {"timeZone": "Europe/London", "digestAt": "07:30", **prefs}
    wanted = parse_preferences(json.dumps(body).encode(), "application/json")
    await put_preferences(user, wanted, BEFORE, fakes.preferences)


def device(fakes: Fakes, user: str = USER, name: str | None = None) -> PushSubscription:
    endpoint = f"https://fcm.googleapis.com/fcm/send/{name or new_id()}"
    return fakes.subscriptions.seed(
        PushSubscription(
            id=new_id().replace("-", ""),
            user_id=user,
            endpoint=endpoint,
            keys=PushKeys(p256dh="k", auth="a"),
        )
    )


async def admin(fakes: Fakes, title: str, due: date | None, *, done: bool = False, user=USER):
    await fakes.repo.put_filed(
        AdminItem(
            id=new_id(),
            user_id=user,
            inbox_item_id="x",
            title=title,
            text=title,
            confidence=1,
            due_date=due,
            done=done,
            created_at=AT - timedelta(days=3),
        )
    )


async def test_without_preferences_a_user_gets_the_defaults_and_no_digest(
    fakes: Fakes, digest: DigestFakes
) -> None:
    prefs = await get_preferences(USER, digest.preferences)
    assert prefs.digest is False and prefs.etag is None and prefs.time_zone == "UTC"
    assert await enqueue_due_digests(AT, digest.adapters) == 0


@pytest.mark.parametrize("name", ["Mars/Olympus", "../../etc/passwd", "localtime", "europe/london"])
async def test_a_zone_the_tz_database_does_not_have_is_refused(
    digest: DigestFakes, name: str
) -> None:
    with pytest.raises(Invalid) as refused:
        await set_up(digest, timeZone=name)
    assert refused.value.code == "UNKNOWN_TIME_ZONE"
    assert digest.preferences.stored(USER) is None


async def test_the_digest_holds_due_and_overdue_questions_actions_follow_ups_and_yesterday(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    await admin(fakes, "Renew passport", DAY)
    await admin(fakes, "Pay council tax", DAY - timedelta(days=2))
    await admin(fakes, "Book dentist", DAY + timedelta(days=1))  # not yet
    await admin(fakes, "Old and done", DAY - timedelta(days=5), done=True)
    await admin(fakes, "Someday", None)
    await fakes.repo.put_filed(
        ProjectItem(
            id=new_id(), user_id=USER, inbox_item_id="p", title="Kitchen", text="Kitchen",
            confidence=1, next_action="Call the builder",
        )
    )  # fmt: skip
    await fakes.repo.put_filed(
        PersonItem(
            id=new_id(), user_id=USER, inbox_item_id="q", title="Sarah", text="Sarah",
            confidence=1, follow_up="Ask about the budget",
        )
    )  # fmt: skip
    asked = fakes.repo.seed(
        text_item("blorp", status=Status.NEEDS_CLARIFICATION, created_at=AT - timedelta(days=1))
    )
    # 28 March in London (GMT) runs from 00:00 to 24:00 UTC; the 29th started at 00:00 UTC.
    fakes.repo.seed(
        text_item("late last night", created_at=datetime(2026, 3, 28, 23, 59, tzinfo=UTC))
    )
    fakes.repo.seed(text_item("this morning", created_at=datetime(2026, 3, 29, 0, 1, tzinfo=UTC)))
    fakes.repo.seed(text_item("two days ago", created_at=datetime(2026, 3, 27, 23, 0, tzinfo=UTC)))
    prefs = await get_preferences(USER, digest.preferences)
    found = await day_digest(USER, DAY, prefs, fakes.repo, fakes.filed)
    assert [e.title for e in found.due] == ["Pay council tax", "Renew passport"]
    assert [e.title for e in found.due_today] == ["Renew passport"]
    assert [q.id for q in found.questions] == [asked.id]
    assert [e.next_action for e in found.next_actions] == ["Call the builder"]
    assert [e.follow_up for e in found.follow_ups] == ["Ask about the budget"]
    assert sorted(c.title for c in found.yesterday) == ["blorp", "late last night"]
    assert found.review_day is True  # a Sunday, the default review day


async def test_dated_people_and_projects_items_are_due_and_each_item_is_listed_once(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    old = AT - timedelta(days=60)  # older than the newest open items read for each bucket

    async def put(model, title: str, due: date | None, *, done=False, created=AT, **extra):
        item = model(
            id=new_id(), user_id=USER, inbox_item_id="x", title=title, text=title,
            confidence=1, due_date=due, done=done, created_at=created, **extra,
        )  # fmt: skip
        await fakes.repo.put_filed(item)
        return item

    await put(ProjectItem, "Ring the roofer", DAY, next_action="Ring the roofer")
    await put(PersonItem, "Call Mum", DAY - timedelta(days=1), follow_up="Call Mum", created=old)
    await put(ProjectItem, "Order tiles", DAY - timedelta(days=3), done=True, next_action="x")
    await put(PersonItem, "Ask Ravi", DAY, done=True, follow_up="Ask Ravi")
    await put(ProjectItem, "Paint the fence", DAY + timedelta(days=1), next_action="Paint")
    for n in range(SECTION_ITEMS * 2):  # newer open projects, undated, push "old" out of reach
        at = AT - timedelta(minutes=n + 1)
        await put(ProjectItem, f"Project {n}", None, next_action=f"Step {n}", created=at)
    # A project the model was unsure of: filed, and asked about; listed under "to answer" only.
    unsure = fakes.repo.seed(
        text_item("Kitchen", status=Status.NEEDS_REVIEW, filed_bucket=Bucket.PROJECTS)
    )
    await fakes.repo.put_filed(
        ProjectItem(id=unsure.id, user_id=USER, inbox_item_id=unsure.id, title="Kitchen",
                    text="Kitchen", confidence=0.4, next_action="Kitchen", created_at=AT)
    )  # fmt: skip
    await admin(fakes, "Renew passport", DAY)

    prefs = await get_preferences(USER, digest.preferences)
    found = await day_digest(USER, DAY, prefs, fakes.repo, fakes.filed)
    assert [(e.title, e.bucket) for e in found.due] == [
        ("Call Mum", Bucket.PEOPLE),
        ("Renew passport", Bucket.ADMIN),
        ("Ring the roofer", Bucket.PROJECTS),
    ]
    assert all(e.etag for e in found.due)  # what a tick's If-Match names
    assert [q.title for q in found.questions] == ["Kitchen"]
    listed = [e.id for e in found.due + found.next_actions + found.follow_ups]
    listed += [q.id for q in found.questions]
    assert len(listed) == len(set(listed))  # each capture once
    assert "Ring the roofer" not in [e.title for e in found.next_actions]
    assert "Paint the fence" in [e.title for e in found.next_actions]  # not due until tomorrow
    note = digest_note(found, reminders=True)
    assert note is not None and note.title.startswith("Today: 3 due, 1 to answer, ")
    assert note.body.startswith("Due today: Renew passport, Ring the roofer")


async def test_the_timer_sends_one_job_per_user_due_and_the_worker_pushes_each_device_once(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    await set_up(digest, "kolkata", timeZone="Asia/Kolkata", digestAt="07:30")
    await set_up(digest, "later", digestAt="09:00")
    await set_up(digest, "off", digest=False)
    phone, laptop = device(fakes), device(fakes)
    device(fakes, "kolkata")
    await admin(fakes, "Renew passport", DAY)
    await admin(fakes, "File taxes", DAY, user="kolkata")

    assert await enqueue_due_digests(AT - timedelta(minutes=1), digest.adapters) == 1  # Kolkata
    assert await enqueue_due_digests(AT, digest.adapters) == 2  # and London, not yet 09:00
    jobs = digest.queue.take()
    assert {(j.user_id, j.date) for j in jobs} == {(USER, DAY), ("kolkata", DAY)}
    for job in jobs:
        await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    # Two jobs for Kolkata (the timer ran twice before its worker): one push.
    assert len(fakes.sender.pushes_to(phone.endpoint)) == 1
    assert len(fakes.sender.pushes_to(laptop.endpoint)) == 1
    assert len(fakes.sender.pushes) == 3
    note = fakes.sender.pushes_to(phone.endpoint)[0].payload
    assert note["title"] == "Today: 1 due"
    assert "Due today: Renew passport" in note["body"] and note["url"] == "/#/today"
    assert note["tag"] == "digest-2026-03-29" and "captureId" not in note
    assert "weekly review" in note["body"]
    # The worker moved the next digest on to tomorrow's 07:30 BST: the timer is quiet again.
    stored = digest.preferences.stored(USER)
    assert stored is not None and stored.next_digest_at == AT + timedelta(days=1)
    assert await enqueue_due_digests(LATER, digest.adapters) == 0
    record = digest.digests.stored(USER, record_id(USER, DAY))
    assert record is not None and record.done and record.claimed_until is None


async def test_a_rerun_and_a_duplicate_message_send_nothing_twice(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    phone = device(fakes)
    await admin(fakes, "Renew passport", DAY)
    job = DigestJob(user_id=USER, date=DAY)
    await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    # The same message twice at once: one claims the record, the other finds it claimed.
    await asyncio.gather(
        *(
            send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
            for _ in range(2)
        )
    )
    assert len(fakes.sender.pushes_to(phone.endpoint)) == 1


async def test_two_workers_at_once_on_a_new_day_push_once(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    phone = device(fakes)
    await admin(fakes, "Renew passport", DAY)
    job = DigestJob(user_id=USER, date=DAY)
    results = await asyncio.gather(
        *(
            send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
            for _ in range(3)
        )
    )
    assert len(fakes.sender.pushes_to(phone.endpoint)) == 1
    assert sum(r is not None for r in results) == 1


async def test_a_crash_between_the_record_and_the_push_is_sent_by_the_next_timer_run(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    phone = device(fakes)
    await admin(fakes, "Renew passport", DAY)
    fakes.subscriptions.fail_next("for_user", Crash())
    digest.digests.fail_next("save", Crash())  # the claim is not even released
    await enqueue_due_digests(AT, digest.adapters)
    (job,) = digest.queue.take()
    with pytest.raises(Crash):
        await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert fakes.sender.pushes == []
    # Its redelivery within the claim: nothing (the worker that holds it may be alive).
    await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert fakes.sender.pushes == []
    # The next timer run finds nextDigestAt not moved on and sends the job again.
    rerun = LATER + timedelta(minutes=15)
    assert await enqueue_due_digests(rerun, digest.adapters) == 1
    (again,) = digest.queue.take()
    assert again == job
    await send_digest(again, rerun, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert len(fakes.sender.pushes_to(phone.endpoint)) == 1
    # ...with the words composed the first time.
    assert fakes.sender.pushes[0].payload["title"] == "Today: 1 due"


async def test_a_crash_between_two_devices_repushes_only_the_one_that_lacks_it(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    first, second = device(fakes, name="a-first"), device(fakes, name="b-second")
    await admin(fakes, "Renew passport", DAY)
    job = DigestJob(user_id=USER, date=DAY)
    fakes.sender.answer(second.endpoint, PushUnavailable("busy"))
    with pytest.raises(PushUnavailable):
        await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert fakes.subscriptions.stored(USER, first.id).has_sent(digest_key(DAY))  # type: ignore[union-attr]  # stored
    # The queue retries at once: the claim was released on the way out.
    fakes.sender.answer(second.endpoint, Delivery.DELIVERED)
    await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert len(fakes.sender.pushes_to(first.endpoint)) == 1
    assert len(fakes.sender.pushes_to(second.endpoint)) == 1


async def test_a_claim_that_ran_out_is_taken_over(fakes: Fakes, digest: DigestFakes) -> None:
    await set_up(digest)
    phone = device(fakes)
    await admin(fakes, "Renew passport", DAY)
    job = DigestJob(user_id=USER, date=DAY)
    fakes.subscriptions.fail_next("for_user", StorageUnavailable("Cosmos"))
    digest.digests.fail_next("save", Crash())
    with pytest.raises(Crash):
        await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    await send_digest(job, LATER + CLAIM, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert len(fakes.sender.pushes_to(phone.endpoint)) == 1


async def test_nothing_to_say_no_push_and_the_day_is_done(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    device(fakes)
    await admin(fakes, "Book dentist", DAY + timedelta(days=3))
    record = await send_digest(
        DigestJob(user_id=USER, date=DAY), LATER, fakes.repo, fakes.filed, fakes.push,
        digest.adapters,
    )  # fmt: skip
    assert fakes.sender.pushes == [] and record is not None and record.note is None
    assert record.done


async def test_reminders_off_counts_without_naming(fakes: Fakes, digest: DigestFakes) -> None:
    await set_up(digest, reminders=False, weeklyReviewDay="monday")
    phone = device(fakes)
    await admin(fakes, "Renew passport", DAY)
    await send_digest(
        DigestJob(user_id=USER, date=DAY), LATER, fakes.repo, fakes.filed, fakes.push,
        digest.adapters,
    )  # fmt: skip
    (push,) = fakes.sender.pushes_to(phone.endpoint)
    assert push.payload["title"] == "Today: 1 due" and "Renew" not in push.payload["body"]


async def test_a_digest_turned_off_before_its_job_is_not_sent(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    device(fakes)
    await admin(fakes, "Renew passport", DAY)
    await enqueue_due_digests(AT, digest.adapters)
    await set_up(digest, digest=False)
    for job in digest.queue.take():
        await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert fakes.sender.pushes == []


async def test_the_review_counts_the_week_names_quiet_projects_and_ideas(
    fakes: Fakes, digest: DigestFakes
) -> None:
    await set_up(digest)
    prefs = await get_preferences(USER, digest.preferences)
    monday = date(2026, 3, 23)
    in_week = datetime(2026, 3, 25, 10, tzinfo=UTC)
    filed = fakes.repo.seed(text_item("idea", created_at=in_week, filed_bucket=Bucket.IDEAS))
    fakes.repo.seed(text_item("what", created_at=in_week, status=Status.NEEDS_CLARIFICATION))
    fakes.repo.seed(text_item("before", created_at=datetime(2026, 3, 22, 23, tzinfo=UTC)))
    await fakes.repo.put_filed(
        IdeaItem(id=filed.id, user_id=USER, inbox_item_id=filed.id, title="Pottery class",
                 text="idea", confidence=1, created_at=in_week)
    )  # fmt: skip
    await fakes.repo.put_filed(
        ProjectItem(id=new_id(), user_id=USER, inbox_item_id="p", title="Shed", text="Shed",
                    confidence=1, created_at=in_week - timedelta(days=30))
    )  # fmt: skip
    await fakes.repo.put_filed(
        ProjectItem(id=new_id(), user_id=USER, inbox_item_id="p", title="Fresh", text="Fresh",
                    confidence=1, created_at=in_week)
    )  # fmt: skip
    review = await week_review(
        USER, "2026-W13", prefs, AT, fakes.repo, fakes.filed, digest.adapters
    )
    assert review.start == monday and review.end == DAY
    assert review.captures_per_bucket["Ideas"] == 1 and review.captures_per_bucket["unfiled"] == 1
    assert [p.title for p in review.quiet_projects] == ["Shed"]
    assert [i.title for i in review.ideas] == ["Pottery class"]
    assert len(review.questions) == 1
    assert review.summary_by == "rules"
    assert review.captures_total == 2
    assert review.summary == (
        "2 captures came in this week: 1 in Ideas and 1 not filed yet. Worth a look: "
        "1 project gone quiet, 1 question to answer, 1 idea to revisit."
    )
    digest.summarizer = ScriptedSummarizer("A calm week. Call the builder.")
    by_model = await week_review(
        USER, "2026-W13", prefs, AT, fakes.repo, fakes.filed, digest.adapters
    )
    assert by_model.summary == "A calm week. Call the builder." and by_model.summary_by == "model"
    digest.summarizer = ScriptedSummarizer(None)  # the model could not answer: the rules
    fallback = await week_review(
        USER, "2026-W13", prefs, AT, fakes.repo, fakes.filed, digest.adapters
    )
    assert fallback.summary_by == "rules"
    with pytest.raises(Invalid):
        await week_review(USER, "2026-W60", prefs, AT, fakes.repo, fakes.filed, digest.adapters)


async def test_a_job_that_waited_past_its_day_is_dropped(fakes: Fakes, digest: DigestFakes) -> None:
    await set_up(digest)
    phone = device(fakes)
    await admin(fakes, "Renew passport", DAY)
    old = DigestJob(user_id=USER, date=DAY - timedelta(days=1))
    assert (
        await send_digest(old, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters) is None
    )
    assert fakes.sender.pushes_to(phone.endpoint) == [] and digest.digests.all() == []


async def test_the_reviews_count_adds_up_to_its_parts(fakes: Fakes, digest: DigestFakes) -> None:
    # The week a new user saw "31 captures (7 Admin, 6 Projects, 6 People)": 12 were missing.
    await set_up(digest)
    prefs = await get_preferences(USER, digest.preferences)
    in_week = datetime(2026, 3, 25, 10, tzinfo=UTC)
    made = {Bucket.ADMIN: 7, Bucket.PROJECTS: 6, Bucket.PEOPLE: 6, Bucket.IDEAS: 5, None: 7}
    for bucket, n in made.items():
        for i in range(n):
            status = Status.FILED if bucket else Status.NEEDS_CLARIFICATION
            at = in_week + timedelta(minutes=i)
            fakes.repo.seed(text_item(f"c{i}", created_at=at, filed_bucket=bucket, status=status))
    review = await week_review(
        USER, "2026-W13", prefs, AT, fakes.repo, fakes.filed, digest.adapters
    )
    assert review.captures_total == 31 == sum(review.captures_per_bucket.values())
    assert review.to_json()["capturesTotal"] == 31
    first = review.summary.split(". ")[0]
    assert first == (
        "31 captures came in this week: 7 in Admin, 6 in People, 6 in Projects, 5 in Ideas "
        "and 7 not filed yet"
    )
    parts = [int(n) for n in re.findall(r"(\d+) (?:in|not)", first)]
    assert sum(parts) == 31


ZONES = ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(
    "day",
    [date.min, date.min + timedelta(days=1), FIRST_DAY - timedelta(days=1),
     LAST_DAY + timedelta(days=1), date.max - timedelta(days=1), date.max],
)  # fmt: skip
async def test_a_digest_past_the_calendars_ends_is_refused(
    fakes: Fakes, digest: DigestFakes, zone: str, day: date
) -> None:
    await set_up(digest, timeZone=zone)
    prefs = await get_preferences(USER, digest.preferences)
    with pytest.raises(Invalid) as refused:
        await day_digest(USER, day, prefs, fakes.repo, fakes.filed)
    assert refused.value.code == "DATE_OUT_OF_RANGE"


@pytest.mark.parametrize("zone", ZONES)
async def test_the_first_and_last_days_and_weeks_of_the_calendar_are_read(
    fakes: Fakes, digest: DigestFakes, zone: str
) -> None:
    await set_up(digest, timeZone=zone)
    prefs = await get_preferences(USER, digest.preferences)
    await admin(fakes, "Renew passport", DAY)
    first = await day_digest(USER, FIRST_DAY, prefs, fakes.repo, fakes.filed)
    assert first.date == FIRST_DAY and first.due == []
    last = await day_digest(USER, LAST_DAY, prefs, fakes.repo, fakes.filed)
    assert [e.title for e in last.due] == ["Renew passport"]  # overdue by then
    now = datetime(2026, 3, 29, tzinfo=UTC)
    for week in (week_of(FIRST_DAY + timedelta(days=7)), week_of(LAST_DAY - timedelta(days=7))):
        review = await week_review(USER, week, prefs, now, fakes.repo, fakes.filed, digest.adapters)
        assert review.week == week and review.summary_by == "rules"


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("week", ["0001-W01", "0001-W02", "9999-W52", "9999-W48"])
async def test_a_review_past_the_calendars_ends_is_refused(
    fakes: Fakes, digest: DigestFakes, zone: str, week: str
) -> None:
    await set_up(digest, timeZone=zone)
    prefs = await get_preferences(USER, digest.preferences)
    with pytest.raises(Invalid) as refused:
        await week_review(USER, week, prefs, AT, fakes.repo, fakes.filed, digest.adapters)
    assert refused.value.code == "DATE_OUT_OF_RANGE"


@pytest.mark.parametrize(
    ("day", "now"),
    [
        (DAY + timedelta(days=1), LATER),  # tomorrow's, queued today
        (DAY + timedelta(days=300), LATER),  # a day far off
        (DAY, AT - timedelta(minutes=1)),  # today's, before its time
        (DAY - timedelta(days=1), LATER),  # yesterday's, sent and moved on
    ],
)
async def test_a_job_for_a_day_that_is_not_due_writes_nothing(
    fakes: Fakes, digest: DigestFakes, day: date, now: datetime
) -> None:
    await set_up(digest)
    phone = device(fakes)
    await admin(fakes, "Renew passport", DAY)
    before = digest.preferences.stored(USER)
    job = DigestJob(user_id=USER, date=day)
    assert await send_digest(job, now, fakes.repo, fakes.filed, fakes.push, digest.adapters) is None
    assert fakes.sender.pushes_to(phone.endpoint) == [] and digest.digests.all() == []
    assert digest.preferences.stored(USER) == before
    # The job the timer sends once the time has come is sent, and only that day's.
    await enqueue_due_digests(LATER, digest.adapters)
    (due,) = digest.queue.take()
    assert due.date == DAY
    await send_digest(due, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert [r.date for r in digest.digests.all()] == [DAY]


async def test_a_job_for_today_after_a_put_moved_the_digest_to_tomorrow_writes_nothing(
    fakes: Fakes, digest: DigestFakes
) -> None:
    # Preferences set after today's digest time: the next digest is tomorrow's, and a job for
    # today (queued by hand) is not due.
    body = {"timeZone": "Europe/London", "digestAt": "07:30"}
    wanted = parse_preferences(json.dumps(body).encode(), "application/json")
    await put_preferences(USER, wanted, LATER, digest.preferences)
    device(fakes)
    await admin(fakes, "Renew passport", DAY)
    job = DigestJob(user_id=USER, date=DAY)
    later = LATER + timedelta(minutes=5)
    assert (
        await send_digest(job, later, fakes.repo, fakes.filed, fakes.push, digest.adapters) is None
    )
    assert digest.digests.all() == [] and fakes.sender.pushes == []


@pytest.mark.parametrize(
    ("store", "method"),
    [
        ("preferences", "get"),
        ("digests", "get"),
        ("digests", "add"),
        ("digests", "save"),
        ("preferences", "save"),
    ],
)
async def test_a_put_landing_at_any_step_of_the_worker_stands_and_answers(
    fakes: Fakes, digest: DigestFakes, store: str, method: str
) -> None:
    # The worker moves nextDigestAt on under the ETag it read; a PUT meanwhile is the user's
    # word: it is stored whatever the worker does, and the worker's move-on yields to it.
    await set_up(digest)
    device(fakes)
    await admin(fakes, "Renew passport", DAY)
    body = {"timeZone": "Europe/London", "digestAt": "09:00"}
    wanted = parse_preferences(json.dumps(body).encode(), "application/json")
    put: list = []

    async def the_user_puts() -> None:
        put.append(await put_preferences(USER, wanted, LATER, digest.preferences))

    getattr(digest, store).before_next(method, the_user_puts)
    job = DigestJob(user_id=USER, date=DAY)
    await send_digest(job, LATER, fakes.repo, fakes.filed, fakes.push, digest.adapters)
    assert getattr(digest, store).armed == [] and len(put) == 1
    stored = digest.preferences.stored(USER)
    assert stored == put[0]
    assert stored.digest_at == "09:00"
    assert stored.next_digest_at == datetime(2026, 3, 29, 8, 0, tzinfo=UTC)  # 09:00 BST
    assert len(fakes.sender.pushes) <= 1
