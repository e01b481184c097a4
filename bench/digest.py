"""`python -m bench digest`: the daily digest. (1) Composing one digest in-process against the
local Cosmos server: the requests it makes, by kind (the local server reports no request
charge, so the RU are estimated from Azure's published per-operation costs, labelled so).
(2) `--users` users (10,000 by default) seeded straight into Cosmos, each with preferences
whose digest time has just passed, an Admin item due today and one device; then the digest
timer fired by hand through the devhost's admin endpoint, timed until every device's push
reached a push-service stand-in on loopback (which only counts: encryption and VAPID are
checked by tests/push_service.py in the tests)."""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from aiohttp import web

from bench.cosmos_count import cosmos_requests, since
from bench.stack import Stack
from testkit.loopback_server import LoopbackServer
from testkit.support import ADMIN_KEY

USERS = 10_000
# Filed items a user (an Admin item due today first, then a project and a person, in turn).
ITEMS = 3
SEED_CONCURRENCY = 32
# The rest of what a user's PUT sets when it gives a zone and a time only (the request's defaults).
DIGEST_ON: dict[str, Any] = {"digest": True, "weekly_review_day": "sunday", "reminders": True}
# Azure's request charges for ~1 KB documents (serverless; docs "Request units"): a point read
# 1 RU, a write ~5.7 RU, a replace ~10 RU (the old and new index entries), a small query of a
# page in one partition ~2.5-3 RU. The local server charges nothing: estimates, labelled.
RU_ESTIMATE = {"read": 1.0, "create": 5.7, "upsert": 5.7, "replace": 10.0, "query": 2.9}


class PushCounter(LoopbackServer):
    """A push service that takes every push (201) and counts them, per endpoint path."""

    thread_name = "push-counter"

    def __init__(self) -> None:
        super().__init__()
        self.received = 0
        self.first_at: float | None = None
        self.last_at: float | None = None

    def make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/push/{token}", self._push)
        return app

    async def _push(self, request: web.Request) -> web.Response:
        await request.read()
        now = time.perf_counter()
        self.first_at = self.first_at or now
        self.last_at = now
        self.received += 1
        return web.Response(status=201)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"


