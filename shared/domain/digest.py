"""The tap on the shoulder, without I/O: the day's digest and the weekly review as composed from
what was read, the digest's push, the record that makes each user's digest go out once per
local day, and the queue message of one digest.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Literal, TypeVar

from pydantic import Field, computed_field

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.documents import Document, Timestamp, utcnow
from shared.domain.filed import FiledItem
from shared.domain.text import shortened

T = TypeVar("T", FiledItem, InboxItem)

# What one digest section lists at most: a push and a screen, not an export.
SECTION_ITEMS = 20
# A project with nothing new for this long has gone quiet (the weekly review names it).
QUIET_DAYS = 14
OPEN_QUESTIONS = (Status.NEEDS_CLARIFICATION, Status.NEEDS_REVIEW)
# The review's count of the captures in no bucket (asked about, failed, not classified yet).
UNFILED = "unfiled"
# How long one worker holds a digest it is sending before another may take it over.
CLAIM = timedelta(minutes=5)
# The local days a digest or a review can be read for: a day's neighbours, its zone's offset
# from UTC and the review's quiet days all reach past the day itself, and Python's calendar
# ends at years 1 and 9999. A month off each end leaves room for all of them.
CALENDAR_MARGIN = timedelta(days=31)
FIRST_DAY = date.min + CALENDAR_MARGIN
LAST_DAY = date.max - CALENDAR_MARGIN


def readable_days(first: date, days: int = 1) -> bool:
    """Whether `days` local days from `first` can each have a digest or be reviewed (an ISO
    week can end past the calendar: 9999-W52 ends on what would be 10000-01-02)."""
    return FIRST_DAY <= first <= LAST_DAY - timedelta(days=days - 1)


class DigestEntry(Document):
    """One filed item as the digest and the review list it."""

    id: str = Field(description="The capture id.")
    bucket: Bucket
    title: str
    due_date: date | None = None
    next_action: str | None = None
    follow_up: str | None = None
    people: list[str] = Field(default_factory=list)
    created_at: Timestamp
    etag: str | None = Field(
        default=None, description="The filed item's ETag, for PATCH's If-Match (a tick)."
    )

    @classmethod
    def of(cls, item: FiledItem) -> DigestEntry:
        return cls(
            id=item.id,
            bucket=item.bucket,
            title=item.title,
            due_date=item.due_date,
            next_action=getattr(item, "next_action", None),
            follow_up=getattr(item, "follow_up", None),
            people=item.people,
            created_at=item.created_at,
            etag=item.etag,
        )


class OpenQuestion(Document):
    """A capture waiting for the user's answer."""

    id: str = Field(description="The capture id.")
    status: Literal["needs_clarification", "needs_review"]
    title: str
    question: str | None
    created_at: Timestamp

    @classmethod
    def of(cls, item: InboxItem) -> OpenQuestion:
        return cls(
            id=item.id,
            status=item.status.value,  # type: ignore[arg-type]  # only OPEN_QUESTIONS are read
            title=item.title or _short(item.text or ""),
            question=item.question_text,
            created_at=item.created_at,
        )


class YesterdayItem(Document):
    """A capture that came in, as the digest's "yesterday" lists it."""

    id: str
    title: str
    bucket: Bucket | None
    status: Status
    created_at: Timestamp

    @classmethod
    def of(cls, item: InboxItem) -> YesterdayItem:
        return cls(
            id=item.id,
            title=item.title or _short(item.text or ""),
            bucket=item.filed_bucket,
            status=item.status,
            created_at=item.created_at,
        )


class Digest(Document):
    """GET /api/digest: one local day's digest."""

    date: date
    time_zone: str
    due: list[DigestEntry] = Field(
        description="Admin, Projects and People items due that day or overdue, not done."
    )
    questions: list[OpenQuestion] = Field(description="Captures waiting for an answer.")
    next_actions: list[DigestEntry] = Field(description="Open projects with a next action.")
    follow_ups: list[DigestEntry] = Field(description="People to follow up.")
    yesterday: list[YesterdayItem] = Field(description="What came in the day before.")
    review_day: bool = Field(description="The day of the user's weekly review.")

    @property
    def due_today(self) -> list[DigestEntry]:
        return [e for e in self.due if e.due_date == self.date]

    @property
    def is_empty(self) -> bool:
        return not (self.due or self.questions or self.next_actions or self.follow_ups)


