"""The digest timer driven on a fake clock: its NCRONTAB schedule as the devhost's timer
extension reads it (devhost/timer_schedule.py), every occurrence over four days around
London's and New York's spring DST changes, the jobs of each run handed to the worker at that
instant, duplicates and all. Each user's devices get one digest per local day, within 15
minutes after their local digest time, whatever the zone (Kathmandu's +05:45 too)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

from devhost.timer_schedule import TimerSpec
from shared.domain.filed import AdminItem
from shared.domain.preferences import zone
from shared.domain.push import PushKeys, PushSubscription
from shared.http.requests import parse_preferences
from shared.services.digest import enqueue_due_digests, put_preferences, send_digest
from shared.settings import DIGEST_SCHEDULE
from tests.fakes import DigestFakes, Fakes, new_id

USERS = {
    "london": ("Europe/London", "07:30"),
    "london-night": ("Europe/London", "01:30"),  # skipped on 29 March: comes at 02:30 BST
    "new-york": ("America/New_York", "06:00"),
    "kolkata": ("Asia/Kolkata", "08:00"),
    "auckland": ("Pacific/Auckland", "07:00"),
    "kathmandu": ("Asia/Kathmandu", "07:15"),
}
START = datetime(2026, 3, 27, 0, 0, tzinfo=UTC)
END = datetime(2026, 3, 31, 0, 0, tzinfo=UTC)


async def test_a_timer_every_quarter_hour_sends_each_user_one_digest_a_local_day(
    fakes: Fakes,
) -> None:
    digest = DigestFakes()
    spec = TimerSpec.from_binding({"schedule": DIGEST_SCHEDULE}, {}, now=START)
    endpoints = {}
    for user, (tz, at) in USERS.items():
        body = json.dumps({"timeZone": tz, "digestAt": at}).encode()
        await put_preferences(
            user, parse_preferences(body, "application/json"), START, digest.preferences
        )
        endpoint = f"https://fcm.googleapis.com/fcm/send/{new_id()}"
        endpoints[user] = endpoint
        fakes.subscriptions.seed(
            PushSubscription(
                id=new_id().replace("-", ""),
                user_id=user,
                endpoint=endpoint,
                keys=PushKeys(p256dh="k", auth="a"),
            )
        )
        for offset in range(6):  # something due every day, so every digest has a push
            await fakes.repo.put_filed(
                AdminItem(
                    id=new_id(), user_id=user, inbox_item_id="x", title=f"Task {offset}",
                    text="t", confidence=1, due_date=date(2026, 3, 26) + timedelta(days=offset),
                )
            )  # fmt: skip

    sent_at: dict[str, list[datetime]] = {user: [] for user in USERS}
    now = spec.next_after(START - timedelta(seconds=1))  # START itself is a run
    runs = 0
    while now is not None and now < END:
        runs += 1
        await enqueue_due_digests(now, digest.adapters)
        jobs = digest.queue.take()
        # At least once: every job delivered twice.
        for job in [*jobs, *jobs]:
            before = len(fakes.sender.pushes_to(endpoints[job.user_id]))
            await send_digest(job, now, fakes.repo, fakes.filed, fakes.push, digest.adapters)
            if len(fakes.sender.pushes_to(endpoints[job.user_id])) > before:
                sent_at[job.user_id].append(now)
        now = spec.next_after(now)
    assert runs == 4 * 24 * 4

    for user, (tz, at) in USERS.items():
        local_days = [t.astimezone(zone(tz)).date() for t in sent_at[user]]
        assert len(local_days) == len(set(local_days)), user  # never twice a day
        hours, minutes = map(int, at.split(":"))
        for t in sent_at[user]:
            local = t.astimezone(zone(tz))
            wanted = local.replace(hour=hours, minute=minutes, second=0, microsecond=0)
            if user == "london-night" and local.date() == date(2026, 3, 29):
                wanted = wanted.replace(hour=2)  # 01:30 did not exist that morning
            assert timedelta(0) <= local - wanted < timedelta(minutes=15), (user, local)
        # Every local day whose digest time fell inside the four days has its digest.
        assert len(local_days) >= 3, (user, local_days)
