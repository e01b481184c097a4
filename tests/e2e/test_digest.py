"""The daily digest end to end: a devhost with the digest timer, fired by hand through the host's
admin endpoint (POST /admin/functions/digest_timer), the push-service stand-in of
tests/push_service.py, and users whose digest time has passed. Each device gets one push,
reading what the user will read; firing again, a duplicate job on the queue and a rerun
before the worker moved on send nothing more. Also the routes: preferences, digest, review."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from azure.storage.queue import QueueClient

from shared.domain.documents import utc_text
from shared.domain.preferences import Preferences
from testkit.support import ADMIN_KEY, DEV_KEYS, clear_queue, eventually, running_devhost
from tests.fakes import new_id
from tests.push_service import Device, PushServiceStandIn

USERS = {f"digest-{n}": f"digest-key-{n}" for n in range(9)}
DIGESTS = "digests"


def key(user: str) -> dict[str, str]:
    return {"X-API-Key": USERS[user]}


@pytest.fixture(scope="module")
def push_service() -> Iterator[PushServiceStandIn]:
    with PushServiceStandIn() as service:
        yield service


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("digest")


@pytest.fixture(scope="module")
def host(
    scripted_env: dict[str, str], push_service: PushServiceStandIn, log_dir: Path
) -> Iterator[str]:
    clear_queue(scripted_env["AzureWebJobsStorage"], DIGESTS)
    keys = [f"{u}:{hashlib.sha256(k.encode()).hexdigest()}" for u, k in USERS.items()]
    env = {
        **scripted_env,
        "API_KEYS": ",".join([DEV_KEYS, *keys]),
        "PUSH_SERVICE_ORIGINS": push_service.origin,
    }
    with running_devhost(env, log_dir) as url:
        yield url


def queue_length(storage_conn: str) -> int:
    queue = QueueClient.from_connection_string(storage_conn, DIGESTS)
    return queue.get_queue_properties().approximate_message_count


def fire_timer(client: httpx.Client, storage_conn: str) -> None:
    """Run the digest timer by hand, as the README says, and wait until its jobs are handled."""
    response = client.post("/admin/functions/digest_timer", json={"input": ""}, headers=ADMIN_KEY)
    assert response.status_code == 202, response.text
    # The run is asynchronous: its jobs appear, then the worker takes them all.
    eventually(lambda: queue_length(storage_conn) == 0, timeout=60)


def due_now(cosmos, user: str) -> None:
    """As if the user's digest time had just passed: nextDigestAt a minute ago."""
    container = cosmos.get_container_client("Preferences")
    doc = container.read_item("preferences", partition_key=user)
    doc["nextDigestAt"] = utc_text(datetime.now(UTC) - timedelta(minutes=1))
    container.upsert_item(doc)


def moved_on(cosmos, user: str) -> bool:
    doc = cosmos.get_container_client("Preferences").read_item("preferences", partition_key=user)
    return doc["nextDigestAt"] > utc_text(datetime.now(UTC))


def admin_item_due(cosmos, user: str, title: str, due: str) -> None:
    capture_id = new_id()
    cosmos.get_container_client("Admin").upsert_item(
        {
            "id": capture_id,
            "userId": user,
            "inboxItemId": capture_id,
            "bucket": "Admin",
            "title": title,
            "text": title,
            "confidence": 1.0,
            "source": "text",
            "people": [],
            "peopleKeys": [],
            "dueDate": due,
            "done": False,
            "createdAt": utc_text(datetime.now(UTC) - timedelta(days=2)),
            "listOrder": f"{due}|x|{capture_id}",
        }
    )


def digests_to(service: PushServiceStandIn, device: Device) -> list:
    return [r for r in service.received_by(device) if r.payload.get("url") == "/#/today"]


