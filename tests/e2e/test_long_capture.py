"""Issue 39: a long capture is kept whole. 20,000 characters (a long paste, a long dictation
from a Shortcut) through both doors, over a devhost, Azurite, Cosmos and the scripted model:
stored whole, filed whole, the model asked about its start and its end only; what is over
the limit is refused with a code."""

from __future__ import annotations

import base64
import io
import wave
from collections.abc import Iterator

import pytest

from shared.domain.classification import EXCERPT_GAP, excerpt_to_classify
from testkit import fake_openai
from testkit.support import KEY, docs, run_input, running_devhost
from tests.sse import assert_valid_run, post_run

FILED = fake_openai.classification("Ideas", 0.9, "Notes for the garden book")
# Numbered words, so that a cut anywhere shows; the last ones say something of their own.
LONG = " ".join(f"w{n}" for n in range(4000))[:19_960] + " and call Sarah on Friday."
assert len(LONG) >= 19_980


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("long-capture")) as url:
        yield url


def assert_kept_whole(cosmos, capture_id: str, fake) -> None:
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["status"] == "filed" and inbox["filedBucket"] == "Ideas"
    assert inbox["text"] == LONG
    (idea,) = docs(cosmos, "Ideas", capture_id)
    assert idea["text"] == LONG
    # The model read the start and the end, with the gap shown; nothing stored was cut.
    (request,) = fake.requests_of(fake_openai.CHAT)
    asked = request.messages[-1]["content"]
    assert excerpt_to_classify(LONG) in asked and EXCERPT_GAP in asked
    assert LONG not in asked and asked.rstrip().endswith("call Sarah on Friday.")


def test_a_long_capture_through_the_agui_door_is_stored_and_filed_whole(
    client, fake, cosmos
) -> None:
    fake.enqueue(FILED)
    run = post_run(client, "/api/capture", run_input(LONG), headers=KEY)
    assert_valid_run(run)
    assert run.custom()["name"] == "CLASSIFIED"
    capture_id = run.custom()["value"]["inboxItemId"]
    assert_kept_whole(cosmos, capture_id, fake)
    shown = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert shown["text"] == LONG


def test_a_long_capture_through_the_plain_json_door_is_stored_and_filed_whole(
    client, fake, cosmos
) -> None:
    fake.enqueue(FILED)
    answer = client.post("/api/captures", json={"text": LONG}, headers=KEY)
    assert answer.status_code == 201, answer.text[:300]
    item = answer.json()
    assert item["text"] == LONG and item["filedBucket"] == "Ideas"
    assert_kept_whole(cosmos, item["id"], fake)


@pytest.mark.parametrize("door", ["/api/capture", "/api/captures"])
def test_over_the_limit_is_refused_with_a_code_and_nothing_is_stored(
    client, fake, cosmos, door
) -> None:
    text = "x " * 50_000 + "x"  # 100,001 characters
    body = run_input(text) if door == "/api/capture" else {"text": text}
    answer = client.post(door, json=body, headers=KEY)
    assert answer.status_code == 422, answer.text[:300]
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "CAPTURE_TOO_LONG"
    assert "100000" in answer.json()["detail"] or "100,000" in answer.json()["detail"]
    assert fake.requests == []


def silent_wav(seconds: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16_000)
        w.writeframes(b"\0\0" * 16_000 * seconds)
    return out.getvalue()


def test_a_voice_note_past_the_body_limit_in_a_run_is_taken_and_filed(client, fake, cosmos) -> None:
    """Its base64 is the one string a run may carry past the text routes' limit: it is read
    without being parsed, and the note is stored and filed like any other."""
    audio = silent_wav(40)  # 1.28 MB: 1.7 MB as base64, past the 1,062,144 bytes a run takes
    fake.set_default(fake_openai.transcription("an idea for the garden"), fake_openai.TRANSCRIBE)
    fake.enqueue(FILED)
    part = {
        "type": "audio",
        "source": {
            "type": "data",
            "value": base64.b64encode(audio).decode(),
            "mimeType": "audio/wav",
        },
    }
    run = post_run(client, "/api/capture", run_input([part]), headers=KEY)
    assert_valid_run(run)
    result = run.last()["result"]
    assert result["outcome"] == "CLASSIFIED"
    (inbox,) = docs(cosmos, "Inbox", result["inboxItemId"])
    assert inbox["source"] == "voice" and inbox["text"] == "an idea for the garden"
