"""The Today screen in headless Chromium (tests/browser/drive.mjs, scenarios `today`, `ticks`
and `digestSettings`), against a devhost: the day's digest as a digest push's tap opens it
(#/today), the weekly review on its day, the digest turned on from the screen, People and
Projects items ticked done (in their lists and on Today) leaving it, each item shown once,
and the digest's time, zone and review day set in Settings. Their pictures:
docs/screenshots/today.png, today-ticks.png, lists-ticked.png, settings-digest.png and
settings-digest-error.png with UPDATE_SCREENSHOTS=1."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta

import httpx

from shared.domain.calendar_words import WEEKDAYS
from shared.domain.documents import utc_text
from testkit import fake_openai
from testkit.support import KEY, docs, run_input

SUMMARY = "A quiet week with one thing due. Renew your passport today."


def test_today_shows_the_digest_and_the_review_and_turns_the_digest_on(
    browser, host: str, cosmos, fake
) -> None:
    today = datetime.now(UTC).date()
    body = {
        "timeZone": "UTC",
        "digestAt": "07:30",
        "digest": False,
        "weeklyReviewDay": WEEKDAYS[today.weekday()],
    }
    with httpx.Client(base_url=host, timeout=30) as client:
        assert client.put("/api/preferences", json=body, headers=KEY).status_code == 200
    title = f"Renew passport {uuid.uuid4().hex[:6]}"
    capture_id = str(uuid.uuid4())
    cosmos.get_container_client("Admin").upsert_item(
        {
            "id": capture_id, "userId": "dev", "inboxItemId": capture_id, "bucket": "Admin",
            "title": title, "text": title, "confidence": 1.0, "source": "text", "people": [],
            "peopleKeys": [], "dueDate": today.isoformat(), "done": False,
            "createdAt": utc_text(datetime.now(UTC) - timedelta(days=1)),
            "listOrder": f"{today.isoformat()}|0|{capture_id}",
        }
    )  # fmt: skip
    fake.enqueue(fake_openai.completion(SUMMARY))  # the review's two sentences, by the model
    seen = browser("today")
    assert seen["sections"][0].startswith("Due (")
    assert any(row.startswith(title) and "today" in row for row in seen["due"])
    assert seen["summary"] == SUMMARY
    assert seen["off"].startswith("The daily digest is off.")
    assert seen["on"] == "Every day at 07:30 (UTC)."
    with httpx.Client(base_url=host, timeout=30) as client:
        prefs = client.get("/api/preferences", headers=KEY).json()
        # Off again: no digest of the dev user's reaches another test's push stand-in.
        client.put("/api/preferences", json=body, headers=KEY)
    # Turned on, the review day kept.
    assert prefs["digest"] is True and prefs["weeklyReviewDay"] == WEEKDAYS[today.weekday()]


def capture(host: str, fake, made: list[tuple[str, str, date | None]]) -> dict[str, str]:
    """Each (bucket, title, due date) captured through the API and filed; capture id by title."""
    ids = {}
    with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
        for bucket, title, due in made:
            due_date = due.isoformat() if due else None
            fake.enqueue(fake_openai.classification(bucket, 0.92, title, due_date=due_date))
            r = client.post("/api/capture", json=run_input(title, thread_id=f"t-{uuid.uuid4()}"))
            assert r.status_code == 200 and '"filed"' in r.text, r.text
            ids[title] = r.text.split('"inboxItemId":"', 1)[1].split('"', 1)[0]
    return ids


def test_people_and_projects_items_ticked_done_leave_today_which_shows_each_item_once(
    browser, host: str, cosmos, fake
) -> None:
    tag = uuid.uuid4().hex[:6]
    today = datetime.now(UTC).date()
    list_project, list_person = f"Garden shed {tag}", f"Ask Ravi about the van {tag}"
    today_project, today_person = f"Ring the roofer {tag}", f"Call Mum back {tag}"
    kept = f"Kitchen tiles {tag}"
    not_today = WEEKDAYS[(today.weekday() + 3) % 7]  # the day's digest alone, no review
    with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
        body = {"timeZone": "UTC", "digest": False, "weeklyReviewDay": not_today}
        assert client.put("/api/preferences", json=body).status_code == 200
    ids = capture(
        host,
        fake,
        [
            ("Projects", list_project, None),
            ("People", list_person, None),
            ("Projects", today_project, today),  # due today
            ("People", today_person, today - timedelta(days=2)),  # overdue
            ("Projects", kept, None),
        ],
    )
    seen = browser(
        "ticks",
        LIST_PROJECT=list_project,
        LIST_PERSON=list_person,
        TODAY_PROJECT=today_project,
        TODAY_PERSON=today_person,
    )
    before, after, refreshed = seen["before"], seen["after"], seen["refreshed"]
    # One heading: the bar's. The screen's own "Today" is for screen readers only.
    assert before["headings"] == ["Today"]
    # Each capture once, and no row says its words twice.
    hrefs = [row["href"] for row in before["rows"]]
    assert len(hrefs) == len(set(hrefs)), before["rows"]
    assert [r for r in before["rows"] if r["title"] == r["meta"]] == []
    words = {row["title"]: row for row in before["rows"]}
    # Ticked in their lists: gone from Today.
    assert list_project not in words and list_person not in words
    # Dated People and Projects items are due; the kept project is a next action, once.
    assert words[today_project]["section"] == "Due"
    assert words[today_project]["meta"] == "today · Projects"
    assert words[today_person]["section"] == "Due"
    assert words[today_person]["meta"].startswith("overdue · ")
    assert words[kept]["section"] == "Next actions" and words[kept]["meta"] is None
    assert words[kept]["tick"] == f"Done: {kept}"
    # Ticked on Today: they leave at once, and stay gone.
    for shown in (after, refreshed):
        titles = [row["title"] for row in shown["rows"]]
        assert today_project not in titles and today_person not in titles
        assert kept in titles
    for bucket, title in [
        ("Projects", list_project),
        ("People", list_person),
        ("Projects", today_project),
        ("People", today_person),
    ]:
        (doc,) = docs(cosmos, bucket, ids[title])
        assert doc["done"] is True, title
    (doc,) = docs(cosmos, "Projects", ids[kept])
    assert doc["done"] is False
    with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
        digest = client.get("/api/digest").json()
    listed = {e["id"] for part in ("due", "nextActions", "followUps") for e in digest[part]}
    assert ids[kept] in listed and not listed & {ids[t] for t in ids if t != kept}


def test_settings_sets_the_digests_time_zone_and_review_day(browser, host: str, cosmos) -> None:
    # A user who never set any: the screen offers this browser's zone.
    prefs = cosmos.get_container_client("Preferences")
    for doc in docs(cosmos, "Preferences", "preferences"):
        if doc["userId"] == "dev":
            prefs.delete_item(doc["id"], partition_key="dev")
    try:
        seen = browser(
            "digestSettings", TIME_ZONE="Europe/Lisbon", AT="06:45", ZONE="America/New_York",
            DAY="friday",
        )  # fmt: skip
        with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
            stored = client.get("/api/preferences").json()
    finally:
        with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
            # Off again: no digest of the dev user's reaches another test's push stand-in.
            off = {"timeZone": "UTC", "digest": False}
            assert client.put("/api/preferences", json=off).status_code == 200
    assert seen["first"] == {
        "on": False, "at": "07:30", "zone": "Europe/Lisbon", "day": "sunday", "reminders": True,
    }  # fmt: skip
    assert seen["firstStatus"] == "Not set up yet: the digest is off."
    # A zone the API does not know: said at the field, which has the keyboard.
    assert seen["refused"].startswith("Mars/Olympus is not a time zone this service knows.")
    assert seen["invalid"] == "true" and seen["focused"] == "time-zone"
    assert seen["saved"].startswith("Saved. On: next at ")
    assert seen["saved"].endswith("(America/New_York).")
    wanted = {
        "on": True, "at": "06:45", "zone": "America/New_York", "day": "friday", "reminders": False,
    }  # fmt: skip
    assert seen["again"] == wanted  # read back from GET /api/preferences
    assert stored["saved"] is True and stored["digest"] is True
    assert (stored["timeZone"], stored["digestAt"], stored["weeklyReviewDay"]) == (
        "America/New_York",
        "06:45",
        "friday",
    )
    assert stored["reminders"] is False and stored["nextDigestAt"] is not None
