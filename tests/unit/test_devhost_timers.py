"""The devhost's timer triggers decide as the host's timer extension: the binding's flags,
past due on start, run on startup, one run at a time, the status it keeps. On a fake clock,
so a schedule of minutes or years is run through in an instant."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import azure.functions as func
import pytest

from devhost.loader import LoadedFunction, validate
from devhost.ncrontab import ScheduleError
from devhost.timer_schedule import NEVER, ScheduleStatus, TimerSpec, after_run, on_start
from devhost.timers import TimerListener

NOW = datetime(2026, 11, 23, 18, 55, 30, tzinfo=UTC)


def spec(schedule: str = "0 */5 * * * *", **raw: Any) -> TimerSpec:
    return TimerSpec.from_binding({"schedule": schedule, **raw}, {}, now=NOW)


def timer_function(schedule: str = "0 */5 * * * *", **options: Any) -> LoadedFunction:
    app = func.FunctionApp()

    @app.timer_trigger(arg_name="timer", schedule=schedule, **options)
    def tick(timer: func.TimerRequest) -> None:
        pass

    (built,) = app.get_functions()
    return validate(built)


class FakeClock:
    """Time stands still until a test moves it; sleepers wake when their time has come."""

    def __init__(self, now: datetime) -> None:
        self._now = now
        self._moved = asyncio.Condition()

    def now(self) -> datetime:
        return self._now

    async def sleep_until(self, when: datetime) -> None:
        async with self._moved:
            await self._moved.wait_for(lambda: self._now >= when)

    async def advance(self, seconds: float) -> None:
        async with self._moved:
            self._now += timedelta(seconds=seconds)
            self._moved.notify_all()
        await settle()


class MemoryStore:
    def __init__(self, status: ScheduleStatus | None = None) -> None:
        self.status = status
        self.writes: list[ScheduleStatus] = []

    async def get(self, function_name: str) -> ScheduleStatus | None:
        return self.status

    async def put(self, function_name: str, status: ScheduleStatus) -> None:
        self.status = status
        self.writes.append(status)


class Calls:
    """Stands for the invoker: records each run's TimerRequest; a run can be held open."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.runs: list[tuple[datetime, func.TimerRequest]] = []
        self.running = 0
        self.most_at_once = 0
        self.hold: asyncio.Event | None = None
        self.fail = False

    async def __call__(self, function: LoadedFunction, value: Any, data: dict[str, str]) -> None:
        self.runs.append((self.clock.now(), value))
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if self.hold is not None:
                await self.hold.wait()
            if self.fail:
                raise RuntimeError("asked to fail")
        finally:
            self.running -= 1


