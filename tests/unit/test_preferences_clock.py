"""The digest's clock without I/O: the next local digest time in UTC and the local day a digest
is for, across DST changes (London, New York, Auckland), a zone without DST (Kolkata) and
times the change skips or repeats; which zone names the tz database has."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from shared.domain.preferences import (
    Preferences,
    digest_day,
    is_time_zone,
    next_digest_at,
)

LONDON = ZoneInfo("Europe/London")
NEW_YORK = ZoneInfo("America/New_York")
KOLKATA = ZoneInfo("Asia/Kolkata")
AUCKLAND = ZoneInfo("Pacific/Auckland")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]  # year, month, day...: ints


@pytest.mark.parametrize(
    ("tz", "at", "now", "expected"),
    [
        # London, winter: 07:30 GMT is 07:30 UTC.
        (LONDON, time(7, 30), utc(2026, 3, 28, 8, 0), utc(2026, 3, 29, 6, 30)),
        # The clocks go forward on 29 March 2026: 07:30 BST is 06:30 UTC that morning.
        (LONDON, time(7, 30), utc(2026, 3, 29, 6, 0), utc(2026, 3, 29, 6, 30)),
        # 01:30 does not exist that morning: the digest comes at 02:30 BST (01:30 UTC).
        (LONDON, time(1, 30), utc(2026, 3, 29, 0, 0), utc(2026, 3, 29, 1, 30)),
        # The clocks go back on 25 October 2026: 07:30 GMT is 07:30 UTC again.
        (LONDON, time(7, 30), utc(2026, 10, 24, 7, 0), utc(2026, 10, 25, 7, 30)),
        # 01:30 happens twice that morning: the first, 01:30 BST (00:30 UTC), and only once.
        (LONDON, time(1, 30), utc(2026, 10, 25, 0, 0), utc(2026, 10, 25, 0, 30)),
        (LONDON, time(1, 30), utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)),
        # New York springs forward on 8 March 2026: 07:30 EDT is 11:30 UTC (EST: 12:30).
        (NEW_YORK, time(7, 30), utc(2026, 3, 7, 13, 0), utc(2026, 3, 8, 11, 30)),
        (NEW_YORK, time(7, 30), utc(2026, 11, 1, 0, 0), utc(2026, 11, 1, 12, 30)),
        # Kolkata: +05:30 all year.
        (KOLKATA, time(7, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 29, 2, 0)),
        (KOLKATA, time(7, 30), utc(2026, 3, 29, 2, 0), utc(2026, 3, 30, 2, 0)),
        # Auckland's day starts before UTC's: 07:30 NZDT on 4 April is 18:30 UTC on the 3rd;
        # the clocks go back at 03:00 on the 5th, so 07:30 NZST that day is 19:30 UTC.
        (AUCKLAND, time(7, 30), utc(2026, 4, 3, 12, 0), utc(2026, 4, 3, 18, 30)),
        (AUCKLAND, time(7, 30), utc(2026, 4, 3, 18, 30), utc(2026, 4, 4, 19, 30)),
        # ...and forward on 27 September: 02:30 that day does not exist (03:30 NZDT).
        (AUCKLAND, time(2, 30), utc(2026, 9, 26, 13, 0), utc(2026, 9, 26, 14, 30)),
    ],
)
def test_the_next_digest_is_the_local_time_in_utc_across_dst(
    tz: ZoneInfo, at: time, now: datetime, expected: datetime
) -> None:
    assert next_digest_at(tz, at, now) == expected


def test_a_digest_is_for_the_local_day_its_time_passed_on_however_late() -> None:
    # Auckland 07:30 on 5 April is 19:30 UTC on the 4th: a digest sent then is for the 5th.
    assert digest_day(AUCKLAND, time(7, 30), utc(2026, 4, 4, 19, 45)) == date(2026, 4, 5)
    # Before it, the last one passed was the 4th's.
    assert digest_day(AUCKLAND, time(7, 30), utc(2026, 4, 4, 19, 0)) == date(2026, 4, 4)
    # A timer two hours late in New York still sends that day's.
    assert digest_day(NEW_YORK, time(23, 30), utc(2026, 3, 9, 5, 30)) == date(2026, 3, 8)


def test_every_day_of_a_year_has_exactly_one_digest_time_in_every_zone() -> None:
    for tz in (LONDON, NEW_YORK, KOLKATA, AUCKLAND):
        for at in (time(0, 30), time(1, 30), time(2, 30), time(7, 30)):
            now, days = utc(2026, 1, 1), []
            while now < utc(2027, 1, 1):
                now = next_digest_at(tz, at, now)
                days.append(digest_day(tz, at, now))
            assert days == sorted(set(days)), (tz, at)
            assert len(days) in (365, 366), (tz, at, len(days))


def test_a_put_sets_the_next_digest_and_off_clears_it() -> None:
    now = utc(2026, 3, 29, 6, 0)
    prefs = Preferences.default("u")
    assert prefs.digest is False and prefs.next_after(now) is None
    wanted = {
        "time_zone": "Europe/London",
        "digest_at": "07:30",
        "weekly_review_day": "sunday",
        "reminders": True,
    }
    on = prefs.replaced_by(now, digest=True, **wanted)
    assert on.digest and on.next_digest_at == utc(2026, 3, 29, 6, 30)
    off = on.replaced_by(now, digest=False, **wanted)
    assert off.next_digest_at is None


@pytest.mark.parametrize("name", ["Mars/Olympus", "../../etc/passwd", "localtime", "europe/london"])
def test_a_name_the_tz_database_does_not_have_is_no_zone(name: str) -> None:
    assert not is_time_zone(name)


@pytest.mark.parametrize("name", ["Europe/London", "Asia/Kathmandu", "UTC"])
def test_a_name_the_tz_database_has_is_a_zone(name: str) -> None:
    assert is_time_zone(name)
