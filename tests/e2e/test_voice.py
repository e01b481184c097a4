"""Voice capture end to end: the devhost with the offline models (Whisper base, MiniLM), real
Azurite and Cosmos. SAS upload or one-request multipart → BlobCreated from the local Event
Grid to the host's blobs webhook → blob trigger → transcript → classify worker → outcome on
the events feed and the outcomes queue."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient

from shared.domain.capture import InboxItem
from testkit.audio import silent_webm
from testkit.support import (
    ADMIN_KEY,
    DEV_KEYS,
    KEY,
    LOOKING_AT_OUTCOMES,
    OTHER_KEY,
    clear_queue,
    docs,
    eventually,
    running_devhost,
    warmed,
)
from tests.runs import feed_run
from tests.sse import SseRun, assert_valid_run, get_run, parse_sse, post_voice_capture

AUDIO = Path(__file__).parents[1] / "data" / "audio"
VOICE_FUNCTION = "Host.Functions.voice_note_uploaded"
HOST_ID = "voice-tests"  # names the host's blob trigger queue
MAX_VOICE_BYTES = 200_000  # small, so the oversize tests upload little


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("voice")


@pytest.fixture(scope="module")
def host(provisioned: dict[str, str], log_dir: Path) -> Iterator[str]:
    env = {
        **provisioned,
        "API_KEYS": DEV_KEYS,
        "MAX_VOICE_BYTES": str(MAX_VOICE_BYTES),
        "SSE_KEEPALIVE_S": "0.5",
        "EVENTS_TIMEOUT_S": "60",
        "AzureFunctionsWebHost__hostid": HOST_ID,
        **LOOKING_AT_OUTCOMES,
    }
    clear_queue(provisioned["AzureWebJobsStorage"], "captures-outcomes")
    with running_devhost(env, log_dir) as url:
        # Once warm: the first note would otherwise wait for Whisper and MiniLM to load, which
        # on a loaded machine outlasted the feed's 60 s (these tests are not about warm-up).
        yield warmed(url)


@pytest.fixture
def client(host: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=host, timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def blobs(provisioned: dict[str, str]) -> BlobServiceClient:
    return BlobServiceClient.from_connection_string(provisioned["AzureWebJobsStorage"])


def start_upload(client: httpx.Client, content_type: str = "audio/mp4", **kwargs) -> dict:
    r = client.post("/api/voice-notes", json={"contentType": content_type, **kwargs}, headers=KEY)
    assert r.status_code == 201, r.text
    return r.json()


def put_audio(upload: dict, data: bytes) -> httpx.Response:
    return httpx.put(upload["uploadUrl"], content=data, headers=upload["uploadHeaders"])


def outcomes_for(storage_conn: str, capture_id: str) -> list[dict]:
    queue = QueueClient.from_connection_string(storage_conn, "captures-outcomes")
    found = []
    for message in queue.peek_messages(max_messages=32):
        body = json.loads(base64.b64decode(message.content))
        if body["captureId"] == capture_id:
            found.append(body)
    return found


def wait_settled(client: httpx.Client, capture_id: str, headers=KEY) -> dict:
    def settled():
        item = client.get(f"/api/captures/{capture_id}", headers=headers).json()
        return item if item["status"] not in ("awaiting_upload", "transcribing", "queued") else None

    return eventually(settled, timeout=60, interval=0.2)


def step_names(run: SseRun) -> list[str]:
    return [f"{e['type']}:{e['stepName']}" for e in run.events if "stepName" in e]


VOICE_STEPS = [
    "STEP_STARTED:Transcription",
    "STEP_FINISHED:Transcription",
    "STEP_STARTED:Classifier",
    "STEP_FINISHED:Classifier",
]


# The done-when scenario: SAS upload, followed live on the events feed


def test_sas_upload_is_transcribed_filed_and_seen_live(
    client, cosmos, blobs, storage_conn, log_dir
) -> None:
    upload = start_upload(client)
    capture_id = upload["captureId"]
    assert upload["eventsUrl"] == f"/api/captures/{capture_id}/events"
    assert upload["uploadUrl"].startswith("http://127.0.0.1:")
    item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert item["status"] == "awaiting_upload" and item["source"] == "voice"

    # Follow the feed from before the upload: the run must go live to its outcome.
    with client.stream("GET", upload["eventsUrl"], headers=KEY) as response:
        lines = response.iter_lines()
        first = next(line for line in lines if line.startswith("data:"))
        assert json.loads(first[5:])["type"] == "RUN_STARTED"
        assert put_audio(upload, (AUDIO / "call_sarah.m4a").read_bytes()).status_code == 201
        raw = first + "\n\n" + "\n".join(lines)
    run = SseRun(response.status_code, response.headers, raw=raw)
    run.events, run.comments = parse_sse(raw)
    assert_valid_run(run)
    assert step_names(run) == VOICE_STEPS
    custom = run.custom()
    assert custom["name"] == "CLASSIFIED", custom
    assert custom["value"]["bucket"] == "People" and custom["value"]["inboxItemId"] == capture_id
    assert run.last()["type"] == "RUN_FINISHED"
    assert run.events[0]["threadId"] == capture_id  # no threadId asked for: the capture's own

    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert "sarah" in inbox["text"].lower() and "budget" in inbox["text"].lower()
    assert inbox["status"] == "filed" and inbox["filedBucket"] == "People"
    assert len(docs(cosmos, "People", capture_id)) == 1
    # Seen live, so this process took its outcome message back: no push job waits for it.
    assert outcomes_for(storage_conn, capture_id) == []
    # The recording is kept beside its transcript (the default), apart from the uploads,
    # tagged with the retention the lifecycle policy deletes by; its upload is deleted once the
    # capture names the copy. The transcript has Whisper's segments with their times.
    inbox = recording_settled(client, capture_id)
    assert inbox["audioContainer"] == "voice-recordings"
    kept = blobs.get_blob_client("voice-recordings", inbox["audioBlob"])
    assert kept.exists() and kept.get_blob_tags() == {"retention": "365"}
    assert kept.download_blob().readall() == (AUDIO / "call_sarah.m4a").read_bytes()
    uploaded = blobs.get_blob_client("voice-notes", inbox["audioBlob"])
    eventually(lambda: not uploaded.exists(), timeout=30)  # deleted just after the item is saved
    segments = inbox["transcriptSegments"]
    assert segments and all(0 <= s["start"] <= s["end"] <= 3.5 for s in segments)
    assert " ".join(s["text"] for s in segments) == inbox["text"]
    # It came as Azure brings it: Event Grid's BlobCreated posted to the blobs webhook.
    log = (log_dir / "devhost.log").read_text()
    queued = f"Event Grid: voice-notes/{inbox['audioBlob']} queued for {VOICE_FUNCTION}"
    assert queued in log


class _StoreNotToBeRead:
    async def get(self, user_id: str, capture_id: str) -> InboxItem | None:
        raise AssertionError("the feed of a settled capture read the store again")


def _not_marked(item: InboxItem) -> None:
    """The replay is read, not delivered to a user: nothing to tell the outbox."""


async def _replay(item: InboxItem) -> list[str]:
    return [event.type.value async for event in feed_run(item, _StoreNotToBeRead(), _not_marked)]


def test_a_finished_capture_replays_its_whole_run_at_once(client, cosmos) -> None:
    upload = start_upload(client, "audio/wav", threadId="thread-7")
    put_audio(upload, (AUDIO / "call_sarah.wav").read_bytes())
    wait_settled(client, upload["captureId"])
    run = get_run(client, upload["eventsUrl"], headers=KEY)
    assert_valid_run(run)
    assert run.events[0]["threadId"] == "thread-7"
    assert step_names(run) == VOICE_STEPS
    assert run.custom()["name"] == "CLASSIFIED"
    again = get_run(client, upload["eventsUrl"], headers=KEY)
    assert again.types() == run.types()
    # At once: the feed tells the whole run from the item the route read, without polling
    # the store (or waiting to) even once.
    (stored,) = docs(cosmos, "Inbox", upload["captureId"])
    assert asyncio.run(_replay(InboxItem.model_validate(stored))) == run.types()


# One-request upload


def test_multipart_upload_streams_the_run_to_its_outcome(client, cosmos) -> None:
    run = post_voice_capture(
        client, "note.m4a", (AUDIO / "call_sarah.m4a").read_bytes(), "audio/mp4", headers=KEY
    )
    assert_valid_run(run)
    assert step_names(run) == VOICE_STEPS
    custom = run.custom()
    assert custom["name"] == "CLASSIFIED" and custom["value"]["bucket"] == "People"
    (inbox,) = docs(cosmos, "Inbox", custom["value"]["inboxItemId"])
    assert inbox["source"] == "voice" and inbox["audioContentType"] == "audio/mp4"


def test_a_generic_type_is_judged_by_the_file_name(client) -> None:
    data = (AUDIO / "call_sarah.wav").read_bytes()
    run = post_voice_capture(client, "note.wav", data, "application/octet-stream", headers=KEY)
    assert_valid_run(run)
    assert run.custom()["name"] == "CLASSIFIED"


# What cannot be heard or played


def test_a_webm_past_the_limit_ends_too_long_without_a_transcript(client, cosmos) -> None:
    # 11 minutes of silence as the app records it first (a live WebM: no length in its
    # headers), against the default 600 s: refused while decoding, never transcribed whole.
    upload = start_upload(client, "audio/webm")
    with client.stream("GET", upload["eventsUrl"], headers=KEY) as response:
        lines = response.iter_lines()
        first = next(line for line in lines if line.startswith("data:"))
        assert put_audio(upload, silent_webm(11 * 60)).status_code == 201
        raw = first + "\n\n" + "\n".join(lines)
    run = SseRun(response.status_code, response.headers, raw=raw)
    run.events, run.comments = parse_sse(raw)
    assert_valid_run(run)
    last = run.last()
    assert last["type"] == "RUN_ERROR" and last["code"] == "AUDIO_TOO_LONG", last
    (inbox,) = docs(cosmos, "Inbox", upload["captureId"])
    assert inbox["status"] == "failed" and inbox["error"] == "AUDIO_TOO_LONG"
    assert not inbox.get("text")


def test_silence_asks_to_say_it_again(client, cosmos, storage_conn) -> None:
    run = post_voice_capture(
        client, "quiet.wav", (AUDIO / "silence.wav").read_bytes(), "audio/wav", headers=KEY
    )
    assert_valid_run(run)
    custom = run.custom()
    assert custom["name"] == "MISUNDERSTOOD"
    assert "say it again" in custom["value"]["questionText"]
    capture_id = custom["value"]["inboxItemId"]
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["text"] == "" and inbox["status"] == "needs_clarification"
    for bucket in ("People", "Projects", "Ideas", "Admin"):
        assert docs(cosmos, bucket, capture_id) == []
    # The run showed the question live: no push job waits for it.
    assert outcomes_for(storage_conn, capture_id) == []


def test_undecodable_audio_fails_once_with_a_clear_error(
    client, cosmos, storage_conn, log_dir
) -> None:
    run = post_voice_capture(
        client, "broken.m4a", (AUDIO / "not_audio.m4a").read_bytes(), "audio/mp4", headers=KEY
    )
    assert_valid_run(run)
    last = run.last()
    assert last["type"] == "RUN_ERROR" and last["code"] == "AUDIO_UNDECODABLE"
    assert "record it again" in last["message"]
    capture_id = run.events[0]["runId"]
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["status"] == "failed" and inbox["error"] == "AUDIO_UNDECODABLE"
    # A final outcome, not a retry storm: the host deletes the event's message from its
    # blob trigger queue (just after the function returns) and nothing goes to poison.
    eventually(lambda: blob_run_over(log_dir, storage_conn, inbox["audioBlob"]))
    assert not poisoned(storage_conn, inbox["audioBlob"])


def poisoned(storage_conn: str, blob_name: str) -> list[dict]:
    queue = QueueClient.from_connection_string(storage_conn, "webjobs-blobtrigger-poison")
    try:
        messages = queue.peek_messages(max_messages=32)
    except ResourceNotFoundError:
        return []
    bodies = [json.loads(base64.b64decode(m.content)) for m in messages]
    return [b for b in bodies if b["BlobName"] == blob_name]


# Bad requests


@pytest.mark.parametrize("content_type", ["text/plain", "image/png", "audio/flac", ""])
def test_voice_notes_refuses_what_is_not_audio_we_take(client, content_type) -> None:
    r = client.post("/api/voice-notes", json={"contentType": content_type}, headers=KEY)
    assert r.status_code == (415 if content_type else 422)
    assert r.headers["content-type"] == "application/problem+json"


def test_multipart_of_the_wrong_type_is_415_and_stores_nothing(client, cosmos) -> None:
    before = len(list(cosmos.get_container_client("Inbox").read_all_items()))
    r = client.post(
        "/api/voice-capture", files={"file": ("notes.txt", b"hello", "text/plain")}, headers=KEY
    )
    assert r.status_code == 415
    assert r.json()["code"] == "UNSUPPORTED_AUDIO_TYPE"
    assert len(list(cosmos.get_container_client("Inbox").read_all_items())) == before


def test_oversize_upload_is_413_whether_declared_or_streamed(client, cosmos, blobs) -> None:
    big = b"\0" * (MAX_VOICE_BYTES + 10)
    declared = client.post(
        "/api/voice-capture", files={"file": ("big.wav", big, "audio/wav")}, headers=KEY
    )
    assert declared.status_code == 413 and declared.json()["code"] == "AUDIO_TOO_LARGE"

    # Chunked, no Content-Length: found out while streaming; the capture is removed again.
    body = httpx.Request("POST", "http://x", files={"file": ("big.wav", big, "audio/wav")})
    payload = body.read()

    def chunks():
        for i in range(0, len(payload), 16_384):
            yield payload[i : i + 16_384]

    before = {i["id"] for i in cosmos.get_container_client("Inbox").read_all_items()}
    streamed = client.post(
        "/api/voice-capture",
        content=chunks(),
        headers={**KEY, "content-type": body.headers["content-type"]},
    )
    assert streamed.status_code == 413, streamed.text
    assert streamed.json()["code"] == "AUDIO_TOO_LARGE"
    after = {i["id"] for i in cosmos.get_container_client("Inbox").read_all_items()}
    assert after == before  # nothing accepted, nothing left behind


def test_multipart_without_a_file_is_422(client) -> None:
    r = client.post("/api/voice-capture", files=[("note", (None, "hi"))], headers=KEY)
    assert r.status_code == 422 and r.json()["code"] == "NO_FILE"


def test_voice_routes_need_a_key(client) -> None:
    assert client.post("/api/voice-notes", json={"contentType": "audio/mp4"}).status_code == 401
    assert client.post("/api/voice-capture", files={"file": ("a.m4a", b"x")}).status_code == 401
    some_id = str(uuid.uuid4())
    assert client.get(f"/api/captures/{some_id}").status_code == 401
    assert client.get(f"/api/captures/{some_id}/events").status_code == 401


# Users and the upload URL's scope


def test_another_user_cannot_read_a_capture(client) -> None:
    upload = start_upload(client)
    capture_id = upload["captureId"]
    assert client.get(f"/api/captures/{capture_id}", headers=OTHER_KEY).status_code == 404
    r = client.get(f"/api/captures/{capture_id}/events", headers=OTHER_KEY)
    assert r.status_code == 404 and r.headers["content-type"] == "application/problem+json"
    # The same answer as for a capture that does not exist: ids reveal nothing.
    unknown = client.get(f"/api/captures/{uuid.uuid4()}", headers=KEY)
    assert unknown.status_code == 404 and unknown.json() == r.json()
    assert client.get("/api/captures/not-an-id", headers=KEY).status_code == 404


def test_the_upload_url_creates_exactly_one_blob_once(client, blobs) -> None:
    upload = start_upload(client, "audio/wav")
    url = httpx.URL(upload["uploadUrl"])
    headers = upload["uploadHeaders"]
    other = url.copy_with(path=url.path.rsplit("/", 1)[0] + f"/{uuid.uuid4()}.wav")
    assert httpx.put(other, content=b"x", headers=headers).status_code == 403
    sibling = url.copy_with(path=url.path.replace("/dev/", "/other/"))
    assert httpx.put(sibling, content=b"x", headers=headers).status_code == 403
    data = (AUDIO / "silence.wav").read_bytes()
    assert httpx.put(url, content=data, headers=headers).status_code == 201
    assert httpx.put(url, content=b"overwrite", headers=headers).status_code == 403
    assert httpx.get(url).status_code == 403  # it cannot read, not even its own blob
    assert httpx.delete(url).status_code == 403


def test_a_blob_in_another_users_folder_touches_no_capture(
    client, blobs, cosmos, storage_conn, log_dir
) -> None:
    upload = start_upload(client)
    capture_id = upload["captureId"]
    # Someone with storage access drops audio under another user with this capture's id.
    stray = blobs.get_blob_client("voice-notes", f"other/{capture_id}.m4a")
    stray.upload_blob((AUDIO / "call_sarah.m4a").read_bytes())
    eventually(lambda: blob_run_over(log_dir, storage_conn, f"other/{capture_id}.m4a"))
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["userId"] == "dev" and inbox["status"] == "awaiting_upload"
    assert stray.exists()  # left for an operator; nobody's capture changed


def blob_run_over(log_dir: Path, storage_conn: str, blob_name: str) -> bool:
    """The blob's BlobCreated reached the webhook and the host's blob trigger queue is empty
    again: the run it queued has finished (its message is deleted after the call)."""
    if f"Event Grid: voice-notes/{blob_name} queued" not in (log_dir / "devhost.log").read_text():
        return False
    queue = QueueClient.from_connection_string(storage_conn, f"azure-webjobs-blobtrigger-{HOST_ID}")
    return queue.get_queue_properties().approximate_message_count == 0


def test_get_capture_returns_the_inbox_item(client) -> None:
    upload = start_upload(client, "audio/ogg")
    r = client.get(f"/api/captures/{upload['captureId']}", headers=KEY)
    assert r.status_code == 200
    item = r.json()
    assert item["id"] == upload["captureId"] and item["userId"] == "dev"
    assert item["audioBlob"] == f"dev/{upload['captureId']}.ogg"
    assert item["audioContentType"] == "audio/ogg"
    assert "_etag" not in item and "etag" not in item


# The events feed gives up after EVENTS_TIMEOUT_S; reconnecting resumes


@pytest.fixture(scope="module")
def impatient_host(provisioned: dict[str, str], tmp_path_factory) -> Iterator[str]:
    env = {
        **provisioned,
        "API_KEYS": DEV_KEYS,
        "EVENTS_TIMEOUT_S": "1.5",
        "SSE_KEEPALIVE_S": "0.4",
    }
    with running_devhost(env, tmp_path_factory.mktemp("voice-timeout")) as url:
        yield url


def test_the_feed_times_out_then_resumes_to_the_outcome(impatient_host, cosmos) -> None:
    with httpx.Client(base_url=impatient_host, timeout=30) as client:
        upload = start_upload(client)
        waiting = get_run(client, upload["eventsUrl"], headers=KEY)
        assert_valid_run(waiting)
        assert waiting.types() == ["RUN_STARTED", "RUN_ERROR"]
        assert waiting.last()["code"] == "TIMEOUT"
        assert waiting.comments.count("keepalive") >= 2  # silence is filled every 0.4 s
        (inbox,) = docs(cosmos, "Inbox", upload["captureId"])
        assert inbox["status"] == "awaiting_upload"  # the capture is unaffected

        # The models loading is not what this is about: on a busy machine their warm-up
        # alone outlasted 30 reconnects of 1.5 s.
        warmed(impatient_host)
        assert put_audio(upload, (AUDIO / "call_sarah.wav").read_bytes()).status_code == 201
        runs = [get_run(client, upload["eventsUrl"], headers=KEY)]
        while runs[-1].last()["type"] == "RUN_ERROR":  # still transcribing and filing
            assert runs[-1].last()["code"] == "TIMEOUT" and len(runs) < 30
            runs.append(get_run(client, upload["eventsUrl"], headers=KEY))
        for run in runs:
            assert_valid_run(run)
            assert run.events[0]["runId"] == upload["captureId"]  # the same run each time
        assert runs[-1].custom()["name"] == "CLASSIFIED"
        assert step_names(runs[-1]) == VOICE_STEPS


# The recording kept: played back, transcribed again, deleted alone (issue 44)


def voice_capture_of(client: httpx.Client, name: str = "call_sarah.m4a", headers=KEY) -> str:
    """A voice note filed through the one-request door: its capture id."""
    data = (AUDIO / name).read_bytes()
    run = post_voice_capture(client, name, data, "audio/mp4", headers=headers)
    assert run.custom()["name"] == "CLASSIFIED", run.custom()
    capture_id = run.custom()["value"]["inboxItemId"]
    recording_settled(client, capture_id, headers)
    return capture_id


def recording_settled(client: httpx.Client, capture_id: str, headers=KEY) -> dict:
    """The capture once the blob trigger is done with its recording (after the job is queued,
    so possibly after the outcome): kept apart from the uploads, or let go."""

    def settled() -> dict | None:
        item = client.get(f"/api/captures/{capture_id}", headers=headers).json()
        return item if item.get("audioContainer") or item["audioDeletedAt"] else None

    return eventually(settled, timeout=30, interval=0.1)


def test_the_recording_is_played_back_by_its_owner_a_range_at_a_time(client) -> None:
    capture_id = voice_capture_of(client)
    audio = (AUDIO / "call_sarah.m4a").read_bytes()
    url = f"/api/captures/{capture_id}/audio"

    whole = client.get(url, headers=KEY)
    assert whole.status_code == 200 and whole.content == audio
    assert whole.headers["content-type"] == "audio/mp4"
    assert whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["content-length"] == str(len(audio))

    part = client.get(url, headers={**KEY, "Range": "bytes=100-1123"})
    assert part.status_code == 206 and part.content == audio[100:1124]
    assert part.headers["content-range"] == f"bytes 100-1123/{len(audio)}"
    tail = client.get(url, headers={**KEY, "Range": "bytes=-10"})
    assert tail.status_code == 206 and tail.content == audio[-10:]

    past = client.get(url, headers={**KEY, "Range": f"bytes={len(audio)}-"})
    assert past.status_code == 416
    assert past.headers["content-type"] == "application/problem+json"
    assert past.json()["code"] == "RANGE_NOT_SATISFIABLE"
    assert past.headers["content-range"] == f"bytes */{len(audio)}"

    # Only its owner: another user is told what they would be told of no capture at all.
    other = client.get(url, headers=OTHER_KEY)
    unknown = client.get(f"/api/captures/{uuid.uuid4()}/audio", headers=KEY)
    assert other.status_code == unknown.status_code == 404 and other.json() == unknown.json()
    assert client.get(url).status_code == 401
    text = client.post("/api/captures", json={"text": "Buy milk"}, headers=KEY).json()
    none = client.get(f"/api/captures/{text['id']}/audio", headers=KEY)
    assert none.status_code == 404 and none.json()["code"] == "NO_AUDIO"


def test_transcribing_again_keeps_the_users_bucket_and_edit(client, cosmos) -> None:
    capture_id = voice_capture_of(client)
    picked = client.post(
        f"/api/captures/{capture_id}/bucket", json={"bucket": "Admin"}, headers=KEY
    )
    assert picked.status_code == 200, picked.text
    (filed,) = docs(cosmos, "Admin", capture_id)
    edited = client.patch(
        f"/api/captures/{capture_id}",
        json={"title": "Budget call"},
        headers={**KEY, "If-Match": filed["_etag"]},
    )
    assert edited.status_code == 200, edited.text
    before = client.get(f"/api/captures/{capture_id}", headers=KEY).json()

    asked = client.post(f"/api/captures/{capture_id}/transcribe", headers=KEY)
    assert asked.status_code == 202, asked.text
    assert asked.headers["location"] == f"/api/captures/{capture_id}"
    requested = asked.json()["transcriptionRequestedAt"]
    assert requested and requested > before["transcribedAt"]

    def transcribed_again() -> dict | None:
        item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
        return item if item["transcribedAt"] >= requested else None

    after = eventually(transcribed_again, timeout=60, interval=0.2)
    assert "sarah" in after["text"].lower() and after["transcriptSegments"]
    assert (after["filedBucket"], after["chosenBy"], after["title"]) == (
        "Admin",
        "user",
        "Budget call",
    )
    (filed,) = docs(cosmos, "Admin", capture_id)
    assert filed["title"] == "Budget call" and filed["text"] == after["text"]


def test_deleting_the_recording_keeps_the_capture_and_its_words(client, blobs) -> None:
    capture_id = voice_capture_of(client)
    item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    name = item["audioBlob"]
    # Another user's: 204 as for any capture not theirs, and nothing is deleted.
    assert client.delete(f"/api/captures/{capture_id}/audio", headers=OTHER_KEY).status_code == 204
    assert blobs.get_blob_client(item["audioContainer"], name).exists()

    assert client.delete(f"/api/captures/{capture_id}/audio", headers=KEY).status_code == 204
    after = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert after["text"] == item["text"] and after["filedBucket"] == item["filedBucket"]
    assert after["audioBlob"] is None and after["audioDeletedAt"]
    assert not blobs.get_blob_client(item["audioContainer"], name).exists()
    gone = client.get(f"/api/captures/{capture_id}/audio", headers=KEY)
    assert gone.status_code == 404 and gone.json()["code"] == "AUDIO_DELETED"
    again = client.post(f"/api/captures/{capture_id}/transcribe", headers=KEY)
    assert again.status_code == 409 and again.json()["code"] == "AUDIO_DELETED"
    assert client.delete(f"/api/captures/{capture_id}/audio", headers=KEY).status_code == 204


def test_a_user_who_keeps_no_recordings_has_each_one_deleted_once_transcribed(
    client, blobs
) -> None:
    prefs = {"timeZone": "UTC", "keepAudio": False}
    put = client.put("/api/preferences", json=prefs, headers=OTHER_KEY)
    assert put.status_code == 200 and put.json()["keepAudio"] is False, put.text
    try:
        capture_id = voice_capture_of(client, headers=OTHER_KEY)

        def let_go() -> dict | None:
            item = client.get(f"/api/captures/{capture_id}", headers=OTHER_KEY).json()
            return item if item["audioDeletedAt"] else None

        item = eventually(let_go, timeout=30, interval=0.2)
        assert item["audioBlob"] is None and "sarah" in item["text"].lower()
        for container in ("voice-notes", "voice-recordings"):
            listed = blobs.get_container_client(container).list_blobs(name_starts_with="other")
            assert [b.name for b in listed if capture_id in b.name] == []
    finally:
        client.put("/api/preferences", json={"timeZone": "UTC"}, headers=OTHER_KEY)


def test_retention_days_are_a_preference(client) -> None:
    bad = client.put(
        "/api/preferences", json={"timeZone": "UTC", "audioRetentionDays": 0}, headers=KEY
    )
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/problem+json"
    got = client.get("/api/preferences", headers=KEY).json()
    assert got["keepAudio"] is True and got["audioRetentionDays"] == 365


def test_the_export_carries_the_recordings_beside_their_notes(client) -> None:
    import io
    import zipfile

    capture_id = voice_capture_of(client)
    audio = (AUDIO / "call_sarah.m4a").read_bytes()
    r = client.get("/api/export", params={"audio": "true"}, headers=KEY)
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(r.content))
    assert archive.testzip() is None
    lines = [json.loads(line) for line in archive.read("captures.jsonl").splitlines()]
    (mine,) = [line for line in lines if line["id"] == capture_id]
    assert mine["audioBlob"] and mine["transcriptSegments"]
    recordings = [n for n in archive.namelist() if n.endswith(".m4a")]
    embedded = [n for n in recordings if f"![[{n}]]" in archive.read(n[:-4] + ".md").decode()]
    assert embedded == recordings and audio in [archive.read(n) for n in recordings]
    # Every recording captures.jsonl names is one that exists (but for a note still waiting
    # for its upload: its blob is where the upload will go).
    arrived = [line for line in lines if line["status"] != "awaiting_upload"]
    for named in (line["audioBlob"] for line in arrived if line.get("audioBlob")):
        client_blob = client.get(
            f"/api/captures/{named.split('/')[1].split('.')[0]}/audio", headers=KEY
        )
        assert client_blob.status_code == 200, named
    assert client.get("/api/export", params={"audio": "maybe"}, headers=KEY).status_code == 422


def test_a_silent_notes_question_is_answered_by_recording_again(client) -> None:
    run = post_voice_capture(
        client, "quiet.wav", (AUDIO / "silence.wav").read_bytes(), "audio/wav", headers=KEY
    )
    assert run.custom()["name"] == "MISUNDERSTOOD"
    capture_id = run.custom()["value"]["inboxItemId"]
    url = f"/api/captures/{capture_id}/spoken-answer"
    spoken = (AUDIO / "call_sarah.m4a").read_bytes()
    r = client.post(url, files={"file": ("again.m4a", spoken, "audio/mp4")}, headers=KEY)
    assert r.status_code == 200, r.text
    heard = r.json()
    assert "sarah" in heard["text"].lower() and heard["segments"]
    # Nothing stored: the question is still open, for the client to answer with these words.
    item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert item["status"] == "needs_clarification" and item["text"] == ""
    other = client.post(url, files={"file": ("a.m4a", spoken, "audio/mp4")}, headers=OTHER_KEY)
    assert other.status_code == 404
    wrong = client.post(url, files={"file": ("a.txt", b"hello", "text/plain")}, headers=KEY)
    assert wrong.status_code == 415
    filed = voice_capture_of(client)
    asks_nothing = client.post(
        f"/api/captures/{filed}/spoken-answer",
        files={"file": ("a.m4a", spoken, "audio/mp4")},
        headers=KEY,
    )
    assert asks_nothing.status_code == 409
    assert asks_nothing.json()["code"] == "NOT_AWAITING_CLARIFICATION"


def test_the_retention_timer_lets_go_of_what_its_owner_no_longer_keeps(client, blobs) -> None:
    """The timer the devhost runs daily, fired by hand: the same rule as the lifecycle policy.
    A user who now keeps no recordings has theirs deleted (the capture says so); one who keeps
    them 30 days has theirs tagged for the policy's 30-day rule."""
    capture_id = voice_capture_of(client, headers=OTHER_KEY)
    item = client.get(f"/api/captures/{capture_id}", headers=OTHER_KEY).json()
    kept = blobs.get_blob_client(item["audioContainer"], item["audioBlob"])
    assert kept.get_blob_tags() == {"retention": "365"}
    mine = voice_capture_of(client)
    mine_item = client.get(f"/api/captures/{mine}", headers=KEY).json()
    prefs = [
        (OTHER_KEY, {"timeZone": "UTC", "keepAudio": False}),
        (KEY, {"timeZone": "UTC", "audioRetentionDays": 30}),
    ]
    for headers, body in prefs:
        assert client.put("/api/preferences", json=body, headers=headers).status_code == 200
    try:
        fired = client.post(
            "/admin/functions/audio_retention_timer", json={"input": ""}, headers=ADMIN_KEY
        )
        assert fired.status_code == 202, fired.text

        def let_go() -> dict | None:
            now = client.get(f"/api/captures/{capture_id}", headers=OTHER_KEY).json()
            return now if now["audioDeletedAt"] else None

        gone = eventually(let_go, timeout=30, interval=0.2)
        assert gone["audioBlob"] is None and gone["text"] == item["text"]
        assert not kept.exists()
        tagged = blobs.get_blob_client(mine_item["audioContainer"], mine_item["audioBlob"])
        eventually(lambda: tagged.get_blob_tags() == {"retention": "30"}, timeout=30)
    finally:
        for headers, _ in prefs:
            client.put("/api/preferences", json={"timeZone": "UTC"}, headers=headers)
