"""The capture app as a person uses it on a phone, in headless Chromium (tests/browser/drive.mjs),
against a devhost and the scripted model: what the screen shows, and what the API stored.
Every screen is checked with axe-core and its picture taken (into docs/screenshots/ with
UPDATE_SCREENSHOTS=1)."""

from __future__ import annotations

import httpx
import pytest

from tests import fake_openai
from tests.support import KEY, docs, run_input

FILED = fake_openai.classification("People", 0.92, "Call Sarah about the budget")
UNCLEAR = fake_openai.classification(None, 0.1, "?", question="What about the tiles?")
UNSURE = fake_openai.classification("Projects", 0.45, "Kitchen tiles")
TILES = fake_openai.classification("Projects", 0.9, "Order the kitchen tiles")


def inbox_by_text(cosmos, text: str) -> list[dict]:
    return list(
        cosmos.get_container_client("Inbox").query_items(
            "SELECT * FROM c WHERE c.text = @text",
            parameters=[{"name": "@text", "value": text}],
            enable_cross_partition_query=True,
        )
    )


def test_a_text_capture_shows_its_progress_and_is_filed(browser, fake, cosmos) -> None:
    # The model takes a moment, so the screen has time to show the step under way.
    fake.enqueue(fake_openai.delay(1.0, FILED))
    seen = browser("text")
    assert seen["progress"] == "Classifying…"
    assert seen["badge"] == "Filed"
    assert seen["header"] == "Capture"
    # The title is the text's first words: the outcome line does not say them again.
    assert seen["outcome"] == "Filed → People"
    (item,) = inbox_by_text(cosmos, "Call Sarah about the budget review")
    assert item["status"] == "filed" and item["threadId"].startswith("t-")
    assert len(docs(cosmos, "People", item["id"])) == 1


def test_an_unclear_capture_asks_and_the_answer_files_it(browser, fake, cosmos) -> None:
    fake.enqueue(UNCLEAR, TILES)
    seen = browser("answer")
    assert seen["question"] == "What about the tiles?"
    assert seen["outcome"] == "Filed → Projects · Order the kitchen tiles"
    (item,) = inbox_by_text(cosmos, "zq tiles")
    assert [c["text"] for c in item["clarifications"]] == ["order the kitchen tiles"]
    assert item["interrupts"][-1]["status"] == "resolved"  # answered as an AG-UI resume
    assert item["filedBucket"] == "Projects"


def test_low_confidence_offers_the_buckets_and_the_pick_files_it(browser, fake, cosmos) -> None:
    fake.enqueue(UNSURE, UNSURE)
    seen = browser("pick")
    # Confidence in words, not "(0.45)".
    assert seen["prompt"].startswith("Filed under Projects for now (not sure).")
    # The buttons come from the interrupt's responseSchema; the bucket it is in is marked.
    assert seen["choices"] == ["People", "Projects ✓", "Ideas", "Admin"]
    assert seen["typed"]  # and a box for an answer in words
    assert seen["outcome"] == "Filed → Admin · Kitchen tiles"
    (picked,) = inbox_by_text(cosmos, "tiles for the kitchen")
    assert picked["filedBucket"] == "Admin" and picked["chosenBy"] == "user"
    assert docs(cosmos, "Projects", picked["id"]) == []
    # Dismissed: the question is closed, the capture stays where it was put for now.
    assert seen["dismissed"] == "Filed → Projects for now · Kitchen tiles"
    (dismissed,) = inbox_by_text(cosmos, "tiles for the bathroom")
    assert dismissed["status"] == "needs_review"
    assert dismissed["interrupts"][-1]["status"] == "cancelled"


def test_a_voice_note_from_the_microphone_is_transcribed_and_filed(browser, fake, cosmos) -> None:
    said = "Call Sarah about the budget review"
    fake.set_default(fake_openai.transcription(said), fake_openai.TRANSCRIBE)
    fake.enqueue(FILED)
    seen = browser("voice")
    assert seen["limit"] == "of 10:00 max"
    assert seen["outcome"] == "Filed → People"
    assert seen["said"].startswith(f"“{said}” (voice · 0:0")
    (upload,) = [r for r in fake.requests if r.kind == fake_openai.TRANSCRIBE]
    assert upload.file is not None and upload.file.size > 1000  # the recording, not silence
    (item,) = [i for i in inbox_by_text(cosmos, said) if i["source"] == "voice"]
    # Chromium records webm/opus; the API took it as such.
    assert item["audioContentType"] == "audio/webm" and item["filedBucket"] == "People"


