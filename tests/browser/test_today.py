"""The Today screen in headless Chromium (tests/browser/drive.mjs, scenario `today`), against a
devhost: the day's digest as a digest push's tap opens it (#/today), the weekly review on its
day, and the digest turned on from the screen. Its picture: docs/screenshots/today.png with
UPDATE_SCREENSHOTS=1."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import httpx

from shared.domain.documents import utc_text
from shared.domain.preferences import WEEKDAYS
from testkit import fake_openai
from testkit.support import KEY

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
