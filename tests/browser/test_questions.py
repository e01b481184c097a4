"""Questions and a capture's page in headless Chromium (tests/browser/drive.mjs), against a
devhost and the scripted model (issue 39): a question that names two buckets offers them, a
question is answered from the capture's page, a silent voice note may be discarded, the edit
sheet takes what the API takes and says what it refused, long captures stay a few lines in the
lists, and a capture's page shows its details and goes back where it came from."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx

from testkit import fake_openai
from testkit.support import KEY, docs, run_input
from tests.browser.test_app import capture_through_api, filed_doc, inbox_by_text


def test_a_question_naming_two_buckets_offers_them_and_a_tap_files_it(
    browser, fake, cosmos
) -> None:
    # Too unsure even to file for now (0.2), yet two buckets fit.
    fake.enqueue(fake_openai.classification("Projects", 0.2, "Hall tiles", also_fits="Admin"))
    seen = browser("twoBuckets")
    assert seen["prompt"] == "Where does this belong — Projects or Admin? Or tell me what it is."
    assert seen["choices"] == ["Projects", "Admin"]
    assert seen["typed"]
    assert seen["outcome"].startswith("Filed → Admin")
    (item,) = inbox_by_text(cosmos, "the hall tiles thing")
    assert (item["filedBucket"], item["chosenBy"]) == ("Admin", "user")
    assert item["interrupts"][-1]["response"] == {"bucket": "Admin"}  # the resume's pick
    assert len(docs(cosmos, "Admin", item["id"])) == 1


def test_a_question_is_answered_from_the_captures_page(browser, fake, cosmos) -> None:
    fake.enqueue(
        fake_openai.classification(None, 0.1, "?", question="What about the paint?"),
        fake_openai.classification("Admin", 0.9, "Buy the hall paint"),
    )
    seen = browser("answerOnPage")
    assert seen["back"] == "← Capture"
    assert seen["question"] == "What about the paint?"
    # 4,199 characters pasted: kept whole in the box and refused in words, never cut.
    assert seen["tooLong"].startswith("4,199 characters: an answer holds up to 4,000.")
    assert seen["keptLength"] == 4200 and seen["longInvalid"] == "true"
    assert seen["said"] == "Filed under Admin."
    assert seen["asksAfter"] == 0
    assert seen["facts"]["Bucket"] == "Admin" and seen["facts"]["Status"] == "Filed"
    assert seen["card"] == "Filed → Admin · Buy the hall paint"  # the capture screen follows
    (item,) = inbox_by_text(cosmos, "zq paint")
    assert [c["text"] for c in item["clarifications"]] == ["buy the paint for the hall"]
    assert item["interrupts"][0]["status"] == "resolved"  # answered as an AG-UI resume
    assert len(docs(cosmos, "Admin", item["id"])) == 1


def test_a_silent_voice_notes_question_offers_discard(browser, fake, cosmos) -> None:
    fake.set_default(fake_openai.transcription(""), fake_openai.TRANSCRIBE)
    seen = browser("silentVoice")
    assert seen["prompt"] == "I couldn't hear anything in that voice note. Could you say it again?"
    assert seen["buttons"] == ["Discard"]
    assert seen["typed"]
    assert seen["cards"] == 0
    assert docs(cosmos, "Inbox", seen["captureId"]) == []
    assert [r for r in fake.requests if r.kind == fake_openai.CHAT] == []


def test_the_edit_sheet_takes_the_apis_limit_and_says_what_it_refused(
    browser, host, fake, cosmos
) -> None:
    title = f"Renew the bike lock {uuid.uuid4().hex[:6]}"
    ids = capture_through_api(host, fake, [("Admin", title, f"{title} this week")])
    seen = browser("editLimit", EDIT=title)
    assert seen["maxlength"] == "120" and seen["typedLength"] == 120
    assert seen["error"] == "Title: at most 120 characters."
    assert seen["invalid"] == "true" and seen["focused"] == "edit-title"
    assert filed_doc(cosmos, "Admin", ids[title])["title"] == title  # nothing saved


def test_a_long_captures_card_is_clamped_and_its_page_shows_it_all(browser, fake) -> None:
    word = f"zebrafinch{uuid.uuid4().hex[:6]}"
    long = " ".join([word, *(["the quick brown fox jumps over the lazy dog"] * 200)])
    fake.enqueue(fake_openai.classification(None, 0.1, "?", question="What is this about?"))
    seen = browser("longCard", LONG=long, QUERY=word)
    # A few lines each (about 24 px a line at this size), where unclamped the card was
    # thousands of pixels tall.
    assert seen["card"] < 260, seen
    assert seen["inboxRow"] < 200, seen
    assert seen["searchRow"] < 260, seen
    assert seen["said"] > 2000 and seen["saidLength"] == len(long)


def test_a_captures_page_shows_its_details_and_goes_back_where_it_came_from(
    browser, host, fake
) -> None:
    tag = uuid.uuid4().hex[:6]
    project, due, person = f"Garden shed {tag}", f"Pay the roofer {tag}", f"Ottilie Brandt{tag}"
    today = datetime.now(UTC).date().isoformat()
    with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
        for step, text in (
            (
                fake_openai.classification(
                    "Projects", 0.92, project, people=[person], due_date="2030-03-14"
                ),
                f"{project}: ask {person} for the roofer's number by 14 March 2030",
            ),
            (fake_openai.classification("Admin", 0.92, due, due_date=today), f"{due} today"),
        ):
            fake.enqueue(step)
            r = client.post("/api/capture", json=run_input(text, thread_id=f"t-{uuid.uuid4()}"))
            assert r.status_code == 200 and '"filed"' in r.text, r.text
        projects = client.get("/api/buckets/projects", params={"limit": 100}).json()["items"]
    (filed,) = [i for i in projects if i["title"] == project]
    seen = browser("detailsFrom", PROJECT=project, PERSON=person, DUE=due)
    assert seen["facts"]["Due"] == "Thu, 14 Mar 2030"
    assert seen["facts"]["People"] == person
    assert seen["facts"]["Next action"] == filed["nextAction"]
    assert seen["backTo"] == "#/lists/projects"
    assert seen["backs"] == {
        "projects": "← Projects",
        "person": f"← {person}",
        "search": "← Search",
        "today": "← Today",
        "inbox": "← Inbox",
    }
    assert "Due" in seen["todayFacts"]
