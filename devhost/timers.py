"""Timer triggers with the host's timer extension's semantics: runs at each occurrence of the
schedule, `runOnStartup`, and with `useMonitor` the schedule status kept in
`azure-webjobs-hosts` (`timers/<hostId>/Host.Functions.<name>/status`) so that a host that
was down past an occurrence runs the timer once, with `past_due`, when it starts.

One host of an app runs a timer (listener_lock.py), one run at a time, as the host's
listener holds a lock around each: a run that outlasts the next occurrence is followed at
once by one run for all it overlapped, never by runs side by side. A failed run is not
retried; the schedule goes on. The clock is a parameter, so tests drive the schedule
without waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.functions.timer import TimerRequest  # concrete; func.TimerRequest is abstract
from azure.storage.blob.aio import ContainerClient

from .loader import LoadedFunction
from .timer_schedule import ScheduleStatus, TimerSpec, after_run, on_start

log = logging.getLogger("devhost.timers")

HOSTS_CONTAINER = "azure-webjobs-hosts"
# What the host serialises of a cron schedule into TimerInfo.Schedule.
_SCHEDULE_SHOWN = {"AdjustForDST": True}

Call = Callable[[LoadedFunction, Any, dict[str, str]], Awaitable[Any]]


class Clock(Protocol):
    def now(self) -> datetime:
        """The time now, aware."""
        ...

    async def sleep_until(self, when: datetime) -> None: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, when: datetime) -> None:
        # In steps of at most a minute, reading the clock again: a machine that slept (a
        # laptop's lid) wakes the timer when its time has come, not its remaining interval later.
        while (delay := (when - self.now()).total_seconds()) > 0:  # noqa: ASYNC110  (a deadline)
            await asyncio.sleep(min(delay, 60))


class StatusStore(Protocol):
    async def get(self, function_name: str) -> ScheduleStatus | None: ...

    async def put(self, function_name: str, status: ScheduleStatus) -> None: ...


class BlobStatusStore:
    """Schedule status blobs where the host keeps them."""

    def __init__(self, container: ContainerClient, host_id: str) -> None:
        self._container = container
        self._root = f"timers/{host_id}"

    def blob_name(self, function_name: str) -> str:
        return f"{self._root}/Host.Functions.{function_name}/status"

    async def get(self, function_name: str) -> ScheduleStatus | None:
        blob = self._container.get_blob_client(self.blob_name(function_name))
        try:
            data = await (await blob.download_blob()).readall()
        except ResourceNotFoundError:
            return None
        return ScheduleStatus.model_validate_json(data)

    async def put(self, function_name: str, status: ScheduleStatus) -> None:
        body = status.model_dump_json(by_alias=True)
        blob = self._container.get_blob_client(self.blob_name(function_name))
        try:
            await blob.upload_blob(body, overwrite=True)
        except ResourceNotFoundError:  # the host makes its container on first use
            with contextlib.suppress(ResourceExistsError):
                await self._container.create_container()
            await blob.upload_blob(body, overwrite=True)


class TimerListener:
    def __init__(
        self,
        function: LoadedFunction,
        spec: TimerSpec,
        call: Call,
        store: StatusStore,
        clock: Clock,
    ) -> None:
        self.function = function
        self.spec = spec
        self._call = call
        self._store = store
        self._clock = clock
        self.status = ScheduleStatus()

    async def run(self) -> None:
        name = self.function.name
        now = self._clock.now()
        past_due = False
        if self.spec.use_monitor:
            try:
                stored = await self._store.get(name)
            except Exception as exc:  # as the host's GetSafeStatusAsync: start afresh
                log.warning("timer %s: reading its schedule status failed: %r", name, exc)
                stored = None
            decision = on_start(stored, now, self.spec)
            self.status, past_due = decision.status, decision.past_due
            if decision.write:
                await self._save()
        else:
            self.status = ScheduleStatus(next=self.spec.next_after(now))
        log.info(
            "timer %s: schedule %r (%s); the next occurrences: %s",
            name,
            self.spec.schedule.expression,
            self.spec.zone,
            ", ".join(t.isoformat() for t in self._occurrences(now, 5)) or "none",
        )
        if past_due:
            log.info("timer %s: past due (missed %s), running now", name, _shown(self.status))
            await self._run(past_due=True)
        else:
            log.info("timer %s: not past due; next %s", name, _shown(self.status))
            if self.spec.run_on_startup:
                log.info("timer %s: runOnStartup, running now", name)
                await self._run(run_on_startup=True)
        while self.status.next is not None:
            await self._clock.sleep_until(self.status.next)
            await self._run()
        log.warning("timer %s: schedule %r never fires", name, self.spec.schedule.expression)

    def _occurrences(self, after: datetime, count: int) -> list[datetime]:
        found: list[datetime] = []
        while len(found) < count and (later := self.spec.next_after(after)) is not None:
            found.append(later)
            after = later
        return found

    async def manual_value(self) -> TimerRequest:
        """What a run by hand (the admin endpoint) gets: not past due, with the status as it is
        stored (this host may not be the one whose listener runs the timer)."""
        shown = None
        if self.spec.use_monitor:
            try:
                stored = await self._store.get(self.function.name)
            except Exception as exc:
                log.warning(
                    "timer %s: reading its schedule status failed: %r", self.function.name, exc
                )
                stored = None
            shown = (stored or self.status).as_shown()
        return TimerRequest(past_due=False, schedule_status=shown, schedule=_SCHEDULE_SHOWN)

    async def _run(self, *, past_due: bool = False, run_on_startup: bool = False) -> None:
        invoked_at = self._clock.now()
        try:
            await self._call(
                self.function,
                self._request(past_due),
                {"TimerTrigger": invoked_at.isoformat()},
            )
        except Exception:
            log.exception(
                "timer %s failed; it runs again at its next occurrence", self.function.name
            )
        scheduled = not (past_due or run_on_startup)
        self.status = after_run(self.status, invoked_at, self.spec, scheduled)
        if self.spec.use_monitor:
            await self._save()

    def _request(self, past_due: bool) -> TimerRequest:
        shown = self.status.as_shown() if self.spec.use_monitor else None
        return TimerRequest(past_due=past_due, schedule_status=shown, schedule=_SCHEDULE_SHOWN)

    async def _save(self) -> None:
        try:
            await self._store.put(self.function.name, self.status)
        except Exception as exc:  # best effort, as in the host
            log.warning("timer %s: storing its schedule status failed: %r", self.function.name, exc)


def _shown(status: ScheduleStatus) -> str:
    return status.next.isoformat() if status.next else "never"