class Review(Document):
    """GET /api/review: one ISO week's review."""

    week: str = Field(description="The ISO week, YYYY-Www.")
    start: date
    end: date = Field(description="The week's last day.")
    time_zone: str
    captures_per_bucket: dict[str, int] = Field(
        description="Captures that came in that week, by bucket (`unfiled`: in no bucket yet); "
        "every capture is counted in exactly one, so they add up to `capturesTotal`."
    )
    quiet_projects: list[DigestEntry] = Field(
        description=f"Open projects with nothing new in {QUIET_DAYS} days."
    )
    ideas: list[DigestEntry] = Field(description="The week's ideas.")
    questions: list[OpenQuestion] = Field(description="Captures still waiting for an answer.")
    summary: str = Field(description="Two sentences: the model's, or the rules' offline.")
    summary_by: Literal["model", "rules"]

    @computed_field(description="Captures that came in that week: the buckets' sum.")  # type: ignore[prop-decorator]  # pydantic's documented form over a property
    @property
    def captures_total(self) -> int:
        return sum(self.captures_per_bucket.values())


def compose_digest(
    day: date,
    time_zone: str,
    *,
    admin: list[FiledItem],
    questions: list[InboxItem],
    projects: list[FiledItem],
    people: list[FiledItem],
    came_in: list[InboxItem],
    review_day: bool,
) -> Digest:
    """The digest from what was read: due (or overdue) items of Admin, Projects and People by
    due date, projects that have a next action, people with something to follow up, newest
    first. Each capture is listed once, in the first section it belongs to (due, to answer,
    next actions, follow-ups), so the push counts each once too; `admin`, `projects` and
    `people` may hold the same item twice (it was read as due and as open)."""
    due = _unique(
        i
        for i in [*admin, *projects, *people]
        if not i.done and i.due_date is not None and i.due_date <= day
    )
    due.sort(key=lambda i: (i.due_date, i.created_at))
    shown = {i.id for i in due[:SECTION_ITEMS]}
    asked = [q for q in questions if q.status in OPEN_QUESTIONS and q.id not in shown]
    shown |= {q.id for q in _newest(asked)[:SECTION_ITEMS]}
    actions = _unique(
        i for i in projects if not i.done and getattr(i, "next_action", None) and i.id not in shown
    )
    follow = _unique(
        i for i in people if not i.done and getattr(i, "follow_up", None) and i.id not in shown
    )
    return Digest(
        date=day,
        time_zone=time_zone,
        due=[DigestEntry.of(i) for i in due[:SECTION_ITEMS]],
        questions=[OpenQuestion.of(q) for q in _newest(asked)[:SECTION_ITEMS]],
        next_actions=[DigestEntry.of(i) for i in _newest(actions)[:SECTION_ITEMS]],
        follow_ups=[DigestEntry.of(i) for i in _newest(follow)[:SECTION_ITEMS]],
        yesterday=[YesterdayItem.of(i) for i in _newest(came_in)[:SECTION_ITEMS]],
        review_day=review_day,
    )


def compose_review(
    week: str,
    start: date,
    time_zone: str,
    now: datetime,
    *,
    came_in: list[InboxItem],
    projects: list[FiledItem],
    ideas: list[FiledItem],
    questions: list[InboxItem],
) -> Review:
    """The review without its summary (`with_summary` adds one)."""
    counts = {b.value: 0 for b in Bucket} | {UNFILED: 0}
    for item in came_in:
        counts[item.filed_bucket.value if item.filed_bucket else UNFILED] += 1
    quiet_since = now - timedelta(days=QUIET_DAYS)
    quiet = [p for p in projects if not p.done and p.created_at < quiet_since]
    week_ideas = [i for i in ideas if start <= i.created_at.date() <= start + timedelta(days=6)]
    asked = [q for q in questions if q.status in OPEN_QUESTIONS]
    return Review(
        week=week,
        start=start,
        end=start + timedelta(days=6),
        time_zone=time_zone,
        captures_per_bucket=counts,
        quiet_projects=[DigestEntry.of(p) for p in _oldest(quiet)[:SECTION_ITEMS]],
        ideas=[DigestEntry.of(i) for i in _newest(week_ideas)[:SECTION_ITEMS]],
        questions=[OpenQuestion.of(q) for q in _newest(asked)[:SECTION_ITEMS]],
        summary="",
        summary_by="rules",
    )