async def settle() -> None:
    """Let the listener's task run until it waits again (no I/O here, only the loop)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def started(
    function: LoadedFunction, clock: FakeClock, store: MemoryStore, calls: Calls
) -> tuple[TimerListener, asyncio.Task[None]]:
    listener = TimerListener(
        function, TimerSpec.from_binding(function.trigger.raw, {}, clock.now()), calls, store, clock
    )
    task = asyncio.create_task(listener.run())
    await settle()
    return listener, task


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


@pytest.fixture
def calls(clock: FakeClock) -> Calls:
    return Calls(clock)


# The binding


def test_the_bindings_flags_and_the_hosts_defaults(offline) -> None:
    assert spec().use_monitor is True and spec().run_on_startup is False
    assert spec(useMonitor=False).use_monitor is False
    assert spec(runOnStartup=True).run_on_startup is True
    # More than once in the next minute: the host keeps no status, whatever the binding says.
    assert spec("*/10 * * * * *", useMonitor=True).use_monitor is False


def test_a_schedule_from_an_app_setting_and_a_time_zone(offline) -> None:
    settings = {"DIGEST": "0 0 7 * * *", "WEBSITE_TIME_ZONE": "Europe/Berlin"}
    timer = TimerSpec.from_binding({"schedule": "%DIGEST%"}, settings, now=NOW)
    assert timer.next_after(NOW) == datetime(2026, 11, 24, 6, tzinfo=UTC)
    assert TimerSpec.from_binding(
        {"schedule": "0 0 7 * * *"}, {"TZ": "Asia/Tokyo"}, NOW
    ).next_after(NOW) == datetime(2026, 11, 23, 22, tzinfo=UTC)


@pytest.mark.parametrize(
    ("raw", "settings", "says"),
    [
        ({"schedule": "%DIGEST%"}, {}, "app setting 'DIGEST' is not set"),
        ({"schedule": "00:05:00"}, {}, "only App Service plans"),
        ({"schedule": "0 0 7 * * *"}, {"WEBSITE_TIME_ZONE": "W. Europe Standard Time"}, "tz"),
        ({"schedule": "0 0 7 * *"}, {}, "six fields"),
    ],
)
def test_what_the_host_would_not_index(offline, raw: dict, settings: dict, says: str) -> None:
    with pytest.raises(ScheduleError) as refused:
        TimerSpec.from_binding(raw, settings, NOW)
    assert says in str(refused.value)


# The decisions


def test_a_new_timer_records_its_next_occurrence_and_is_not_past_due(offline) -> None:
    decision = on_start(None, NOW, spec())
    assert decision.write and not decision.past_due
    assert decision.status.next == datetime(2026, 11, 23, 19, 0, tzinfo=UTC)
    assert decision.status.last == NEVER and decision.status.last_updated == NOW


def test_an_occurrence_missed_while_no_host_ran_is_past_due(offline) -> None:
    last = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
    stored = ScheduleStatus(last=last, next=last + timedelta(minutes=5), last_updated=last)
    decision = on_start(stored, NOW, spec())
    assert decision.past_due and not decision.write
    assert decision.status.next == datetime(2026, 11, 23, 18, 5, tzinfo=UTC)


def test_a_changed_schedule_is_recomputed_not_taken_as_missed(offline) -> None:
    # Stored under an hourly schedule; the schedule is now every five minutes.
    last = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
    stored = ScheduleStatus(last=last, next=last + timedelta(hours=1), last_updated=last)
    decision = on_start(stored, NOW, spec())
    assert decision.write and not decision.past_due
    assert decision.status.next == datetime(2026, 11, 23, 19, 0, tzinfo=UTC)
    assert decision.status.last == NEVER


def test_after_a_run_the_next_occurrence_counts_from_its_start(offline) -> None:
    timer = spec()
    due = datetime(2026, 11, 23, 19, 0, tzinfo=UTC)
    status = ScheduleStatus(next=due)
    # Fired a little early: counted from the occurrence, so it is not run twice.
    early = after_run(status, due - timedelta(milliseconds=300), timer, scheduled=True)
    assert early.last == due and early.next == due + timedelta(minutes=5)
    # A run by startup counts from when it ran.
    late = after_run(status, NOW, timer, scheduled=False)
    assert late.last == NOW and late.next == datetime(2026, 11, 23, 19, 0, tzinfo=UTC)


def test_the_stored_status_reads_the_hosts_json(offline) -> None:
    stored = ScheduleStatus.model_validate_json(
        '{"Last":"2016-10-04T10:15:00+00:00","Next":"2016-10-04T10:20:00.0000000+00:00",'
        '"LastUpdated":"2016-10-04T10:16:00"}'
    )
    assert stored.next == datetime(2016, 10, 4, 10, 20, tzinfo=UTC)
    assert stored.last_updated == datetime(2016, 10, 4, 10, 16, tzinfo=UTC)
    assert ScheduleStatus.model_validate_json(stored.model_dump_json(by_alias=True)) == stored


# The listener, on the fake clock


async def test_runs_at_each_occurrence_and_keeps_its_status(
    offline, clock: FakeClock, calls: Calls
) -> None:
    store = MemoryStore()
    _, task = await started(timer_function(), clock, store, calls)
    assert calls.runs == [] and store.status.next == datetime(2026, 11, 23, 19, tzinfo=UTC)
    await clock.advance(4 * 60 + 29)  # 18:59:59
    assert calls.runs == []
    await clock.advance(1)
    await clock.advance(5 * 60)
    assert [at.strftime("%H:%M") for at, _ in calls.runs] == ["19:00", "19:05"]
    first = calls.runs[0][1]
    assert first.past_due is False
    assert first.schedule_status["Next"] == "2026-11-23T19:00:00+00:00"
    assert store.status.last == datetime(2026, 11, 23, 19, 5, tzinfo=UTC)
    assert store.status.next == datetime(2026, 11, 23, 19, 10, tzinfo=UTC)
    task.cancel()


async def test_a_missed_occurrence_runs_once_on_start_past_due(
    offline, clock: FakeClock, calls: Calls
) -> None:
    last = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
    store = MemoryStore(
        ScheduleStatus(last=last, next=last + timedelta(minutes=5), last_updated=last)
    )
    _, task = await started(timer_function(), clock, store, calls)
    ((_, request),) = calls.runs
    assert request.past_due is True
    assert request.schedule_status["Next"] == "2026-11-23T18:05:00+00:00"  # the missed one
    assert store.status.last == NOW
    assert store.status.next == datetime(2026, 11, 23, 19, tzinfo=UTC)
    task.cancel()


async def test_run_on_startup_runs_once_then_keeps_the_schedule(
    offline, clock: FakeClock, calls: Calls
) -> None:
    _, task = await started(timer_function(run_on_startup=True), clock, MemoryStore(), calls)
    assert len(calls.runs) == 1 and calls.runs[0][1].past_due is False
    await clock.advance(60)
    assert len(calls.runs) == 1
    await clock.advance(4 * 60)
    assert len(calls.runs) == 2
    task.cancel()


async def test_a_run_that_overlaps_the_next_occurrences_is_followed_by_one_run_not_two(
    offline, clock: FakeClock, calls: Calls
) -> None:
    calls.hold = asyncio.Event()
    _, task = await started(timer_function(), clock, MemoryStore(), calls)
    await clock.advance(4 * 60 + 30)  # 19:00: a run starts and does not end
    assert len(calls.runs) == 1
    await clock.advance(11 * 60)  # 19:11: it has outlasted 19:05 and 19:10
    assert len(calls.runs) == 1
    calls.hold.set()
    await settle()
    # One run at once for what it overlapped, then the schedule as before.
    assert [at.strftime("%H:%M") for at, _ in calls.runs] == ["19:00", "19:11"]
    assert calls.most_at_once == 1
    await clock.advance(4 * 60)  # 19:15
    assert [at.strftime("%H:%M") for at, _ in calls.runs][-1] == "19:15"
    task.cancel()


async def test_a_failed_run_is_not_retried_and_the_schedule_goes_on(
    offline, clock: FakeClock, calls: Calls
) -> None:
    calls.fail = True
    _, task = await started(timer_function(), clock, MemoryStore(), calls)
    await clock.advance(4 * 60 + 30)  # 19:00
    await clock.advance(60)
    assert len(calls.runs) == 1
    await clock.advance(4 * 60)
    assert len(calls.runs) == 2
    task.cancel()


async def test_a_sub_minute_timer_keeps_no_status(offline, clock: FakeClock, calls: Calls) -> None:
    store = MemoryStore()
    _, task = await started(timer_function("*/10 * * * * *"), clock, store, calls)
    await clock.advance(10)
    await clock.advance(10)
    assert len(calls.runs) == 2
    assert calls.runs[0][1].schedule_status == {}
    assert store.writes == []
    task.cancel()


async def test_a_run_by_hand_is_not_past_due_and_leaves_the_status(
    offline, clock: FakeClock, calls: Calls
) -> None:
    store = MemoryStore()
    listener, task = await started(timer_function(), clock, store, calls)
    request = await listener.manual_value()
    assert request.past_due is False
    assert request.schedule_status["Next"] == "2026-11-23T19:00:00+00:00"
    assert len(store.writes) == 1  # the initial status only
    task.cancel()
