"""A timer trigger's schedule as the host's timer extension reads its binding, and the
extension's decisions about it: the schedule status it keeps, whether a timer is past due
when the host starts, and what the status becomes after a run. No I/O here (timers.py).

As the host: the schedule may name app settings (`%NAME%`); it is read in UTC unless
`WEBSITE_TIME_ZONE` (then `TZ`) names a tz database zone, as on a Linux plan; `useMonitor`
defaults to true but is off for a schedule that fires more than once in the next minute;
a `hh:mm:ss` TimeSpan schedule runs only on App Service plans, not on Flex Consumption.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from .ncrontab import CronSchedule, ScheduleError

# The host's ScheduleMonitor.DefaultDateTime (DateTime.MinValue): "never".
NEVER = datetime(1, 1, 1, tzinfo=UTC)
_SETTING = re.compile(r"%([^%\s]+)%")
_TIMESPAN = re.compile(r"^\d+(\.\d+)?:\d+(:\d+)?(\.\d+)?$")
ZONE_SETTINGS = ("WEBSITE_TIME_ZONE", "TZ")


@dataclass(frozen=True)
class TimerSpec:
    schedule: CronSchedule
    zone: tzinfo
    run_on_startup: bool
    use_monitor: bool

    @classmethod
    def from_binding(
        cls,
        raw: Mapping[str, Any],
        settings: Mapping[str, str] = os.environ,
        now: datetime | None = None,
    ) -> TimerSpec:
        """The binding's schedule and flags; raises ScheduleError as the host would refuse."""
        expression = resolve_settings(str(raw.get("schedule") or ""), settings)
        if _TIMESPAN.match(expression.strip()):
            raise ScheduleError(
                f"schedule {expression!r} is a TimeSpan, which only App Service plans run; "
                "this app runs on Flex Consumption: use an NCRONTAB expression"
            )
        schedule = CronSchedule.parse(expression)
        zone = schedule_zone(settings)
        use_monitor = bool(raw.get("useMonitor", True))
        now = now or datetime.now(UTC)
        first = schedule.next_in_zone(now, zone)
        second = schedule.next_in_zone(first, zone) if first else None
        if second is not None and second <= now + timedelta(minutes=1):
            use_monitor = False  # as the host: a sub-minute schedule keeps no status
        return cls(schedule, zone, bool(raw.get("runOnStartup", False)), use_monitor)

    def next_after(self, t: datetime) -> datetime | None:
        return self.schedule.next_in_zone(t, self.zone)


def resolve_settings(expression: str, settings: Mapping[str, str]) -> str:
    """`%NAME%` replaced by the app setting NAME, as the host's name resolver does."""

    def setting(m: re.Match[str]) -> str:
        if m.group(1) not in settings:
            raise ScheduleError(f"schedule {expression!r}: app setting {m.group(1)!r} is not set")
        return settings[m.group(1)]

    return _SETTING.sub(setting, expression)


def schedule_zone(settings: Mapping[str, str]) -> tzinfo:
    """UTC, as on Azure's instances, unless WEBSITE_TIME_ZONE or TZ names a zone."""
    for name in ZONE_SETTINGS:
        value = settings.get(name, "").strip().lstrip(":")
        if not value:
            continue
        try:
            return ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ScheduleError(
                f"{name}={value!r} is not a tz database zone (e.g. 'Europe/Berlin'), the "
                "names a Linux plan takes; Windows names like 'W. Europe Standard Time' "
                "are for Windows plans"
            ) from None
    return UTC


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class ScheduleStatus(BaseModel):
    """What the host keeps of a monitored timer (`timers/<hostId>/<function id>/status` in
    `azure-webjobs-hosts`), and what a run's TimerRequest.schedule_status shows."""

    model_config = ConfigDict(populate_by_name=True)

    last: datetime = Field(default=NEVER, alias="Last")
    next: datetime | None = Field(default=None, alias="Next")
    last_updated: datetime = Field(default=NEVER, alias="LastUpdated")

    def model_post_init(self, _: Any) -> None:
        # Stored times without an offset are the host's UTC instances' local times.
        self.last, self.last_updated = _utc(self.last), _utc(self.last_updated)
        if self.next is not None:
            self.next = _utc(self.next)

    @field_serializer("last", "next", "last_updated")
    def _iso(self, value: datetime | None) -> str | None:
        # With an offset, as the host writes a DateTime of its UTC instances.
        return value.isoformat() if value else None

    def as_shown(self) -> dict[str, str | None]:
        return self.model_dump(by_alias=True)


def _known(t: datetime) -> bool:
    return t.year > NEVER.year


@dataclass(frozen=True)
class StartDecision:
    status: ScheduleStatus
    write: bool  # the status changed and is to be stored
    past_due: bool


def on_start(stored: ScheduleStatus | None, now: datetime, spec: TimerSpec) -> StartDecision:
    """The host's CheckPastDueAsync: a monitored timer whose recorded next occurrence has
    passed missed a run while no host was up, and runs at once with past_due. A status
    that does not match the schedule (the schedule changed) is recomputed first, from now
    if its next occurrence would already be past, so a change is never taken as missed."""
    if stored is None:
        status = ScheduleStatus(next=spec.next_after(now), last_updated=now)
        return StartDecision(status, write=True, past_due=False)
    if _known(stored.last):
        basis = stored.last
    elif _known(stored.last_updated):
        basis = stored.last_updated
    else:
        basis = now
    expected = spec.next_after(basis)
    status, write = stored, False
    if stored.next != expected:
        if expected is not None and now > expected:
            expected, basis = spec.next_after(now), now
        status, write = ScheduleStatus(next=expected, last_updated=basis), True
    past_due = status.next is not None and now > status.next
    return StartDecision(status, write, past_due)


def after_run(
    status: ScheduleStatus, invoked_at: datetime, spec: TimerSpec, scheduled: bool
) -> ScheduleStatus:
    """The status once a run ends. The next occurrence is counted from the run's start (or
    from its occurrence, when the timer fired a little early), not from its end: a run that
    outlasted the next occurrence leaves it due, and it runs once, at once, after this one."""
    at = invoked_at
    if scheduled and status.next is not None and status.next > invoked_at:
        at = status.next
    return ScheduleStatus(last=at, next=spec.next_after(at), last_updated=at)
