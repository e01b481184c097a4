"""The Ask screen as a person uses it on a phone: a question from the Search tab, the tool steps
as they happen, the answer streamed with its citations as cards, a follow-up in the same
conversation, a card opening its capture. (The scripted model fails each ask, so the answers
are the offline agent's, from the captures' own words.)"""

from __future__ import annotations

import uuid

import httpx

from testkit import fake_openai
from testkit.support import KEY, run_input

FAIL = fake_openai.http_error(400, message="no model: the offline answer")


def capture_through_api(host: str, fake, filed: list[tuple[str, str, str]]) -> dict[str, str]:
    """Each (bucket, title, text) captured through the API and filed; capture id by title."""
    ids = {}
    with httpx.Client(base_url=host, headers=KEY, timeout=30) as client:
        for bucket, title, text in filed:
            fake.enqueue(fake_openai.classification(bucket, 0.92, title))
            r = client.post("/api/capture", json=run_input(text, thread_id=f"t-{uuid.uuid4()}"))
            assert r.status_code == 200 and '"filed"' in r.text, r.text
            ids[title] = r.text.split('"inboxItemId":"', 1)[1].split('"', 1)[0]
    return ids


def test_ask_streams_its_steps_and_answer_and_follows_up(browser, host, fake) -> None:
    # A scullery: the app's other tests capture kitchen tiles for the same user.
    ids = capture_through_api(
        host,
        fake,
        [
            ("Projects", "Scullery tiler", "Marco will do the scullery tiles from Thursday."),
            ("Projects", "Scullery worktop", "Scullery worktop: going with oak, not quartz."),
            ("Projects", "Tiler changed", "Marco pulled out. Kuba does the scullery tiles now."),
        ],
    )
    fake.enqueue(FAIL, FAIL)
    seen = browser(
        "ask",
        QUESTION="What's happening with the scullery?",
        FOLLOW_UP="and who's doing the tiles?",
    )
    assert seen["header"] == "Ask"
    assert seen["steps"][0] == "Searching “scullery”: 3 found"
    assert seen["cards"][:3] == ["Tiler changed", "Scullery worktop", "Scullery tiler"]
    assert "[1]" in seen["answer"] and "Kuba" in seen["answer"]
    # The follow-up is understood from the conversation: its search carries the subject.
    assert seen["followSteps"][0].startswith("Searching “tiles scullery”")
    assert seen["followCards"][0] == "Tiler changed" and "changed" in seen["followAnswer"]
    assert seen["sameThread"] and seen["thread"].startswith("ask-")
    assert seen["opened"] == f"#/captures/{ids['Tiler changed']}"