def test_preferences_round_trip_and_bad_ones_are_422(client: httpx.Client) -> None:
    user = "digest-2"
    first = client.get("/api/preferences", headers=key(user))
    assert first.status_code == 200
    assert first.json()["saved"] is False and first.json()["digest"] is False
    body = {"timeZone": "Asia/Kolkata", "digestAt": "06:45", "weeklyReviewDay": "friday"}
    put = client.put("/api/preferences", json=body, headers=key(user))
    assert put.status_code == 200, put.text
    stored = put.json()
    assert stored["saved"] and stored["digest"] and stored["reminders"]
    assert stored["nextDigestAt"].endswith(":15:00.000000Z")  # 06:45 IST is 01:15 UTC
    assert client.get("/api/preferences", headers=key(user)).json() == stored
    bad = client.put("/api/preferences", json={"timeZone": "Mars/Base"}, headers=key(user))
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/problem+json"
    assert client.get("/api/preferences").status_code == 401
    assert client.get("/api/digest?date=2026-02-31", headers=key(user)).status_code == 422
    assert client.get("/api/review?week=2026-W99", headers=key(user)).status_code == 422


def test_the_timer_fired_by_hand_pushes_each_device_once_and_never_again(
    client: httpx.Client,
    cosmos,
    push_service: PushServiceStandIn,
    scripted_env: dict[str, str],
) -> None:
    storage_conn = scripted_env["AzureWebJobsStorage"]
    devices: dict[str, list[Device]] = {}
    for user, zone in (("digest-0", "Europe/London"), ("digest-1", "Pacific/Auckland")):
        body = {"timeZone": zone, "digestAt": "07:30"}
        assert client.put("/api/preferences", json=body, headers=key(user)).status_code == 200
        devices[user] = [push_service.device(), push_service.device()]
        for device in devices[user]:
            response = client.post(
                "/api/push/subscriptions", json=device.subscription(), headers=key(user)
            )
            assert response.status_code == 201
        due_now(cosmos, user)
        prefs = Preferences.model_validate(
            cosmos.get_container_client("Preferences").read_item("preferences", user)
        )
        today = prefs.digest_day(datetime.now(UTC))
        admin_item_due(cosmos, user, "Renew passport", today.isoformat())

    fire_timer(client, storage_conn)
    for pair in devices.values():
        for device in pair:
            (push,) = eventually(lambda d=device: digests_to(push_service, d), timeout=30)
            assert push.payload["title"] == "Today: 1 due"
            assert "Due today: Renew passport" in push.payload["body"]
    # The worker moved each user's next digest on: a second run sends no job at all.
    # (after the pushes it sent, so wait for it)
    eventually(lambda: all(moved_on(cosmos, user) for user in devices), timeout=30)
    fire_timer(client, storage_conn)

    # A duplicate job, and a rerun before the worker had moved on: the record says done.
    user = "digest-0"
    prefs = Preferences.model_validate(
        cosmos.get_container_client("Preferences").read_item("preferences", user)
    )
    job = {"userId": user, "date": prefs.digest_day(datetime.now(UTC)).isoformat()}
    queue = QueueClient.from_connection_string(storage_conn, DIGESTS)
    queue.send_message(base64.b64encode(json.dumps(job).encode()).decode())
    due_now(cosmos, user)
    fire_timer(client, storage_conn)
    # The rerun's job was handled: the worker found the day done and moved nextDigestAt on.
    eventually(lambda: moved_on(cosmos, user), timeout=60)
    eventually(lambda: queue_length(storage_conn) == 0, timeout=60)
    for pair in devices.values():
        for device in pair:
            assert len(digests_to(push_service, device)) == 1
    record = cosmos.get_container_client("Digests").read_item(f"{user}:{job['date']}", user)
    assert record["done"] is True and record["note"]["title"] == "Today: 1 due"


def test_the_digest_and_the_review_are_the_callers_own(client: httpx.Client, cosmos) -> None:
    user = "digest-8"  # its own user: the test runs alone as well as after the others
    body = {"timeZone": "Pacific/Auckland", "digestAt": "07:30"}
    assert client.put("/api/preferences", json=body, headers=key(user)).status_code == 200
    prefs = Preferences.model_validate(
        cosmos.get_container_client("Preferences").read_item("preferences", user)
    )
    admin_item_due(cosmos, user, "Renew passport", prefs.digest_day(datetime.now(UTC)).isoformat())
    digest = client.get("/api/digest", headers=key(user))
    assert digest.status_code == 200, digest.text
    assert digest.json()["timeZone"] == "Pacific/Auckland"
    assert [e["title"] for e in digest.json()["due"]] == ["Renew passport"]
    # Another user sees none of it.
    other = client.get("/api/digest", headers=key("digest-2")).json()
    assert other["due"] == []
    review = client.get("/api/review", headers=key(user))
    assert review.status_code == 200, review.text
    assert review.json()["summaryBy"] in ("model", "rules") and review.json()["summary"]


