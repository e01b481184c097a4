"""A user's preferences (container `Preferences`): their digest and the clock arithmetic of it
(when, in UTC, their local digest time next comes, and which local day a digest is for; time
zones are IANA names read with zoneinfo, so DST changes move the instant, never the local
time), and whether and how long their voice notes' recordings are kept.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Final, Literal
from zoneinfo import ZoneInfo, available_timezones

from pydantic import Field

from shared.domain.calendar_words import WEEKDAYS
from shared.domain.documents import Document, Timestamp, utcnow

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
PREFERENCES_ID: Final = "preferences"

# How long a recording is kept by default (days), and the most a user may ask for short of
# for ever. Storage's lifecycle policy deletes by the blob's `retention` tag, one rule a class
# (infra/storage.bicep): a recording is tagged with the smallest class at least as long as its
# owner's retention, so the policy never deletes early, and the retention timer deletes on the
# day (shared/services/audio.py).
DEFAULT_AUDIO_RETENTION_DAYS: Final = 365
MAX_AUDIO_RETENTION_DAYS: Final = 3650
RETENTION_CLASSES: Final = (30, 90, 365, 730, 1825, MAX_AUDIO_RETENTION_DAYS)
KEPT_FOR_EVER: Final = "forever"


def retention_tag(days: int | None) -> str:
    """The `retention` tag of a recording kept `days` (None: for ever)."""
    if days is None:
        return KEPT_FOR_EVER
    return str(next(c for c in RETENTION_CLASSES if c >= days))


@cache
def _zones() -> frozenset[str]:
    # Read once: the names of the tz database this process has (the system's or tzdata's),
    # without the files that name no place (the server's own zone, the database's defaults).
    return frozenset(available_timezones()) - {"localtime", "posixrules", "Factory"}


def is_time_zone(name: str) -> bool:
    """Whether `name` is a zone the tz database has: no schema can say which names are."""
    return name in _zones()


def zone(name: str) -> ZoneInfo:
    """The zone of an IANA name the API has accepted."""
    return ZoneInfo(name)


class Preferences(Document):
    """One user's preferences, as stored (partition /userId, one document of id `preferences`).
    `next_digest_at` is the UTC instant of their next local digest time while the digest is on
    (None when off): the digest timer's one indexed query is `digest AND nextDigestAt <= now`."""

    id: Literal["preferences"] = PREFERENCES_ID
    user_id: str
    time_zone: str = "UTC"
    digest_at: str = "07:30"
    digest: bool = False
    weekly_review_day: Weekday = "sunday"
    reminders: bool = True
    # Voice notes: keep the recording beside its transcript, for `audio_retention_days` after
    # it was made (None: for ever).
    keep_audio: bool = True
    audio_retention_days: int | None = DEFAULT_AUDIO_RETENTION_DAYS
    next_digest_at: Timestamp | None = None
    updated_at: Timestamp = Field(default_factory=utcnow)
    etag: str | None = Field(default=None, alias="_etag")

    @classmethod
    def default(cls, user_id: str) -> Preferences:
        """What a user who never set any has: no digest until they do."""
        return cls(user_id=user_id)

    def replaced_by(
        self,
        now: datetime,
        *,
        time_zone: str,
        digest_at: str,
        digest: bool,
        weekly_review_day: Weekday,
        reminders: bool,
        keep_audio: bool = True,
        audio_retention_days: int | None = DEFAULT_AUDIO_RETENTION_DAYS,
    ) -> Preferences:
        """These preferences, every one of them set anew (a user replaces them all), the next
        digest counted from `now`. `time_zone` is a name `is_time_zone` accepts."""
        wanted = self.model_copy(
            update={
                "time_zone": time_zone,
                "digest_at": digest_at,
                "digest": digest,
                "weekly_review_day": weekly_review_day,
                "reminders": reminders,
                "keep_audio": keep_audio,
                "audio_retention_days": audio_retention_days,
                "updated_at": now,
            }
        )
        return wanted.model_copy(update={"next_digest_at": wanted.next_after(now)})

    @property
    def zone(self) -> ZoneInfo:
        return zone(self.time_zone)

    @property
    def clock(self) -> time:
        hours, minutes = self.digest_at.split(":")
        return time(int(hours), int(minutes))

    def next_after(self, now: datetime) -> datetime | None:
        """The first instant after `now` at which the local clock reads `digest_at`; None
        while the digest is off."""
        return next_digest_at(self.zone, self.clock, now) if self.digest else None

    def digest_day(self, now: datetime) -> date:
        """The local day of the last digest time at or before `now`: the day a digest sent
        now is for, however late the timer ran."""
        return digest_day(self.zone, self.clock, now)

    def due_day(self, now: datetime) -> date | None:
        """The local day whose digest is due at `now`: its time has passed and the digest was
        not moved on since (as the timer's query reads them). None while the digest is off or
        its next time is still to come."""
        if not self.digest or self.next_digest_at is None or self.next_digest_at > now:
            return None
        return self.digest_day(now)

    @property
    def audio_retention_tag(self) -> str:
        return retention_tag(self.audio_retention_days)

    def audio_expired(self, created_at: datetime, now: datetime) -> bool:
        """Whether a recording made at `created_at` is past its retention (or not to be kept)."""
        if not self.keep_audio:
            return True
        days = self.audio_retention_days
        return days is not None and created_at + timedelta(days=days) <= now

    def today(self, now: datetime) -> date:
        return now.astimezone(self.zone).date()

    def is_review_day(self, day: date) -> bool:
        return WEEKDAYS[day.weekday()] == self.weekly_review_day


def occurrence(tz: ZoneInfo, at: time, day: date) -> datetime:
    """The UTC instant the local clock reads `at` on `day`. A time skipped by a DST change
    (01:30 on the morning the clocks go forward) is read with the offset before the change, so
    it lands just after it (02:30 summer time); a time that happens twice (the clocks go back)
    is its first."""
    return datetime.combine(day, at, tzinfo=tz).astimezone(UTC)


def next_digest_at(tz: ZoneInfo, at: time, now: datetime) -> datetime:
    local = now.astimezone(tz).date()
    for offset in (-1, 0, 1, 2):
        instant = occurrence(tz, at, local + timedelta(days=offset))
        if instant > now:
            return instant
    raise AssertionError("a local time comes at least once every two days")


def digest_day(tz: ZoneInfo, at: time, now: datetime) -> date:
    local = now.astimezone(tz).date()
    for offset in (1, 0, -1, -2):
        day = local + timedelta(days=offset)
        if occurrence(tz, at, day) <= now:
            return day
    raise AssertionError("a local time came at least once in the last two days")