def run(s: Stack, repeat: int, users: int = USERS, items: int = ITEMS) -> dict:
    from shared.adapters.vapid import generate_keys

    result: dict = {"compose_one": asyncio.run(_compose_one(s))}
    public, private = generate_keys()
    with PushCounter() as pushes:
        print(f"seeding {users} users ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        asyncio.run(_seed(users, pushes.origin, items))
        result["users"] = users
        result["items_each"] = items
        result["seeding_s"] = round(time.perf_counter() - started, 1)
        env = {
            "PUSH_SERVICE_ORIGINS": pushes.origin,
            "VAPID_PUBLIC_KEY": public,
            "VAPID_PRIVATE_KEY": private,
            "VAPID_SUBJECT": "mailto:bench@example.com",
        }
        before = cosmos_requests(s.settings["COSMOS_ENDPOINT"])
        with (
            s.devhost("digest", scripted=True, **env) as host,
            httpx.Client(base_url=host.base_url, timeout=60) as client,
        ):
            started = time.perf_counter()
            fired = client.post(
                "/admin/functions/digest_timer", json={"input": ""}, headers=ADMIN_KEY
            )
            assert fired.status_code == 202, fired.text
            deadline = started + 3600
            while pushes.received < users and time.perf_counter() < deadline:
                time.sleep(0.5)
            took = time.perf_counter() - started
        after = cosmos_requests(s.settings["COSMOS_ENDPOINT"])
    made = since(before, after)
    result["all_sent_s"] = round(took, 1)
    result["pushed"] = pushes.received
    result["digests_per_s"] = round(pushes.received / took, 1)
    result["cosmos_requests"] = made
    result["cosmos_requests_per_user"] = {k: round(v / users, 2) for k, v in made.items()}
    return result


async def _compose_one(s: Stack) -> dict:
    """One user with a realistic day (due and overdue items, questions, projects, people,
    yesterday's captures): the digest composed once warm, its requests counted."""
    from shared import bootstrap
    from shared.adapters.filed_items import CosmosFiledItems
    from shared.adapters.repository import CosmosCaptureRepository
    from shared.domain.preferences import Preferences
    from shared.services.digest import day_digest

    user = "bench-one"
    now = datetime.now(UTC)
    prefs = Preferences.default(user).replaced_by(
        now, time_zone="Europe/London", digest_at="07:30", **DIGEST_ON
    )
    database = bootstrap.root().clients.cosmos_database()
    await _seed_user(database, user, prefs, None, items=30)
    repo, filed = CosmosCaptureRepository(database), CosmosFiledItems(database)
    day = prefs.today(now)
    await day_digest(user, day, prefs, repo, filed)  # warm: connections, containers
    before = cosmos_requests(s.settings["COSMOS_ENDPOINT"])
    started = time.perf_counter()
    digest = await day_digest(user, day, prefs, repo, filed)
    took_ms = (time.perf_counter() - started) * 1000
    made = since(before, cosmos_requests(s.settings["COSMOS_ENDPOINT"]))
    await bootstrap.reset()
    return {
        "ms": round(took_ms, 1),
        "requests": made,
        "ru_estimate": round(sum(RU_ESTIMATE.get(k, 1.0) * n for k, n in made.items()), 1),
        "sections": {
            "due": len(digest.due),
            "questions": len(digest.questions),
            "next_actions": len(digest.next_actions),
            "follow_ups": len(digest.follow_ups),
            "yesterday": len(digest.yesterday),
        },
    }


async def _seed(users: int, push_origin: str, items: int) -> None:
    from shared import bootstrap
    from shared.domain.preferences import Preferences

    database = bootstrap.root().clients.cosmos_database()
    now = datetime.now(UTC)
    gate = asyncio.Semaphore(SEED_CONCURRENCY)

    async def one(n: int) -> None:
        user = f"bench-user-{n:05d}"
        prefs = Preferences.default(user).replaced_by(
            now, time_zone="UTC", digest_at="00:00", **DIGEST_ON
        )
        # Due a minute ago: the timer's next run finds it.
        prefs = prefs.model_copy(update={"next_digest_at": now - timedelta(minutes=1)})
        async with gate:
            await _seed_user(database, user, prefs, f"{push_origin}/push/{user}", items=items)

    await asyncio.gather(*(one(n) for n in range(users)))
    await bootstrap.reset()


async def _seed_user(database, user: str, prefs, endpoint: str | None, items: int) -> None:
    from shared.domain.capture import InboxItem, Status
    from shared.domain.filed import AdminItem, FiledItem, PersonItem, ProjectItem
    from shared.domain.push import PushKeys, PushSubscription, subscription_id

    now = datetime.now(UTC)
    today = prefs.today(now)
    await database.get_container_client("Preferences").upsert_item(prefs.to_json())
    for n in range(items):
        kind = n % 3
        capture_id = f"{user}-{n}"
        common: dict[str, Any] = {
            "id": capture_id,
            "user_id": user,
            "inbox_item_id": capture_id,
            "title": f"Item {n}",
            "text": f"Item {n}",
            "confidence": 0.9,
            "created_at": now - timedelta(hours=n + 1),
        }
        filed: FiledItem
        if kind == 0:
            filed = AdminItem(**common, due_date=today - timedelta(days=n % 2))
        elif kind == 1:
            filed = ProjectItem(**common, next_action="Call the builder")
        else:
            filed = PersonItem(**common, follow_up="Ask about the budget")
        await database.get_container_client(filed.bucket.value).upsert_item(filed.to_json())
        inbox = InboxItem(
            id=capture_id,
            user_id=user,
            source="text",
            thread_id="t",
            run_id="r",
            text=f"Item {n}",
            status=Status.NEEDS_CLARIFICATION if n % 5 == 4 else Status.FILED,
            created_at=now - timedelta(hours=n + 1),
        )
        await database.get_container_client("Inbox").upsert_item(inbox.to_json())
    if endpoint is not None:
        subscription = PushSubscription(
            id=subscription_id(endpoint),
            user_id=user,
            endpoint=endpoint,
            keys=PushKeys(p256dh=_P256DH, auth="c2l4dGVlbiBieXRlIGtleQ"),
        )
        await database.get_container_client("PushSubscriptions").upsert_item(subscription.to_json())


# One device key for every bench device (the counter decrypts nothing): a real P-256 point.
_P256DH = "BA9Y6ijR_hdIfZDVsxEr-oQAgL02NwGGRH6GhYdzh1_h8IT0Z4l2PTRqxfqHvEX9IU3phdELjSHNuNcBrRvbBt8"


def table(summary: dict) -> str:
    one = summary["compose_one"]
    lines = [
        f"compose one digest: {one['ms']} ms, requests {one['requests']}, "
        f"~{one['ru_estimate']} RU (estimate)",
        f"{summary['users']} users: seeded in {summary['seeding_s']} s; timer to the last push "
        f"{summary['all_sent_s']} s ({summary['digests_per_s']} digests/s), "
        f"{summary['pushed']} pushes",
        f"Cosmos requests per user: {summary['cosmos_requests_per_user']}",
    ]
    return "\n".join(lines)