def test_what_a_worker_that_died_mid_way_left_is_finished_by_the_next_run_and_only_that(
    client: httpx.Client,
    cosmos,
    push_service: PushServiceStandIn,
    scripted_env: dict[str, str],
) -> None:
    """The state a worker killed between the first device's push and the second's leaves: the
    day's record claimed and not done, the first device's `sent` holding the day's key, and
    nextDigestAt not moved on. While the claim holds, a run sends nothing; once it has run
    out, the next run pushes the words composed then to the second device only."""
    storage_conn = scripted_env["AzureWebJobsStorage"]
    user = "digest-3"
    body = {"timeZone": "America/New_York", "digestAt": "07:30"}
    assert client.put("/api/preferences", json=body, headers=key(user)).status_code == 200
    first, second = push_service.device(), push_service.device()
    ids = []
    for device in (first, second):
        made = client.post("/api/push/subscriptions", json=device.subscription(), headers=key(user))
        assert made.status_code == 201
        ids.append(made.json()["id"])
    due_now(cosmos, user)
    prefs = Preferences.model_validate(
        cosmos.get_container_client("Preferences").read_item("preferences", user)
    )
    day = prefs.digest_day(datetime.now(UTC)).isoformat()
    subscriptions = cosmos.get_container_client("PushSubscriptions")
    pushed = subscriptions.read_item(ids[0], partition_key=user)
    subscriptions.upsert_item({**pushed, "sent": [f"digest:{day}"]})
    record = {
        "id": f"{user}:{day}",
        "userId": user,
        "date": day,
        "note": {"title": "Today: 3 due", "body": "Composed before the crash.", "url": "/#/today"},
        "claimedUntil": utc_text(datetime.now(UTC) + timedelta(minutes=4)),
        "done": False,
        "createdAt": utc_text(datetime.now(UTC) - timedelta(minutes=1)),
        "sentAt": None,
    }
    digests = cosmos.get_container_client("Digests")
    digests.upsert_item(record)

    # The claim still holds (the worker may be alive): its job, redelivered, sends nothing
    # and leaves nextDigestAt for the run after the claim.
    queue = QueueClient.from_connection_string(storage_conn, DIGESTS)
    job = {"userId": user, "date": day}
    queue.send_message(base64.b64encode(json.dumps(job).encode()).decode())
    eventually(lambda: queue_length(storage_conn) == 0, timeout=60)
    assert not moved_on(cosmos, user)
    assert digests_to(push_service, first) == [] and digests_to(push_service, second) == []

    # The claim ran out: the next run sends the job again; the second device only.
    digests.upsert_item(
        {**record, "claimedUntil": utc_text(datetime.now(UTC) - timedelta(seconds=1))}
    )
    fire_timer(client, storage_conn)
    (push,) = eventually(lambda: digests_to(push_service, second), timeout=30)
    assert push.payload["title"] == "Today: 3 due"
    eventually(lambda: moved_on(cosmos, user), timeout=30)
    assert digests_to(push_service, first) == []
    assert digests.read_item(f"{user}:{day}", partition_key=user)["done"] is True


def test_ten_preferences_puts_at_once_all_answer_200_and_one_of_them_is_stored(
    host: str,
) -> None:
    user = "digest-4"
    bodies = [
        {"timeZone": "Europe/London", "digestAt": f"0{n}:1{n}", "weeklyReviewDay": "monday"}
        for n in range(10)
    ]

    async def put_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=host, timeout=60) as http:
            return await asyncio.gather(
                *(http.put("/api/preferences", json=b, headers=key(user)) for b in bodies)
            )

    for _ in range(3):
        answers = asyncio.run(put_all())
        assert [a.status_code for a in answers] == [200] * 10, [a.text for a in answers]
        stored = httpx.get(f"{host}/api/preferences", headers=key(user)).json()
        assert stored["digestAt"] in {b["digestAt"] for b in bodies}


