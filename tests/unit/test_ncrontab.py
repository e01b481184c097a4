"""The devhost reads timer schedules as the host's NCrontab does: six fields, its forms and
names, days that must match both day fields, and what it refuses."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from devhost.ncrontab import CronSchedule, ScheduleError


def following(expression: str, start: datetime, count: int = 3) -> list[datetime]:
    schedule = CronSchedule.parse(expression)
    times, t = [], start
    for _ in range(count):
        t = schedule.next_after(t)
        assert t is not None
        times.append(t)
    return times


# The examples of the host's documentation, from Monday 2026-11-23 18:55:00.
START = datetime(2026, 11, 23, 18, 55)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("0 */5 * * * *", ["2026-11-23 19:00:00", "2026-11-23 19:05:00", "2026-11-23 19:10:00"]),
        ("0 0 * * * *", ["2026-11-23 19:00:00", "2026-11-23 20:00:00", "2026-11-23 21:00:00"]),
        ("0 0 */2 * * *", ["2026-11-23 20:00:00", "2026-11-23 22:00:00", "2026-11-24 00:00:00"]),
        ("0 0 9-17 * * *", ["2026-11-24 09:00:00", "2026-11-24 10:00:00", "2026-11-24 11:00:00"]),
        ("0 30 9 * * *", ["2026-11-24 09:30:00", "2026-11-25 09:30:00", "2026-11-26 09:30:00"]),
        ("0 30 9 * * 1-5", ["2026-11-24 09:30:00", "2026-11-25 09:30:00", "2026-11-26 09:30:00"]),
        ("0 30 9 * Jan Mon", ["2027-01-04 09:30:00", "2027-01-11 09:30:00", "2027-01-18 09:30:00"]),
        ("5-7 * * * * *", ["2026-11-23 18:55:05", "2026-11-23 18:55:06", "2026-11-23 18:55:07"]),
        ("5,8,10 * * * * *", ["2026-11-23 18:55:05", "2026-11-23 18:55:08", "2026-11-23 18:55:10"]),
        ("0 * 5 * * *", ["2026-11-24 05:00:00", "2026-11-24 05:01:00", "2026-11-24 05:02:00"]),
    ],
)
def test_the_documented_examples(expression: str, expected: list[str]) -> None:
    assert [str(t) for t in following(expression, START)] == expected


def test_steps_from_a_value_and_over_a_range_and_a_step_of_zero() -> None:
    assert CronSchedule.parse("50/4 * * * * *").seconds == {50, 54, 58}
    assert CronSchedule.parse("10-20/5 * * * * *").seconds == {10, 15, 20}
    assert CronSchedule.parse("*/0 * * * * *").seconds == set(range(60))  # NCrontab: as 1
    assert CronSchedule.parse("0 0 0 * * 5-1").weekdays == {1, 2, 3, 4, 5}  # read in order


def test_names_are_english_prefixes_in_any_case() -> None:
    schedule = CronSchedule.parse("0 0 0 * jAnUaRy,Feb,mar tues-Thursday")
    assert schedule.months == {1, 2, 3}
    assert schedule.weekdays == {2, 3, 4}
    assert CronSchedule.parse("0 0 0 * M *").months == {3}  # the first name it begins


def test_a_day_must_match_both_day_fields() -> None:
    # NCrontab ANDs them: the 13th only when it is a Friday (Vixie cron would OR them).
    assert following("0 0 0 13 * Fri", START, 2) == [datetime(2027, 8, 13), datetime(2028, 10, 13)]


def test_short_months_leap_days_and_the_year_end() -> None:
    assert following("0 0 0 31 * *", START, 3) == [
        datetime(2026, 12, 31),
        datetime(2027, 1, 31),
        datetime(2027, 3, 31),
    ]
    assert following("0 0 12 29 Feb *", START, 2) == [
        datetime(2028, 2, 29, 12),
        datetime(2032, 2, 29, 12),
    ]
    assert CronSchedule.parse("0 0 0 30 2 *").next_after(START) is None  # never


def test_the_next_occurrence_is_strictly_after_and_in_whole_seconds() -> None:
    schedule = CronSchedule.parse("* * * * * *")
    assert schedule.next_after(datetime(2026, 1, 1, 0, 0, 0)) == datetime(2026, 1, 1, 0, 0, 1)
    assert schedule.next_after(datetime(2026, 1, 1, 0, 0, 0, 999_000)) == datetime(
        2026, 1, 1, 0, 0, 1
    )


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("*/5 * * * *", "five were given"),
        ("0 0 0 * * * 2026", "must have six fields"),
        ("60 * * * * *", "second field '60': 60 is outside 0-59"),
        ("0 0 24 * * *", "hour field '24'"),
        ("0 0 0 0 * *", "day field '0'"),
        ("0 0 0 * 13 *", "month field '13'"),
        ("0 0 0 * * 7", "day-of-week field '7'"),
        ("0 0 0 ? * *", "'?' is not a number"),
        ("0 0 0 L * *", "'L' is not a number"),
        ("0 0 0 * * 5#3", "'5#3'"),
        ("1,,2 * * * * *", "an empty value"),
        ("*/ * * * * *", "step '' is not a number"),
        ("0 0 0 * Foo *", "'Foo' is not a month name"),
        ("0 0 0 * * Mon-Funday", "'Funday' is not a day-of-week name"),
        ("0 0 0 * * 1-2-3", "'2-3'"),
        ("", "must have six fields"),
    ],
)
def test_what_the_host_refuses(expression: str, says: str) -> None:
    with pytest.raises(ScheduleError) as refused:
        CronSchedule.parse(expression)
    assert says in str(refused.value)


def test_a_zone_reads_the_fields_as_its_wall_clock() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    schedule = CronSchedule.parse("0 0 9 * * *")
    winter = schedule.next_in_zone(datetime(2026, 1, 10, 12, tzinfo=UTC), berlin)
    summer = schedule.next_in_zone(datetime(2026, 7, 10, 12, tzinfo=UTC), berlin)
    assert winter == datetime(2026, 1, 11, 8, tzinfo=UTC)
    assert summer == datetime(2026, 7, 11, 7, tzinfo=UTC)


def test_a_daylight_saving_change_skips_a_missing_time_and_runs_a_repeated_one_once() -> None:
    new_york = ZoneInfo("America/New_York")
    # 2026-03-08: 02:00 to 03:00 does not exist; 2026-11-01: 01:00 to 02:00 happens twice.
    spring = CronSchedule.parse("0 30 2 * * *")
    assert spring.next_in_zone(datetime(2026, 3, 8, 0, tzinfo=UTC), new_york) == datetime(
        2026, 3, 9, 6, 30, tzinfo=UTC
    )
    autumn = CronSchedule.parse("0 30 1 * * *")
    first = autumn.next_in_zone(datetime(2026, 11, 1, 0, tzinfo=UTC), new_york)
    assert first == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # 01:30 EDT
    assert autumn.next_in_zone(first, new_york) == datetime(2026, 11, 2, 6, 30, tzinfo=UTC)
