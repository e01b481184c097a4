"""Faults, end to end: the devhost reaches Cosmos and Azurite through fault proxies the tests cut
and restore, the model is the scripted server, and the worker is killed mid-message. Each test
shows that nothing accepted is lost, nothing is filed twice, and the capture converges once the
fault clears; work that never succeeds ends as a failed capture with its reason in the inbox."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from azure.storage.queue import QueueClient

from devhost.emulators import Emulators, Ports, storage_connection_string
from shared.bootstrap import adapters, reset
from shared.domain.capture import InboxItem, Status
from shared.domain.ids import capture_id_for
from shared.domain.outcomes import FailureCode
from shared.domain.ports import Adapters, CaptureRepository
from shared.services.poison import fail_poisoned_classify_job, settle_poisoned_voice_note
from testkit import fake_openai
from testkit.fault_proxy import FaultProxy
from testkit.support import (
    BUCKETS,
    KEY,
    REPO,
    SARAH,
    DevhostProcess,
    clear_queue,
    docs,
    eventually,
    run_input,
)
from tests.sse import SseRun, assert_valid_run, get_run, post_run, post_voice_capture

CLASSIFY_FAILED = FailureCode.CLASSIFY_FAILED
TRANSCRIPTION_FAILED = FailureCode.TRANSCRIPTION_FAILED
MAX_DEQUEUE = 5  # host.json's maxDequeueCount, which this module keeps


@pytest.fixture(scope="module")
def cosmos_line(emulators: Emulators) -> Iterator[FaultProxy]:
    with FaultProxy(emulators.ports.cosmos) as proxy:
        yield proxy


@pytest.fixture(scope="module")
def storage_lines(emulators: Emulators) -> Iterator[tuple[FaultProxy, FaultProxy]]:
    with FaultProxy(emulators.ports.blob) as blob, FaultProxy(emulators.ports.queue) as queue:
        yield blob, queue


@pytest.fixture(scope="module")
def host(
    scripted_env: dict[str, str],
    emulators: Emulators,
    cosmos_line: FaultProxy,
    storage_lines: tuple[FaultProxy, FaultProxy],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[DevhostProcess]:
    """The app in a devhost that reaches Cosmos and Storage only through the proxies, with
    retries a second apart and a 2 s lease on the message it works on (renewed while it runs)."""
    storage = clear_queues(scripted_env["AzureWebJobsStorage"])
    blob, queue = storage_lines
    ports = Ports(blob=blob.port, queue=queue.port, table=emulators.ports.table, cosmos=0)
    env = {
        **scripted_env,
        "COSMOS_ENDPOINT": f"https://127.0.0.1:{cosmos_line.port}",
        "AzureWebJobsStorage": storage_connection_string(ports),
        "AzureFunctionsJobHost__extensions__queues__visibilityTimeout": "00:00:01",
        "AzureFunctionsJobHost__extensions__queues__maxPollingInterval": "00:00:01",
        "DEVHOST_QUEUE_LEASE_S": "2",
        "AzureFunctionsWebHost__hostid": f"faults-{uuid.uuid4().hex[:12]}",
    }
    log_dir = tmp_path_factory.mktemp("faults")
    devhost = DevhostProcess(REPO, env, log_dir / "devhost.log").start()
    yield devhost
    devhost.stop()
    clear_queues(storage)


def clear_queues(storage_conn: str) -> str:
    for name in ("captures-classify", "captures-classify-poison", "webjobs-blobtrigger-poison"):
        clear_queue(storage_conn, name)
    return storage_conn


@pytest.fixture
def client(host: DevhostProcess, fake: fake_openai.FakeOpenAI) -> Iterator[httpx.Client]:
    fake.reset()
    fake.set_default(fake_openai.classification("Projects", 0.9, "Kitchen tiles"))
    fake.set_default(fake_openai.transcription("Order the kitchen tiles"), fake_openai.TRANSCRIBE)
    with httpx.Client(base_url=host.base_url, timeout=60) as c:
        yield c
    fake.set_default(fake_openai.classification())
    fake.set_default(fake_openai.transcription(""), fake_openai.TRANSCRIBE)


@pytest.fixture(autouse=True)
def lines_restored(cosmos_line: FaultProxy, storage_lines: tuple[FaultProxy, FaultProxy]):
    """A test that fails mid-fault must not leave the next one without its emulators."""
    yield
    for line in (cosmos_line, *storage_lines):
        line.restore()


def cut_storage(lines: tuple[FaultProxy, FaultProxy]) -> None:
    for line in lines:
        line.cut()


def restore_storage(lines: tuple[FaultProxy, FaultProxy]) -> None:
    for line in lines:
        line.restore()


def chat_calls(fake: fake_openai.FakeOpenAI) -> int:
    return len([r for r in fake.requests if r.kind == fake_openai.CHAT])


def transcribe_calls(fake: fake_openai.FakeOpenAI) -> int:
    return len([r for r in fake.requests if r.kind == fake_openai.TRANSCRIBE])


def stored(cosmos, capture_id: str) -> dict | None:
    """The inbox item as stored (read past the proxies), asserting there is at most one."""
    items = docs(cosmos, "Inbox", capture_id)
    assert len(items) <= 1
    return items[0] if items else None


def filed_in(cosmos, capture_id: str) -> list[str]:
    return [b for b in BUCKETS for _ in docs(cosmos, b, capture_id)]


def assert_filed_once(cosmos, capture_id: str, bucket: str) -> None:
    item = stored(cosmos, capture_id)
    assert item is not None and item["status"] == "filed" and item["filedBucket"] == bucket
    assert item["error"] is None
    assert filed_in(cosmos, capture_id) == [bucket]  # one filed item, in one bucket


def capture(client: httpx.Client, text: str, run_id: str) -> SseRun:
    run = post_run(client, "/api/capture", run_input(text, run_id=run_id), headers=KEY)
    assert_valid_run(run)
    return run


def log_text(host: DevhostProcess) -> str:
    return host.log_path.read_text(errors="replace")


# Cosmos


def test_cosmos_down_during_a_text_capture_is_a_run_error_and_the_retry_files_once(
    client, fake, cosmos, cosmos_line
) -> None:
    run_id = f"cosmos-down-{uuid.uuid4()}"
    capture_id = capture_id_for("dev", run_id)
    cosmos_line.cut()
    failed = capture(client, "order the kitchen tiles", run_id)
    assert failed.types() == ["RUN_STARTED", "RUN_ERROR"]
    assert failed.last()["code"] == "STORAGE_UNAVAILABLE"
    assert "Traceback" not in failed.last()["message"]
    assert stored(cosmos, capture_id) is None
    # Its words went to the model while it was being stored (issue 32); the answer was dropped.
    # Once storage is known down, a capture waits for it before asking the model.
    asked = chat_calls(fake)
    again = capture(client, "order the kitchen tiles", run_id)
    assert again.last()["code"] == "STORAGE_UNAVAILABLE"
    assert chat_calls(fake) == asked
    item = client.get(f"/api/captures/{capture_id}", headers=KEY)
    assert item.status_code == 503 and item.headers["retry-after"]
    assert item.headers["content-type"] == "application/problem+json"

    cosmos_line.restore()
    retried = capture(client, "order the kitchen tiles", run_id)
    assert retried.custom()["name"] == "CLASSIFIED"
    assert retried.custom()["value"]["inboxItemId"] == capture_id
    assert_filed_once(cosmos, capture_id, "Projects")


def test_cosmos_down_during_a_worker_run_is_retried_and_files_once(
    client, fake, cosmos, cosmos_line, host
) -> None:
    fake.set_default(fake_openai.http_error(503))
    run_id = f"worker-cosmos-{uuid.uuid4()}"
    capture_id = capture_id_for("dev", run_id)
    start = len(log_text(host))
    assert capture(client, "order the kitchen tiles", run_id).last()["result"]["status"] == "queued"
    # The worker's first attempt met the model down (and the message waits a second).
    eventually(lambda: "failed on message" in log_text(host)[start:])

    before = len(log_text(host))
    cosmos_line.cut()
    fake.set_default(fake_openai.classification("Projects", 0.9, "Kitchen tiles"))
    # A later attempt fails on Cosmos itself, before asking the model again.
    eventually(lambda: "failed on message" in log_text(host)[before:], timeout=20)
    assert stored(cosmos, capture_id)["status"] == "queued"
    calls_while_cut = chat_calls(fake)

    cosmos_line.restore()
    eventually(lambda: stored(cosmos, capture_id)["status"] == "filed", timeout=20)
    assert_filed_once(cosmos, capture_id, "Projects")
    assert chat_calls(fake) == calls_while_cut + 1 <= 1 + MAX_DEQUEUE


# Storage


def test_storage_down_with_the_model_down_keeps_the_capture_and_the_retry_files_it(
    client, fake, cosmos, storage_lines
) -> None:
    fake.enqueue(fake_openai.http_error(503))
    run_id = f"storage-down-{uuid.uuid4()}"
    capture_id = capture_id_for("dev", run_id)
    cut_storage(storage_lines)
    run = capture(client, "order the kitchen tiles", run_id)
    # Stored in Cosmos, but it could not be queued for the worker: the client is told so.
    assert run.last()["type"] == "RUN_FINISHED"
    assert run.last()["result"] == {"status": "received", "inboxItemId": capture_id}
    assert stored(cosmos, capture_id)["status"] == "received"

    restore_storage(storage_lines)
    retried = capture(client, "order the kitchen tiles", run_id)
    assert retried.custom()["name"] == "CLASSIFIED"
    assert_filed_once(cosmos, capture_id, "Projects")
    assert chat_calls(fake) == 2


def test_storage_down_refuses_a_voice_upload_without_leaving_a_capture_behind(
    client, fake, cosmos, storage_lines
) -> None:
    def waiting_for_audio() -> set[str]:
        page = client.get("/api/inbox?status=awaiting_upload&limit=100", headers=KEY)
        return {i["id"] for i in page.json()["items"]}

    before = waiting_for_audio()
    upload = {"file": ("tiles.m4a", SARAH, "audio/mp4")}
    key = {**KEY, "Idempotency-Key": f"voice-{uuid.uuid4()}"}
    cut_storage(storage_lines)
    refused = client.post("/api/voice-capture", files=upload, headers=key)
    restore_storage(storage_lines)
    assert refused.status_code == 503
    assert refused.headers["content-type"] == "application/problem+json"
    assert int(refused.headers["retry-after"]) > 0
    assert waiting_for_audio() == before  # the half-made capture was removed again

    run = post_voice_capture(client, "tiles.m4a", SARAH, "audio/mp4", headers=key)
    assert_valid_run(run)
    assert run.custom()["name"] == "CLASSIFIED"
    capture_id = run.custom()["value"]["inboxItemId"]
    assert_filed_once(cosmos, capture_id, "Projects")
    assert stored(cosmos, capture_id)["text"] == "Order the kitchen tiles"


# The model


def test_rate_limit_timeout_and_a_garbage_page_are_retried_by_the_worker(
    client, fake, cosmos, host
) -> None:
    start = len(log_text(host))
    fake.enqueue(
        fake_openai.http_error(429, retry_after_ms=10),  # the capture's own attempt
        fake_openai.delay(3.0, fake_openai.classification()),  # worker: over the 2 s timeout
        fake_openai.raw_text("<html>502 Bad Gateway</html>"),  # worker: not a completion
    )
    run_id = f"model-faults-{uuid.uuid4()}"
    capture_id = capture_id_for("dev", run_id)
    assert capture(client, "order the kitchen tiles", run_id).last()["result"]["status"] == "queued"
    eventually(lambda: stored(cosmos, capture_id)["status"] == "filed", timeout=30)
    assert_filed_once(cosmos, capture_id, "Projects")
    assert chat_calls(fake) == 4  # one failed call each, then one that filed it
    # The timed-out call outlasted half the lease: the renewed message was still released
    # with its current pop receipt, not lost to the host until the lease ran out.
    assert "could not process message" not in log_text(host)[start:]


def test_garbage_content_from_the_model_asks_the_user_instead_of_filing(
    client, fake, cosmos
) -> None:
    fake.enqueue(fake_openai.http_error(503), fake_openai.completion("{not json, not anything"))
    run_id = f"model-garbage-{uuid.uuid4()}"
    capture_id = capture_id_for("dev", run_id)
    assert capture(client, "order the kitchen tiles", run_id).last()["result"]["status"] == "queued"

    def answered() -> dict | None:
        item = stored(cosmos, capture_id)
        return item if item and item["status"] != "queued" else None

    item = eventually(answered)
    # A well-formed answer that means nothing is an answer: the user is asked, nothing filed.
    assert item["status"] == "needs_clarification" and item["questionText"]
    assert filed_in(cosmos, capture_id) == []
    feed = get_run(client, f"/api/captures/{capture_id}/events", headers=KEY)
    assert_valid_run(feed)
    assert feed.custom()["name"] == "MISUNDERSTOOD"


# The worker stopped mid-message


def test_a_worker_killed_mid_message_leaves_it_to_the_next_host_which_files_once(
    client, fake, cosmos, host
) -> None:
    fake.enqueue(
        fake_openai.http_error(503),  # the capture's own attempt: queued
        fake_openai.delay(60.0, fake_openai.classification()),  # the worker's: held open
    )
    run_id = f"killed-{uuid.uuid4()}"
    capture_id = capture_id_for("dev", run_id)
    assert capture(client, "order the kitchen tiles", run_id).last()["result"]["status"] == "queued"
    eventually(lambda: chat_calls(fake) == 2)  # the worker is inside the model call
    assert host.proc is not None
    host.proc.kill()  # SIGKILL: no shutdown, the lease is simply no longer renewed
    host.proc.wait()
    host.proc = None
    host.start()

    eventually(lambda: stored(cosmos, capture_id)["status"] == "filed", timeout=30)
    assert_filed_once(cosmos, capture_id, "Projects")
    assert chat_calls(fake) == 3


# Poison: out of retries, the capture fails with its reason


def test_a_model_down_for_good_fails_the_capture_after_max_dequeue_count(
    client, fake, cosmos
) -> None:
    fake.set_default(fake_openai.http_error(503))
    run_id = f"poisoned-{uuid.uuid4()}"
    capture_id = capture_id_for("dev", run_id)
    assert capture(client, "order the kitchen tiles", run_id).last()["result"]["status"] == "queued"

    failed = eventually(lambda: stored(cosmos, capture_id)["status"] == "failed", timeout=40)
    assert failed
    assert chat_calls(fake) == 1 + MAX_DEQUEUE  # every attempt the host allows, no more
    assert_failed_and_visible(client, capture_id, CLASSIFY_FAILED)
    assert filed_in(cosmos, capture_id) == []

    # The model is back: retrying the run files the capture it kept.
    fake.set_default(fake_openai.classification("Projects", 0.9, "Kitchen tiles"))
    assert capture(client, "order the kitchen tiles", run_id).custom()["name"] == "CLASSIFIED"
    assert_filed_once(cosmos, capture_id, "Projects")


def test_a_transcriber_down_for_good_fails_the_voice_capture(client, fake, cosmos) -> None:
    fake.set_default(fake_openai.http_error(503), fake_openai.TRANSCRIBE)
    # The one-request upload follows its capture to the end: here, the failure.
    run = post_voice_capture(client, "tiles.m4a", SARAH, "audio/mp4", headers=KEY)
    assert_valid_run(run)
    assert run.last()["type"] == "RUN_ERROR" and run.last()["code"] == TRANSCRIPTION_FAILED
    capture_id = run.events[0]["runId"]
    assert transcribe_calls(fake) == MAX_DEQUEUE
    assert chat_calls(fake) == 0
    assert_failed_and_visible(client, capture_id, TRANSCRIPTION_FAILED)
    assert filed_in(cosmos, capture_id) == []


def assert_failed_and_visible(client: httpx.Client, capture_id: str, code: str) -> None:
    item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert item["status"] == "failed" and item["error"] == code
    inbox = client.get("/api/inbox?status=failed&limit=100", headers=KEY).json()["items"]
    assert [(i["status"], i["error"]) for i in inbox if i["id"] == capture_id] == [("failed", code)]
    feed = get_run(client, f"/api/captures/{capture_id}/events", headers=KEY)
    assert_valid_run(feed)
    assert feed.last()["type"] == "RUN_ERROR" and feed.last()["code"] == code
    assert feed.last()["message"]


# The poison handlers themselves, against the real Cosmos server


@pytest.fixture
async def app(provisioned: dict[str, str]) -> AsyncIterator[Adapters]:
    yield adapters()
    await reset()


@pytest.fixture
def repo(app: Adapters) -> CaptureRepository:
    return app.repo


async def a_capture(repo: CaptureRepository, status: Status, **fields) -> InboxItem:
    capture_id = fields.pop("id", str(uuid.uuid4()))
    source = fields.pop("source", "text")
    item = InboxItem(
        id=capture_id,
        user_id="dev",
        source=source,
        thread_id=capture_id,
        run_id=capture_id,
        status=status,
        **fields,
    )
    created, _ = await repo.add(item)
    return created


def job(item: InboxItem) -> bytes:
    return f'{{"captureId": "{item.id}", "userId": "{item.user_id}"}}'.encode()


def blob_poison(name: str, container: str = "voice-notes") -> bytes:
    return (
        '{"Type":"BlobTrigger","FunctionId":"Host.Functions.voice_note_uploaded",'
        f'"BlobType":"BlockBlob","ContainerName":"{container}","BlobName":"{name}",'
        '"ETag":"\\"0x8DC\\""}'
    ).encode()


async def test_poison_handlers_fail_once_and_never_downgrade(app, repo) -> None:
    queued = await a_capture(repo, Status.QUEUED, text="pay the rent")
    failed = await fail_poisoned_classify_job(job(queued), app)
    assert failed.status is Status.FAILED and failed.error == CLASSIFY_FAILED
    again = await fail_poisoned_classify_job(job(queued), app)  # a redelivered poison message
    assert again.etag == failed.etag  # nothing written the second time

    filed = await a_capture(repo, Status.FILED, text="call mum", filed_bucket="People")
    assert (await fail_poisoned_classify_job(job(filed), app)).status is Status.FILED
    assert (await repo.get("dev", filed.id)).status is Status.FILED

    blob = f"dev/{uuid.uuid4()}.m4a"
    voice = await a_capture(
        repo, Status.TRANSCRIBING, source="voice", id=blob[4:-4], audio_blob=blob
    )
    failed_voice = await settle_poisoned_voice_note(blob_poison(blob), app)
    assert failed_voice.status is Status.FAILED and failed_voice.error == TRANSCRIPTION_FAILED
    assert (await repo.get("dev", voice.id)).error == TRANSCRIPTION_FAILED


async def test_a_poisoned_voice_note_with_its_transcript_stored_is_queued(
    app, repo, storage_conn, storage_lines
) -> None:
    # The trigger stored the transcript, then could not queue it before running out of tries.
    clear_queue(storage_conn, "captures-classify")
    # The module's devhost, if it runs, would take the job at once: keep it off storage, so
    # the job stays where the handler put it. (This test's app reaches Azurite directly.)
    cut_storage(storage_lines)
    blob = f"dev/{uuid.uuid4()}.m4a"
    stored = await a_capture(
        repo, Status.RECEIVED, source="voice", id=blob[4:-4], audio_blob=blob, text="call mum"
    )
    queued = await settle_poisoned_voice_note(blob_poison(blob), app)
    assert queued.status is Status.QUEUED and queued.error is None
    classify = QueueClient.from_connection_string(storage_conn, "captures-classify")
    (message,) = classify.peek_messages(max_messages=32)
    assert json.loads(base64.b64decode(message.content))["captureId"] == stored.id
    assert (await repo.get("dev", stored.id)).status is Status.QUEUED
    clear_queue(storage_conn, "captures-classify")  # not for the devhost once its line is back


async def test_poison_handlers_ignore_what_is_not_about_a_capture(app, repo) -> None:
    blob = f"dev/{uuid.uuid4()}.m4a"
    waiting = await a_capture(
        repo, Status.AWAITING_UPLOAD, source="voice", id=blob[4:-4], audio_blob=blob
    )
    for body in (b"not json", b'{"captureId": ""}', b"{}", b'"a string"'):
        assert await fail_poisoned_classify_job(body, app) is None
    unknown = f'{{"captureId": "{uuid.uuid4()}", "userId": "dev"}}'.encode()
    assert await fail_poisoned_classify_job(unknown, app) is None
    for body in (
        b"not json",
        b'{"Type": "BlobTrigger"}',
        blob_poison(blob, container="uploads"),  # another trigger's blob
        blob_poison(f"other/{waiting.id}.m4a"),  # another user's folder
        blob_poison(f"dev/{waiting.id}.wav"),  # not the blob the capture waits for
        blob_poison("dev/notes.txt"),
        blob_poison(f"dev/{uuid.uuid4()}.m4a"),  # no such capture
    ):
        assert await settle_poisoned_voice_note(body, app) is None
    assert (await repo.get("dev", waiting.id)).status is Status.AWAITING_UPLOAD
