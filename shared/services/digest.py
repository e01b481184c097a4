"""The tap on the shoulder: preferences, the day's digest and the week's review read back, the
timer that finds whose digest is due, and the worker that sends each user's digest once per
local day. Every function takes `now`: the entrypoints pass the host's clock, tests a fixed one.
The preferences use case's input (`NewPreferences`) and the answer clients read of them
(`PreferencesView`) live here; the request body's wire shape is shared/http/requests.py's, the
stored document and its clock domain/preferences.py's.

Once per user and local day: the worker creates the day's DigestRecord (id user:date) before
the first push, holding a claim on it for CLAIM; whoever finds it done, or claimed by someone
else, sends nothing. The push itself records the day's key on each device that took it
(push.deliver), so a worker that died mid-way (its claim runs out, the next timer run sends the
job again, since `nextDigestAt` was not moved on) pushes only to the devices that lack it.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, date, datetime, time, timedelta

from pydantic import BaseModel, Field

from shared import tracing
from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket
from shared.domain.digest import (
    CLAIM,
    FIRST_DAY,
    LAST_DAY,
    OPEN_QUESTIONS,
    SECTION_ITEMS,
    Digest,
    DigestJob,
    DigestRecord,
    Review,
    compose_digest,
    compose_review,
    digest_key,
    digest_note,
    readable_days,
    record_id,
    rules_summary,
)
from shared.domain.documents import Document, Timestamp, utc_text
from shared.domain.errors import Invalid, StaleItem, StorageUnavailable
from shared.domain.filed import FiledItem
from shared.domain.ports import (
    CaptureRepository,
    DigestAdapters,
    FiledFilter,
    FiledItems,
    PreferencesStore,
    PushAdapters,
)
from shared.domain.preferences import (
    DEFAULT_AUDIO_RETENTION_DAYS,
    Preferences,
    Weekday,
    is_time_zone,
)
from shared.services.push import deliver, devices_of

log = logging.getLogger(__name__)

# Jobs the timer sends at once: the queue takes them in parallel, the host's instance is one.
ENQUEUE_AT_ONCE = 32
# Filed items the review reads per bucket at most (the newest): a week's review, not an export.
REVIEW_READ = 500


# -- preferences ---------------------------------------------------------------------------------


class NewPreferences(BaseModel):
    """Every preference a user sets (a PUT replaces them all). Whether `time_zone` is a zone
    at all is checked here, against the tz database: a request's shape alone cannot say."""

    time_zone: str
    digest_at: str
    digest: bool
    weekly_review_day: Weekday
    reminders: bool
    keep_audio: bool = True
    audio_retention_days: int | None = DEFAULT_AUDIO_RETENTION_DAYS


class PreferencesView(Document):
    """GET and PUT /api/preferences: the preferences, and when the next digest comes."""

    time_zone: str
    digest_at: str
    digest: bool
    weekly_review_day: Weekday
    reminders: bool
    keep_audio: bool = Field(description="Keep a voice note's recording beside its transcript.")
    audio_retention_days: int | None = Field(
        description="Days a recording is kept after it was made; null: for ever."
    )
    next_digest_at: Timestamp | None = Field(
        description="The UTC instant of the next digest (null while it is off)."
    )
    saved: bool = Field(description="False: never set, these are the defaults (no digest).")

    @classmethod
    def of(cls, prefs: Preferences) -> PreferencesView:
        return cls(
            time_zone=prefs.time_zone,
            digest_at=prefs.digest_at,
            digest=prefs.digest,
            weekly_review_day=prefs.weekly_review_day,
            reminders=prefs.reminders,
            keep_audio=prefs.keep_audio,
            audio_retention_days=prefs.audio_retention_days,
            next_digest_at=prefs.next_digest_at,
            saved=prefs.etag is not None,
        )


async def get_preferences(user_id: str, store: PreferencesStore) -> Preferences:
    """The user's preferences, or the defaults (digest off) if they never set any."""
    return await store.get(user_id) or Preferences.default(user_id)


async def put_preferences(
    user_id: str, new: NewPreferences, now: datetime, store: PreferencesStore
) -> Preferences:
    """Replace the user's preferences; their next digest is counted again from `now`. Invalid
    UNKNOWN_TIME_ZONE for a zone the tz database does not have.

    Nothing of what is stored goes into the new document, so it is written whatever is stored:
    of PUTs at once the last one stored wins, and a digest moving `nextDigestAt` on meanwhile
    (ETag-guarded) loses to it, as it should. Reading first and replacing under the ETag made
    writers at once lose to each other until one ran out of attempts (a 500)."""
    if not is_time_zone(new.time_zone):
        raise Invalid(
            "timeZone must be an IANA time zone, such as Europe/London.", "UNKNOWN_TIME_ZONE"
        )
    # NewPreferences' fields are replaced_by's keywords, one for one: every one is set.
    return await store.replace(Preferences.default(user_id).replaced_by(now, **new.model_dump()))


# -- reading the day and the week ----------------------------------------------------------------