def test_preferences_put_during_a_digest_run_all_answer_200(
    host: str, cosmos, scripted_env: dict[str, str]
) -> None:
    user = "digest-5"
    body = {"timeZone": "Pacific/Kiritimati", "digestAt": "07:30"}
    with httpx.Client(base_url=host, timeout=60) as client:
        assert client.put("/api/preferences", json=body, headers=key(user)).status_code == 200
        due_now(cosmos, user)

        async def run_and_put() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=host, timeout=60) as http:
                timer = http.post(
                    "/admin/functions/digest_timer", json={"input": ""}, headers=ADMIN_KEY
                )
                puts = [
                    http.put(
                        "/api/preferences",
                        json={**body, "digestAt": f"{n:02d}:00"},
                        headers=key(user),
                    )
                    for n in range(12)
                ]
                fired, *answers = await asyncio.gather(timer, *puts)
                assert fired.status_code == 202, fired.text
                # And more while the worker takes the job the run sent.
                answers += await asyncio.gather(*puts_again(http))
                return answers

        def puts_again(http: httpx.AsyncClient) -> list:
            return [
                http.put(
                    "/api/preferences",
                    json={**body, "digestAt": f"{n + 12:02d}:00"},
                    headers=key(user),
                )
                for n in range(12)
            ]

        answers = asyncio.run(run_and_put())
        assert [a.status_code for a in answers] == [200] * 24, [
            (a.status_code, a.text[:300]) for a in answers if a.status_code != 200
        ]
        eventually(lambda: queue_length(scripted_env["AzureWebJobsStorage"]) == 0, timeout=60)
        stored = client.get("/api/preferences", headers=key(user)).json()
        assert stored["digestAt"] in {f"{n + 12:02d}:00" for n in range(12)}


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"])
def test_the_calendars_ends_are_a_422_and_the_days_within_are_read(
    client: httpx.Client, zone: str
) -> None:
    user = "digest-6"
    put = client.put("/api/preferences", json={"timeZone": zone}, headers=key(user))
    assert put.status_code == 200, put.text
    for query in (
        "/api/digest?date=0001-01-01",
        "/api/digest?date=0001-01-02",
        "/api/digest?date=9999-12-31",
        "/api/review?week=0001-W01",
        "/api/review?week=9999-W52",
    ):
        answer = client.get(query, headers=key(user))
        assert answer.status_code == 422, (query, answer.text)
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.json()["code"] == "DATE_OUT_OF_RANGE"
    for query in ("/api/digest?date=0001-02-01", "/api/digest?date=9999-11-30",
                  "/api/review?week=0001-W06", "/api/review?week=9999-W47"):  # fmt: skip
        answer = client.get(query, headers=key(user))
        assert answer.status_code == 200, (query, answer.text)


def test_a_job_queued_by_hand_for_a_day_that_is_not_due_writes_nothing(
    client: httpx.Client, cosmos, log_dir: Path
) -> None:
    user = "digest-7"
    body = {"timeZone": "Pacific/Kiritimati", "digestAt": "07:30"}
    assert client.put("/api/preferences", json=body, headers=key(user)).status_code == 200
    prefs = Preferences.model_validate(
        cosmos.get_container_client("Preferences").read_item("preferences", user)
    )
    today = prefs.today(datetime.now(UTC))
    runs = 0

    def run_worker_by_hand(day: date) -> None:
        nonlocal runs
        job = json.dumps({"userId": user, "date": day.isoformat()})
        ran = client.post("/admin/functions/digest_worker", json={"input": job}, headers=ADMIN_KEY)
        assert ran.status_code == 202, ran.text
        runs += 1
        log = log_dir / "devhost.log"
        eventually(lambda: log.read_text().count("admin: digest_worker ran") >= runs, timeout=30)

    def records() -> list[dict]:
        return list(
            cosmos.get_container_client("Digests").query_items(
                "SELECT * FROM c", partition_key=user
            )
        )

    # Days to come, and today before its digest time has come round: nothing is written.
    for day in (today + timedelta(days=1), today + timedelta(days=30), today):
        run_worker_by_hand(day)
    assert records() == []
    # Once it is due, today's is sent, and a day to come still is not.
    due_now(cosmos, user)
    prefs = Preferences.model_validate(
        cosmos.get_container_client("Preferences").read_item("preferences", user)
    )
    due = prefs.digest_day(datetime.now(UTC))
    run_worker_by_hand(due + timedelta(days=1))
    run_worker_by_hand(due)
    assert [r["date"] for r in records()] == [due.isoformat()]
