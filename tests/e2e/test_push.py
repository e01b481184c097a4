"""Web Push end to end: a devhost with the scripted model, and the push-service stand-in of
tests/push_service.py on loopback (PUSH_SERVICE_ORIGINS lists it), which verifies each push's
VAPID JWT and decrypts it with the device's own keys. A user subscribes devices; an outcome
they did not see live reaches each device once, reading what the user will read; an outcome
streamed live does not; a gone device is removed; a busy push service is retried by the queue."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from azure.storage.queue import QueueClient

from shared.domain.push import MAX_SUBSCRIPTIONS
from testkit import fake_openai
from testkit.support import DEV_KEYS, clear_queue, eventually, run_input, running_devhost
from tests.push_service import Device, PushServiceStandIn
from tests.sse import post_run

# A user of this module alone: subscriptions outlive a module in the shared database.
USER = "pusher"
BURST_USER = "burst"
KEY = {"X-API-Key": "push-user-key"}
OUTCOMES = "captures-outcomes"


@pytest.fixture(scope="module")
def push_service() -> Iterator[PushServiceStandIn]:
    with PushServiceStandIn() as service:
        yield service


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("push")


@pytest.fixture(scope="module")
def host(
    scripted_env: dict[str, str], push_service: PushServiceStandIn, log_dir: Path
) -> Iterator[str]:
    clear_queue(scripted_env["AzureWebJobsStorage"], OUTCOMES)
    env = {
        **scripted_env,
        "API_KEYS": ",".join(
            [
                DEV_KEYS,
                f"{USER}:{hashlib.sha256(b'push-user-key').hexdigest()}",
                f"{BURST_USER}:{hashlib.sha256(b'burst-user-key').hexdigest()}",
            ]
        ),
        # The stand-in instead of the real push services (http: it is on loopback).
        "PUSH_SERVICE_ORIGINS": push_service.origin,
        # Enough for the live mark to land first; short, so the tests are quick.
        "PUSH_DELAY_S": "1",
    }
    with running_devhost(env, log_dir) as url:
        yield url


@pytest.fixture
def subscribed(client: httpx.Client, push_service: PushServiceStandIn) -> Iterator[list[Device]]:
    """The devices a test subscribes (through `subscribe`), unsubscribed afterwards."""
    devices: list[Device] = []
    yield devices
    for device in devices:
        client.delete(f"/api/push/subscriptions/{subscription_id(device)}", headers=KEY)


def subscription_id(device: Device) -> str:
    return hashlib.sha256(device.endpoint.encode()).hexdigest()[:32]


def subscribe(client: httpx.Client, devices: list[Device], device: Device) -> dict:
    response = client.post("/api/push/subscriptions", json=device.subscription(), headers=KEY)
    assert response.status_code == 201, response.text
    devices.append(device)
    return response.json()


def queue_length(storage_conn: str) -> int:
    """Messages on captures-outcomes, the invisible (delayed, or being handled) included."""
    queue = QueueClient.from_connection_string(storage_conn, OUTCOMES)
    return queue.get_queue_properties().approximate_message_count


def handled(storage_conn: str) -> None:
    """Until the outcome messages sent so far were handled by the push worker (deleted)."""
    eventually(lambda: queue_length(storage_conn) == 0, timeout=30)


def filed_by_the_worker(client: httpx.Client, fake, text: str, title: str) -> str:
    """A capture the model could not classify during its run: queued, then filed by the
    worker while nobody watches. Its id."""
    fake.enqueue(fake_openai.http_error(503))
    fake.set_default(fake_openai.classification("People", 0.92, title))
    run = post_run(client, "/api/capture", run_input(text), headers=KEY)
    result = run.last()["result"]
    assert result["status"] == "queued"
    return result["inboxItemId"]


def pushes_about(service: PushServiceStandIn, device: Device, capture_id: str) -> list:
    return [r for r in service.received_by(device) if r.payload["captureId"] == capture_id]


def test_the_key_route_answers_the_configured_key(host: str, vapid_keys) -> None:
    response = httpx.get(f"{host}/api/push/key")  # public: no key needed
    assert response.status_code == 200
    assert response.json() == {"publicKey": vapid_keys[0]}


def test_subscribing_is_per_device_idempotent_and_for_push_services_only(
    client: httpx.Client, push_service: PushServiceStandIn, subscribed: list[Device]
) -> None:
    phone = push_service.device()
    first = subscribe(client, subscribed, phone)
    again = subscribe(client, subscribed, phone)
    assert first == again and first["id"] == subscription_id(phone)
    assert first["endpoint"] == phone.endpoint and "keys" not in first and "sent" not in first
    assert subscribe(client, subscribed, push_service.device())["id"] != first["id"]

    elsewhere = {**phone.subscription(), "endpoint": "https://attacker.example/collect"}
    refused = client.post("/api/push/subscriptions", json=elsewhere, headers=KEY)
    assert refused.status_code == 422 and refused.json()["code"] == "UNSUPPORTED_PUSH_SERVICE"
    anonymous = client.post("/api/push/subscriptions", json=phone.subscription())
    assert anonymous.status_code == 401
    # Another user's id names nothing of the caller's: 204, and the subscription stays.
    other = client.delete(
        f"/api/push/subscriptions/{first['id']}", headers={"X-API-Key": "local-dev-key"}
    )
    assert other.status_code == 204
    assert subscribe(client, subscribed, phone) == first  # still there, unchanged


def test_an_outcome_filed_by_the_worker_is_pushed_once_to_each_device(
    client: httpx.Client,
    fake,
    push_service: PushServiceStandIn,
    subscribed: list[Device],
    storage_conn: str,
    cosmos,
) -> None:
    phone, laptop = push_service.device(), push_service.device()
    for device in (phone, laptop):
        subscribe(client, subscribed, device)
    capture_id = filed_by_the_worker(
        client, fake, "Call Sarah about the budget review", "Call Sarah re budget"
    )
    for device in (phone, laptop):
        (push,) = eventually(lambda d=device: pushes_about(push_service, d, capture_id), timeout=30)
        assert push.reads == "Filed → People · Call Sarah re budget"
        assert push.payload == {
            "title": "Filed → People",
            "body": "Call Sarah re budget",
            "captureId": capture_id,
            "outcome": "CLASSIFIED",
            "url": f"/#/captures/{capture_id}",
        }
        assert push.claims["aud"] == push_service.origin
        assert push.headers["urgency"] == "normal" and push.headers["topic"]
    handled(storage_conn)
    assert [len(pushes_about(push_service, d, capture_id)) for d in (phone, laptop)] == [1, 1]
    assert push_service.rejected == []
    stored = cosmos.get_container_client("PushSubscriptions").read_item(
        subscription_id(phone), partition_key=USER
    )
    assert [key.split("@")[0] for key in stored["sent"]] == [capture_id]


def test_a_duplicated_outcome_message_gives_one_push(
    client: httpx.Client,
    fake,
    push_service: PushServiceStandIn,
    subscribed: list[Device],
    storage_conn: str,
) -> None:
    phone = push_service.device()
    subscribe(client, subscribed, phone)
    capture_id = filed_by_the_worker(client, fake, "Lunch with Priya", "Lunch with Priya")
    eventually(lambda: pushes_about(push_service, phone, capture_id), timeout=30)
    handled(storage_conn)
    # The queue delivers at least once: the same message, twice more.
    capture = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    message = {
        "captureId": capture_id,
        "userId": USER,
        "outcome": capture["outcome"],
        "bucket": capture["filedBucket"],
        "settledAt": capture["updatedAt"],
        "chosenBy": capture["chosenBy"],
    }
    queue = QueueClient.from_connection_string(storage_conn, OUTCOMES)
    for _ in range(2):
        queue.send_message(base64.b64encode(json.dumps(message).encode()).decode())
    handled(storage_conn)
    assert len(pushes_about(push_service, phone, capture_id)) == 1


def test_an_outcome_streamed_live_is_not_pushed(
    client: httpx.Client,
    fake,
    push_service: PushServiceStandIn,
    subscribed: list[Device],
    storage_conn: str,
    log_dir: Path,
) -> None:
    phone = push_service.device()
    subscribe(client, subscribed, phone)
    fake.enqueue(fake_openai.classification("Ideas", 0.9, "Solar roof tiles"))
    run = post_run(client, "/api/capture", run_input("solar roof tiles idea"), headers=KEY)
    capture_id = run.custom()["value"]["inboxItemId"]
    assert run.custom()["name"] == "CLASSIFIED"  # the user saw it, in the run

    # Its outcome message is taken back (issue 32): the queue empties with no push job run
    # for it, and nothing was written to mark it shown.
    handled(storage_conn)
    assert pushes_about(push_service, phone, capture_id) == []
    log = (log_dir / "devhost.log").read_text()
    assert f"capture {capture_id}: no push" not in log
    capture = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert capture["outcomeShownAt"] is None


def test_a_gone_device_is_removed_and_the_others_still_told(
    client: httpx.Client,
    fake,
    push_service: PushServiceStandIn,
    subscribed: list[Device],
    storage_conn: str,
    cosmos,
) -> None:
    phone, old = push_service.device(), push_service.device(status=410)
    for device in (phone, old):
        subscribe(client, subscribed, device)
    capture_id = filed_by_the_worker(client, fake, "Renew passport", "Renew passport")
    eventually(lambda: pushes_about(push_service, phone, capture_id), timeout=30)
    handled(storage_conn)
    assert push_service.answered(old) == [410]
    container = cosmos.get_container_client("PushSubscriptions")
    mine = list(
        container.query_items(
            "SELECT * FROM c WHERE c.userId = @user",
            parameters=[{"name": "@user", "value": USER}],
            enable_cross_partition_query=True,
        )
    )
    # The user's device slots live beside their subscriptions.
    assert [d["id"] for d in mine if "endpoint" in d] == [subscription_id(phone)]


def test_a_busy_push_service_is_retried_by_the_queue(
    client: httpx.Client,
    fake,
    push_service: PushServiceStandIn,
    subscribed: list[Device],
    storage_conn: str,
) -> None:
    phone = push_service.device(status=429)
    subscribe(client, subscribed, phone)
    capture_id = filed_by_the_worker(client, fake, "Book the dentist", "Book the dentist")
    eventually(lambda: push_service.answered(phone) == [429], timeout=30)
    push_service.answer(phone, 201)  # the push service has room again
    (push,) = eventually(lambda: pushes_about(push_service, phone, capture_id), timeout=30)
    assert push.reads == "Filed → People · Book the dentist"
    handled(storage_conn)
    assert push_service.answered(phone) == [429, 201]


def test_the_logs_carry_ids_never_a_devices_endpoint_or_keys(
    client: httpx.Client,
    fake,
    push_service: PushServiceStandIn,
    subscribed: list[Device],
    storage_conn: str,
    log_dir: Path,
) -> None:
    phone = push_service.device()
    subscribe(client, subscribed, phone)
    capture_id = filed_by_the_worker(client, fake, "Water the plants", "Water the plants")
    eventually(lambda: pushes_about(push_service, phone, capture_id), timeout=30)
    handled(storage_conn)
    log = (log_dir / "devhost.log").read_text()
    assert f"capture {capture_id}: pushed to 1 of 1 devices" in log
    for secret in (phone.token, phone.p256dh, phone.subscription()["keys"]["auth"]):
        assert secret not in log


def test_a_burst_of_devices_subscribing_at_once_stores_no_more_than_the_cap(
    client: httpx.Client, push_service: PushServiceStandIn, cosmos
) -> None:
    user_key = {"X-API-Key": "burst-user-key"}  # a user of its own: the cap is theirs alone
    devices = [push_service.device() for _ in range(3 * MAX_SUBSCRIPTIONS)]

    def post(device: Device) -> int:
        with httpx.Client(base_url=str(client.base_url), timeout=60) as c:
            answer = c.post("/api/push/subscriptions", json=device.subscription(), headers=user_key)
        return answer.status_code

    with ThreadPoolExecutor(max_workers=len(devices)) as pool:
        statuses = list(pool.map(post, devices))
    assert set(statuses) <= {201, 409}, statuses
    stored = list(
        cosmos.get_container_client("PushSubscriptions").query_items(
            "SELECT * FROM c WHERE c.userId = @user AND IS_DEFINED(c.endpoint)",
            parameters=[{"name": "@user", "value": BURST_USER}],
            partition_key=BURST_USER,
        )
    )
    assert 0 < statuses.count(201) == len(stored) <= MAX_SUBSCRIPTIONS