def _day_bounds(day: date, prefs: Preferences) -> tuple[datetime, datetime]:
    """The UTC instants a local day starts and the next one starts."""
    start = datetime.combine(day, time(0), tzinfo=prefs.zone).astimezone(UTC)
    end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=prefs.zone).astimezone(UTC)
    return start, end


async def _came_in(
    user_id: str, start: datetime, end: datetime, repo: CaptureRepository
) -> list[InboxItem]:
    """The user's captures created in [start, end), newest first (one ranged, ordered read)."""
    before = utc_text(end - timedelta(microseconds=1))
    found = []
    async for item in repo.newest(user_id, at_or_before=before, status=None, page_items=50):
        if item.created_at < start:
            break
        if not item.is_deleted:
            found.append(item)
    return found


async def _questions(user_id: str, repo: CaptureRepository) -> list[InboxItem]:
    found: list[InboxItem] = []
    for status in OPEN_QUESTIONS:
        items = repo.newest(user_id, at_or_before=None, status=status, page_items=SECTION_ITEMS)
        taken = 0
        async for item in items:
            found.append(item)
            taken += 1
            if taken == SECTION_ITEMS:
                break  # the newest of this status: a digest, not a list
    return found


async def _open(user_id: str, bucket: Bucket, filed: FiledItems, limit: int) -> list[FiledItem]:
    return await filed.page(user_id, bucket, FiledFilter(done=False), after=None, limit=limit)


async def day_digest(
    user_id: str,
    day: date,
    prefs: Preferences,
    repo: CaptureRepository,
    filed: FiledItems,
) -> Digest:
    """The digest of `day` (local): eight reads in one partition, run at once. Admin, Projects
    and People are each read for their items due up to the day after (due and overdue, not
    done: Admin in due-date order, the others newest first); projects and people also for
    their newest open items. Invalid DATE_OUT_OF_RANGE at the calendar's ends."""
    _within_the_calendar(day, 1, "date")
    start, _ = _day_bounds(day, prefs)
    y_start, _ = _day_bounds(day - timedelta(days=1), prefs)
    due = FiledFilter(done=False, due_before=day + timedelta(days=1))

    async def due_in(bucket: Bucket) -> list[FiledItem]:
        return await filed.page(user_id, bucket, due, after=None, limit=SECTION_ITEMS)

    # The three due sections in a gather of their own: typeshed types a gather of at most six.
    due_sections, questions, projects, people, came_in = await asyncio.gather(
        asyncio.gather(due_in(Bucket.ADMIN), due_in(Bucket.PROJECTS), due_in(Bucket.PEOPLE)),
        _questions(user_id, repo),
        _open(user_id, Bucket.PROJECTS, filed, SECTION_ITEMS * 2),
        _open(user_id, Bucket.PEOPLE, filed, SECTION_ITEMS * 2),
        _came_in(user_id, y_start, start, repo),
    )
    admin, due_projects, due_people = due_sections
    return compose_digest(
        day,
        prefs.time_zone,
        admin=admin,
        questions=questions,
        projects=due_projects + projects,
        people=due_people + people,
        came_in=came_in,
        review_day=prefs.is_review_day(day),
    )


def parse_week(week: str) -> date:
    """The Monday of an ISO week written YYYY-Www."""
    try:
        year, number = week.split("-W")
        return date.fromisocalendar(int(year), int(number), 1)
    except ValueError as exc:
        raise Invalid("week must be an ISO week, YYYY-Www.", "INVALID_QUERY") from exc


def _within_the_calendar(first: date, days: int, name: str) -> None:
    if not readable_days(first, days):
        raise Invalid(
            f"{name} must fall between {FIRST_DAY.isoformat()} and {LAST_DAY.isoformat()}.",
            "DATE_OUT_OF_RANGE",
        )


def week_of(day: date) -> str:
    year, number, _ = day.isocalendar()
    return f"{year}-W{number:02d}"


async def week_review(
    user_id: str,
    week: str,
    prefs: Preferences,
    now: datetime,
    repo: CaptureRepository,
    filed: FiledItems,
    digest: DigestAdapters,
) -> Review:
    """The review of an ISO week (local days), with the model's summary when one is configured
    and answers, the rules' otherwise. Invalid DATE_OUT_OF_RANGE at the calendar's ends."""
    start = parse_week(week)
    _within_the_calendar(start, 7, "week")
    begin, _ = _day_bounds(start, prefs)
    _, end = _day_bounds(start + timedelta(days=6), prefs)
    came_in, projects, ideas, questions = await asyncio.gather(
        _came_in(user_id, begin, end, repo),
        _open(user_id, Bucket.PROJECTS, filed, REVIEW_READ),
        filed.page(user_id, Bucket.IDEAS, FiledFilter(), after=None, limit=REVIEW_READ),
        _questions(user_id, repo),
    )
    review = compose_review(
        week,
        start,
        prefs.time_zone,
        min(now, end),
        came_in=came_in,
        projects=projects,
        ideas=ideas,
        questions=questions,
    )
    summary = None
    if digest.summarizer is not None:
        summary = await digest.summarizer.summarize(review)
    if summary:
        return review.model_copy(update={"summary": summary, "summary_by": "model"})
    return review.model_copy(update={"summary": rules_summary(review), "summary_by": "rules"})


