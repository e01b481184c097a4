"""The official AG-UI client, @ag-ui/client 1.0 (npm, pinned in package.json), against a real
devhost: what any AG-UI app sees of our interrupts. tests/agui_client/scenario.mjs drives it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit import fake_openai
from testkit.support import KEY, docs, running_devhost

SCENARIO = Path(__file__).parents[1] / "agui_client" / "scenario.mjs"
AUDIO = Path(__file__).parents[1] / "data" / "audio" / "call_sarah.wav"

UNCLEAR = fake_openai.classification(None, 0.1, "?", question="What about the tiles?")
UNSURE = fake_openai.classification("Projects", 0.45, "Kitchen tiles")
FILED = fake_openai.classification("Projects", 0.9, "Kitchen tiles")


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("official-client")) as url:
        yield url


def scenario(host: str, name: str, **said: str) -> dict:
    """`said`: SAID and ANSWER, the capture and the answer the scenario types."""
    env = {**os.environ, "BASE_URL": host, "API_KEY": KEY["X-API-Key"], "AUDIO": str(AUDIO)}
    env |= said
    done = subprocess.run(
        ["node", str(SCENARIO), name], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_an_answer_built_by_the_client_files_the_capture(host, fake) -> None:
    fake.reset()
    fake.enqueue(UNCLEAR, FILED)
    seen = scenario(host, "answer")
    asked, filed = seen["asked"], seen["filed"]
    assert asked["protocolVersion"] == "1.0" and asked["errors"] == []
    (pending,) = asked["pending"]
    assert pending["reason"] == "input_required" and pending["metadata"]["kind"] == "answer"
    assert asked["state"]["status"] == "needs_clarification"  # from the STATE_SNAPSHOT
    assert seen["resume"] == [
        {
            "interruptId": pending["id"],
            "status": "resolved",
            "payload": {"answer": "order the kitchen tiles"},
        }
    ]
    assert filed["errors"] == [] and filed["pending"] == []
    assert filed["result"]["outcome"] == "CLASSIFIED" and filed["result"]["bucket"] == "Projects"
    assert filed["result"]["inboxItemId"] == pending["metadata"]["captureId"]


def test_a_bucket_picked_through_the_client_files_it_there(host, fake, cosmos) -> None:
    fake.reset()
    fake.enqueue(UNSURE)
    seen = scenario(host, "pick")
    (pending,) = seen["asked"]["pending"]
    assert pending["reason"] == "confirmation" and pending["metadata"]["bucket"] == "Projects"
    filed = seen["filed"]
    assert filed["pending"] == [] and filed["result"]["bucket"] == "Admin"
    (inbox,) = docs(cosmos, "Inbox", pending["metadata"]["captureId"])
    assert inbox["filedBucket"] == "Admin" and inbox["chosenBy"] == "user"


def test_a_bucket_typed_in_the_box_files_it_there(host, fake, cosmos) -> None:
    fake.reset()
    fake.enqueue(UNSURE)
    seen = scenario(host, "typed", ANSWER="it's an admin one")
    (pending,) = seen["asked"]["pending"]
    assert "anyOf" in pending["responseSchema"]  # a bucket or an answer
    filed = seen["filed"]
    assert filed["errors"] == [] and filed["pending"] == []
    assert filed["result"]["outcome"] == "CLASSIFIED" and filed["result"]["bucket"] == "Admin"
    capture_id = pending["metadata"]["captureId"]
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert (inbox["filedBucket"], inbox["title"]) == ("Admin", "Kitchen tiles")
    assert docs(cosmos, "Projects", capture_id) == []
    # The capture's; the typed bucket asked no model (its words were embedded with it).
    assert len(fake.requests_of(fake_openai.CHAT)) == 1


def test_a_cancel_through_the_client_leaves_the_capture(host, fake, cosmos) -> None:
    fake.reset()
    fake.enqueue(UNSURE)
    seen = scenario(host, "cancel")
    (pending,) = seen["asked"]["pending"]
    cancelled = seen["cancelled"]
    assert cancelled["errors"] == [] and cancelled["pending"] == []
    assert cancelled["result"]["status"] == "needs_review"
    (inbox,) = docs(cosmos, "Inbox", pending["metadata"]["captureId"])
    assert inbox["filedBucket"] == "Projects" and inbox["interrupts"][-1]["status"] == "cancelled"


def test_new_input_is_refused_while_a_question_is_open(host, fake) -> None:
    fake.reset()
    fake.enqueue(UNCLEAR)
    seen = scenario(host, "refused")
    assert seen["asked"]["pending"]
    # The client itself will not send it without a resume; another client is refused by us.
    assert "pending interrupt" in seen["sameAgent"]["thrown"]
    assert seen["otherAgent"]["errors"] == ["INTERRUPT_PENDING"]


def test_the_same_resume_replayed_gives_the_same_answer_and_files_once(host, fake, cosmos) -> None:
    fake.reset()
    fake.enqueue(UNCLEAR, FILED)
    seen = scenario(host, "replay")
    first, again = seen["first"], seen["again"]
    assert first["result"]["outcome"] == again["result"]["outcome"] == "CLASSIFIED"
    capture_id = first["result"]["inboxItemId"]
    assert again["result"]["inboxItemId"] == capture_id and again["errors"] == []
    assert len(docs(cosmos, "Projects", capture_id)) == 1
    assert len(fake.requests_of(fake_openai.CHAT)) == 2  # the replay asked no model


def test_a_voice_notes_feed_asks_and_the_answer_files_it(host, fake, cosmos) -> None:
    fake.reset()
    fake.set_default(fake_openai.transcription("tiles for the kitchen"), fake_openai.TRANSCRIBE)
    fake.enqueue(UNSURE)
    seen = scenario(host, "voice")
    assert seen["uploaded"] == 201
    asked = seen["asked"]
    assert asked["protocolVersion"] == "1.0" and asked["errors"] == []
    (pending,) = asked["pending"]
    assert pending["metadata"]["captureId"] == seen["captureId"]
    filed = seen["filed"]
    assert filed["errors"] == [] and filed["result"]["bucket"] == "People"
    (inbox,) = docs(cosmos, "Inbox", seen["captureId"])
    assert inbox["source"] == "voice" and inbox["filedBucket"] == "People"


VOICE_RUN = ["Transcription", "Classifier"]


@pytest.mark.parametrize("name", ["audio", "binary"])
def test_an_audio_part_is_a_voice_note_in_one_run(host, fake, cosmos, name) -> None:
    fake.reset()
    fake.set_default(
        fake_openai.transcription("call Sarah about the budget"), fake_openai.TRANSCRIBE
    )
    fake.enqueue(fake_openai.classification("People", 0.92, "Call Sarah"))
    seen = scenario(host, name)
    assert seen["errors"] == [] and "thrown" not in seen, seen
    assert seen["events"][0] == "RUN_STARTED" and seen["events"][-1] == "RUN_FINISHED"
    assert seen["steps"] == VOICE_RUN
    result = seen["result"]
    assert result["outcome"] == "CLASSIFIED" and result["bucket"] == "People"
    (inbox,) = docs(cosmos, "Inbox", result["inboxItemId"])
    assert inbox["source"] == "voice" and inbox["text"] == "call Sarah about the budget"
    assert inbox["filedBucket"] == "People"


def test_an_audio_part_naming_an_uploaded_note_follows_it_in_one_run(host, fake, cosmos) -> None:
    fake.reset()
    fake.set_default(
        fake_openai.transcription("call Sarah about the budget"), fake_openai.TRANSCRIBE
    )
    fake.enqueue(fake_openai.classification("People", 0.92, "Call Sarah"))
    seen = scenario(host, "audioUrl")
    assert seen["uploaded"] == 201
    run = seen["seen"]
    assert run["errors"] == [] and run["steps"] == VOICE_RUN
    assert run["result"]["inboxItemId"] == seen["captureId"]
    assert run["result"]["outcome"] == "CLASSIFIED"
