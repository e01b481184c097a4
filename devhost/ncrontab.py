"""NCRONTAB schedules as the Functions host reads a timer trigger's `schedule`: six fields,
`{second} {minute} {hour} {day} {month} {day-of-week}`, parsed with the rules of the NCrontab
library the host uses, and the next occurrence after a given time.

What NCrontab accepts: `*`, a value, a range `a-b` (a reversed range is read in order), a list
`a,b`, a step `*/n`, `a-b/n` or `a/n` (from a to the field's end; a step of 0 counts as 1);
English month and day names, or any prefix of them, in any case (`Jan`, `mon`, `Tues`);
day-of-week 0-6 from Sunday (7 is refused). A day must match both the day and the
day-of-week fields (NCrontab ANDs them, unlike Vixie cron). Not `?`, `L`, `W` or `#`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

_MONTHS = (
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
)
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()


_FIELDS = (
    _Field("second", 0, 59),
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day", 1, 31),
    _Field("month", 1, 12, _MONTHS),
    _Field("day-of-week", 0, 6, _DAYS),
)
_NUMBER = re.compile(r"[0-9]+")
# Far enough for any schedule that fires at all (29 February on a given weekday: 40 years).
_HORIZON_YEARS = 50


class ScheduleError(ValueError):
    """A schedule the host would refuse; the message says which field and why."""


@dataclass(frozen=True)
class CronSchedule:
    expression: str
    seconds: frozenset[int]
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 is Sunday

    @classmethod
    def parse(cls, expression: str) -> CronSchedule:
        tokens = [t for t in expression.split(" ") if t]
        if len(tokens) != 6:
            hint = (
                " (five were given: the host's schedules begin with a seconds field, "
                f"e.g. '0 {' '.join(tokens)}')"
                if len(tokens) == 5
                else ""
            )
            raise ScheduleError(
                f"schedule {expression!r} must have six fields, "
                f"{{second}} {{minute}} {{hour}} {{day}} {{month}} {{day-of-week}}{hint}"
            )
        sets = [
            _parse_field(field, token, expression)
            for field, token in zip(_FIELDS, tokens, strict=True)
        ]
        return cls(expression, *sets)

    def matches(self, wall: datetime) -> bool:
        return (
            wall.month in self.months
            and wall.day in self.days
            and _weekday(wall) in self.weekdays
            and wall.hour in self.hours
            and wall.minute in self.minutes
            and wall.second in self.seconds
        )

    def next_after(self, wall: datetime) -> datetime | None:
        """The first wall-clock time (naive, whole seconds) strictly after `wall` that the
        schedule names; None when it names none within fifty years (30 February)."""
        t = wall.replace(microsecond=0) + timedelta(seconds=1)
        limit = wall.year + _HORIZON_YEARS
        while t.year <= limit:
            if t.month not in self.months:
                t = _first_of_next_month(t)
            elif t.day not in self.days or _weekday(t) not in self.weekdays:
                t = datetime(t.year, t.month, t.day) + timedelta(days=1)
            elif t.hour not in self.hours:
                t = t.replace(minute=0, second=0) + timedelta(hours=1)
            elif t.minute not in self.minutes:
                t = t.replace(second=0) + timedelta(minutes=1)
            elif t.second not in self.seconds:
                t += timedelta(seconds=1)
            else:
                return t
        return None

    def next_in_zone(self, after: datetime, zone: tzinfo) -> datetime | None:
        """The next occurrence after the aware time `after`, the fields read as wall-clock
        time in `zone`; in UTC. A wall time that a daylight-saving change skips does not
        occur, and one it repeats occurs once, at its first instance."""
        cursor = after.astimezone(zone).replace(tzinfo=None)
        while (wall := self.next_after(cursor)) is not None:
            at = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
            if at.astimezone(zone).replace(tzinfo=None) == wall and at > after:
                return at
            cursor = wall
        return None


def _weekday(t: datetime) -> int:
    return (t.weekday() + 1) % 7  # Python's Monday is 0; cron's Sunday is


def _first_of_next_month(t: datetime) -> datetime:
    return datetime(t.year + t.month // 12, t.month % 12 + 1, 1)


def _parse_field(field: _Field, token: str, expression: str) -> frozenset[int]:
    values: set[int] = set()
    for part in token.split(","):
        try:
            values |= _parse_part(field, part)
        except ScheduleError as exc:
            raise ScheduleError(
                f"schedule {expression!r}: {field.name} field {token!r}: {exc}"
            ) from None
    return frozenset(values)


def _parse_part(field: _Field, part: str) -> set[int]:
    if not part:
        raise ScheduleError("an empty value")
    step = 1
    # NCrontab looks for the step, then '*', then a range; a leading '/' or '-' is a value.
    if (slash := part.find("/")) > 0:
        text = part[slash + 1 :]
        if not _NUMBER.fullmatch(text):
            raise ScheduleError(f"step {text!r} is not a number")
        step = max(1, int(text))
        part = part[:slash]
    if part == "*":
        return set(range(field.low, field.high + 1, step))
    if (dash := part.find("-")) > 0:
        first, last = _value(field, part[:dash]), _value(field, part[dash + 1 :])
        first, last = min(first, last), max(first, last)
    else:
        first = _value(field, part)
        last = field.high if slash > 0 else first
    for value in (first, last):
        if not field.low <= value <= field.high:
            raise ScheduleError(f"{value} is outside {field.low}-{field.high}")
    return set(range(first, last + 1, step))


def _value(field: _Field, text: str) -> int:
    if _NUMBER.fullmatch(text):
        return int(text)
    if text and not text[0].isdigit() and field.names:
        for index, name in enumerate(field.names):
            if name.lower().startswith(text.lower()):
                return field.low + index
        raise ScheduleError(f"{text!r} is not a {field.name} name ({', '.join(field.names)})")
    raise ScheduleError(f"{text!r} is not a number from {field.low} to {field.high}")