# -- the timer and the worker --------------------------------------------------------------------


async def enqueue_due_digests(now: datetime, digest: DigestAdapters) -> int:
    """The timer's work: one job per user whose digest time has passed, for the local day it
    passed on. It sends and never writes: the worker moves `nextDigestAt` on, so a job lost
    before it is sent comes back at the next run."""
    gate = asyncio.Semaphore(ENQUEUE_AT_ONCE)
    sent = 0

    async def send(prefs: Preferences) -> None:
        nonlocal sent
        async with gate:
            job = DigestJob(user_id=prefs.user_id, date=prefs.digest_day(now))
            await digest.queue.enqueue_digest(job)
            sent += 1

    pending: set[asyncio.Task[None]] = set()
    async for prefs in digest.preferences.due(now):
        pending.add(asyncio.ensure_future(send(prefs)))
        if len(pending) >= ENQUEUE_AT_ONCE * 4:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
    if pending:
        for result in await asyncio.gather(*pending, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result
    log.info("digest timer: %d jobs sent", sent)
    return sent


async def send_digest(
    job: DigestJob,
    now: datetime,
    repo: CaptureRepository,
    filed: FiledItems,
    push: PushAdapters,
    digest: DigestAdapters,
) -> DigestRecord | None:
    """The worker's work for one job: the day's digest pushed to each of the user's devices
    once, or nothing (digest off, done before, being sent by another worker, nothing to say).
    The record as it ended (None: nothing was done).

    The message is not trusted for the day: anyone who can queue a job (a run by hand through
    the host's admin endpoint, say) could name a day to come and have its record written early
    with what is known today. The day due is counted again from the user's preferences and
    `now`, and a job for any other day writes nothing."""
    tracing.annotate(user_id=job.user_id)
    prefs = await digest.preferences.get(job.user_id)
    due = prefs.due_day(now) if prefs is not None else None
    if prefs is None or due is None or job.date != due:
        # Off, sent and moved on already, a day to come, or a job that waited past its day (a
        # long outage, a retried poison): that day's digest is old news, and today's has a
        # job of its own.
        log.info("digest of %s for %s: not the day due (%s); dropped", job.user_id, job.date, due)
        return None
    rid = record_id(job.user_id, job.date)
    record = await digest.digests.get(job.user_id, rid)
    if record is None:
        composed = await day_digest(job.user_id, job.date, prefs, repo, filed)
        note = digest_note(composed, reminders=prefs.reminders)
        wanted = DigestRecord(
            id=rid, user_id=job.user_id, date=job.date, note=note, claimed_until=now + CLAIM
        )
        record, created = await digest.digests.add(wanted)
        if not created:
            record = await _claim(record, now, digest)
    elif record.done:
        await _move_on(prefs, now, digest)
        return record
    else:
        record = await _claim(record, now, digest)
    if record is None:
        log.info("digest %s: being sent by another worker", rid)
        return None
    try:
        if record.note is not None:
            devices = await devices_of(job.user_id, push)
            await deliver(
                devices, digest_key(job.date), record.note.encoded(), _topic(job.date), push
            )
    except BaseException:
        # Let the queue's retry (or the next timer run) take it at once, not after the claim.
        await _release(record, digest)
        raise
    record = await _finish(record, now, digest)
    await _move_on(prefs, now, digest)
    return record


def _topic(day: date) -> str:
    # RFC 8030 Topic: a push service replaces an undelivered digest with a repeat of it.
    return f"digest-{day.isoformat()}"


async def _claim(
    record: DigestRecord, now: datetime, digest: DigestAdapters
) -> DigestRecord | None:
    """The record, claimed by this worker until now + CLAIM; None if it is done or someone
    else holds it (or took it just now)."""
    if not record.claimable(now):
        return None
    try:
        return await digest.digests.save(record.model_copy(update={"claimed_until": now + CLAIM}))
    except StaleItem:
        return None


async def _release(record: DigestRecord, digest: DigestAdapters) -> None:
    try:
        await digest.digests.save(record.model_copy(update={"claimed_until": None}))
    except (StaleItem, StorageUnavailable):  # the claim runs out by itself
        log.warning("digest %s: claim not released", record.id)


async def _finish(record: DigestRecord, now: datetime, digest: DigestAdapters) -> DigestRecord:
    done = record.model_copy(update={"done": True, "claimed_until": None, "sent_at": now})
    try:
        return await digest.digests.save(done)
    except StaleItem:
        # Only a worker whose claim ran out loses this; the devices have their keys anyway.
        return done


async def _move_on(prefs: Preferences, now: datetime, digest: DigestAdapters) -> None:
    """`nextDigestAt` to the next local digest time after `now` (ETag-guarded: a PUT meanwhile
    counted it itself)."""
    nxt = prefs.next_after(now)
    if prefs.next_digest_at is not None and nxt is not None and prefs.next_digest_at >= nxt:
        return
    try:
        await digest.preferences.save(prefs.model_copy(update={"next_digest_at": nxt}))
    except StaleItem:
        log.info("preferences of %s changed meanwhile; their next digest is theirs", prefs.user_id)