def rules_summary(review: Review) -> str:
    """Two plain sentences, when no model is configured (or it failed). The first names every
    part of the week's count, so its parts add up to its total."""
    total = review.captures_total
    if total == 0:
        first = "Nothing came in this week."
    else:
        counts = review.captures_per_bucket
        # The busiest bucket first; those in no bucket last.
        filed = [b for b in counts if b != UNFILED and counts[b]]
        buckets = sorted(filed, key=lambda b: -counts[b])
        parts = [f"{counts[b]} in {b}" for b in buckets]
        if counts.get(UNFILED):
            parts.append(f"{counts[UNFILED]} not filed yet")
        where = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        first = f"{_count(total, 'capture')} came in this week: {where}."
    waiting = []
    if review.quiet_projects:
        waiting.append(f"{_count(len(review.quiet_projects), 'project')} gone quiet")
    if review.questions:
        waiting.append(f"{_count(len(review.questions), 'question')} to answer")
    if review.ideas:
        waiting.append(f"{_count(len(review.ideas), 'idea')} to revisit")
    second = f"Worth a look: {', '.join(waiting)}." if waiting else "Nothing is waiting on you."
    return f"{first} {second}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _unique(items: Iterable[FiledItem]) -> list[FiledItem]:
    """Each filed item once (by capture id), the first seen kept."""
    first: dict[str, FiledItem] = {}
    for item in items:
        first.setdefault(item.id, item)
    return list(first.values())


def _newest(items: list[T]) -> list[T]:
    return sorted(items, key=lambda i: i.created_at, reverse=True)


def _oldest(items: list[FiledItem]) -> list[FiledItem]:
    return sorted(items, key=lambda i: i.created_at)


def _short(text: str) -> str:
    words = " ".join(text.split())
    return words if len(words) <= 60 else words[:59].rsplit(" ", 1)[0] + "…"


# -- the push ------------------------------------------------------------------------------------

MAX_DUE_NAMED = 3
# What a lock screen shows of a notification, at most (as for a capture's, push.py).
MAX_NOTE_TITLE_CHARS = 100
MAX_NOTE_BODY_CHARS = 300


class DigestNote(Document):
    """The digest's notification, as the service worker reads a push (title, body, url; the
    tag makes a repeat of the day's digest replace the one shown)."""

    title: str
    body: str
    url: str = "/#/today"
    tag: str | None = None

    def encoded(self) -> bytes:
        return self.model_dump_json(by_alias=True).encode()


def digest_note(digest: Digest, *, reminders: bool) -> DigestNote | None:
    """ "Today: 2 due, 1 to answer"; None when there is nothing to say (no push). With
    reminders on, the Admin items due that day are named."""
    if digest.is_empty:
        return None
    parts = []
    if digest.due:
        parts.append(f"{len(digest.due)} due")
    if digest.questions:
        parts.append(f"{len(digest.questions)} to answer")
    if digest.next_actions:
        parts.append(f"{_count(len(digest.next_actions), 'next action')}")
    if digest.follow_ups:
        parts.append(f"{len(digest.follow_ups)} to follow up")
    title = f"Today: {', '.join(parts)}"
    lines = []
    if reminders and digest.due_today:
        named = [e.title for e in digest.due_today[:MAX_DUE_NAMED]]
        more = len(digest.due_today) - len(named)
        lines.append("Due today: " + ", ".join(named) + (f" and {more} more" if more else ""))
    if digest.review_day:
        lines.append("Your weekly review is ready.")
    return DigestNote(
        title=shortened(title, MAX_NOTE_TITLE_CHARS),
        body=shortened(" ".join(lines), MAX_NOTE_BODY_CHARS) or "Tap to see your day.",
        tag=f"digest-{digest.date.isoformat()}",
    )


def digest_key(day: date) -> str:
    """The notification key a device records once it has the day's digest (push.py's `sent`)."""
    return f"digest:{day.isoformat()}"


# -- once per user and local day -----------------------------------------------------------------


class DigestJob(Document):
    """A message on `digests`: send one user's digest of one local day."""

    user_id: str = Field(min_length=1, max_length=200)
    date: date
    traceparent: str | None = None


def record_id(user_id: str, day: date) -> str:
    return f"{user_id}:{day.isoformat()}"


class DigestRecord(Document):
    """Container `Digests` (partition /userId), id "<userId>:<local date>": created before the
    first push of a day's digest, so a rerun, a duplicate message or a crash finds it. It keeps
    the notification as first composed (a retry sends the same words), who is sending it until
    when (`claimed_until`), and whether it was sent."""

    id: str
    user_id: str
    date: date
    note: DigestNote | None = Field(description="None: nothing to say, nothing pushed.")
    claimed_until: Timestamp | None = None
    done: bool = False
    created_at: Timestamp = Field(default_factory=utcnow)
    sent_at: Timestamp | None = None
    etag: str | None = Field(default=None, alias="_etag")

    def claimable(self, now: datetime) -> bool:
        return not self.done and (self.claimed_until is None or self.claimed_until <= now)