def test_a_capture_made_offline_is_sent_when_back_online_and_files_once(
    browser, fake, cosmos
) -> None:
    fake.enqueue(fake_openai.classification("Admin", 0.9, "Book the dentist"))
    seen = browser("offline")
    assert seen["network"] == "Offline · 1 waiting"
    assert seen["reopenedOffline"]
    assert seen["outcome"] == "Filed → Admin"
    (item,) = inbox_by_text(cosmos, "Book the dentist for Friday")
    assert [c["captureId"] for c in seen["captures"]] == [item["id"]]
    assert len(docs(cosmos, "Admin", item["id"])) == 1
    assert len([r for r in fake.requests if r.kind == fake_openai.CHAT]) == 1


def test_the_capture_screen_keeps_up_with_the_inbox(browser, fake, cosmos) -> None:
    fake.enqueue(
        fake_openai.classification("Admin", 0.9, "Renew the car tax"),
        fake_openai.classification("People", 0.9, "Birthday present for Ana"),
    )
    seen = browser("keepsUp", ADMIN_TEXT="Renew the car tax by Friday", MOVE_TEXT="Ana's birthday: a book?")
    assert seen["before"] == "Filed → People · Birthday present for Ana"
    assert seen["colours"][0] != seen["colours"][1]  # People and Admin each their own colour
    (moved,) = inbox_by_text(cosmos, "Ana's birthday: a book?")
    assert seen["opened"] == f"#/captures/{moved['id']}"
    assert seen["afterMove"] == "Filed → Ideas · Birthday present for Ana"
    assert moved["filedBucket"] == "Ideas"
    assert seen["cards"] == ["Ana's birthday: a book?"]  # the deleted one is gone
    assert inbox_by_text(cosmos, "Renew the car tax by Friday") == []
    assert seen["headers"] == {
        "capture": "Capture",
        "details": "Details",
        "inbox": "Inbox",
        "settings": "Settings",
    }
    assert seen["title"] == "Settings · Second brain"


def test_a_share_from_another_app_lands_filled_on_the_capture_screen(browser, fake, cosmos) -> None:
    fake.enqueue(fake_openai.classification("Ideas", 0.9, "Read about sourdough"))
    link = "https://example.org/sourdough?src=share"
    seen = browser(
        "share", SHARE_TITLE="Sourdough basics", SHARE_TEXT=f"Worth a read {link}", SHARE_URL=link
    )
    # The link came in the text too (as many Android apps send it): said once.
    assert seen["filled"] == f"Sourdough basics\nWorth a read {link}"
    assert seen["address"].endswith("/#/capture")  # a reload does not share it again
    assert seen["header"] == "Capture"
    assert seen["manifest"] == {
        "action": "./",
        "method": "GET",
        "params": {"title": "title", "text": "text", "url": "url"},
    }
    (item,) = inbox_by_text(cosmos, f"Sourdough basics\nWorth a read {link}")
    assert item["filedBucket"] == "Ideas"


@pytest.fixture
def inbox_captures(host: str, fake) -> list[str]:
    """25 captures through the API, oldest first: more than a page of the inbox (20)."""
    titles = [f"Idea number {n}" for n in range(24)] + ["Plan the offsite agenda"]
    with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
        for n, title in enumerate(titles):
            fake.enqueue(fake_openai.classification("People", 0.92, title))
            body = run_input(f"{title}, captured", thread_id=f"t-inbox-{n}")
            r = client.post("/api/capture", json=body)
            assert r.status_code == 200 and "RUN_FINISHED" in r.text
    return titles


def test_the_inbox_pages_opens_moves_and_deletes(browser, inbox_captures, cosmos) -> None:
    opened = "Plan the offsite agenda"
    (item,) = inbox_by_text(cosmos, f"{opened}, captured")
    seen = browser("inbox", OPEN_TITLE=opened)
    # Newest first, a page of 20, then the next page after it (the other tests' captures of
    # this session follow), no capture twice.
    assert seen["firstPage"] == 20
    assert seen["titles"][:25] == list(reversed(inbox_captures))
    assert len(seen["links"]) > 20 and len(set(seen["links"])) == len(seen["links"])
    assert seen["bucketAfterMove"] == "Projects"
    assert opened not in seen["titlesAfterDelete"]
    assert docs(cosmos, "Inbox", item["id"]) == []
    assert docs(cosmos, "People", item["id"]) == docs(cosmos, "Projects", item["id"]) == []


def test_a_wrong_key_is_told_plainly_and_fixing_it_sends_the_capture(browser, fake, cosmos) -> None:
    fake.enqueue(fake_openai.classification("Admin", 0.9, "Renew the passport"))
    seen = browser("wrongKey")
    refused = "The API refused this key (401). Check the key and save again."
    assert seen["settingsMessage"] == refused
    assert seen["cardNote"] == "The API refused this key. Check it in Settings."
    assert seen["banner"] == "The API refused your key. Check it in Settings."
    assert seen["bannerHidden"]
    assert seen["outcome"] == "Filed → Admin"
    assert len(inbox_by_text(cosmos, "Renew the passport")) == 1
