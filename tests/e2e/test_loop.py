"""Closing the loop end to end: follow-up answers, bucket picks, the inbox and deletes, through
the devhost with real Azurite and Cosmos and the model behind the scripted OpenAI server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit import fake_openai
from testkit.fake_openai import FakeOpenAI
from testkit.support import BUCKETS, KEY, OTHER_KEY, docs, eventually, run_input, running_devhost
from tests.sse import SseRun, assert_valid_run, post_run, post_voice_capture

AUDIO = Path(__file__).parents[1] / "data" / "audio"


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("loop")) as url:
        yield url


def capture(client, fake, text: str, reply: fake_openai.Step, headers=KEY, **kw) -> SseRun:
    fake.enqueue(reply)
    run = post_run(client, "/api/capture", run_input(text, **kw), headers=headers)
    assert_valid_run(run)
    return run


def follow_up(client, capture_id: str, text: str, headers=KEY, **kw) -> SseRun:
    return post_run(
        client, f"/api/captures/{capture_id}/follow-up", run_input(text, **kw), headers=headers
    )


def filed_in(cosmos, capture_id: str) -> list[str]:
    return [b for b in BUCKETS if docs(cosmos, b, capture_id)]


def classified_texts(fake: FakeOpenAI) -> list[str]:
    return [r.messages[-1]["content"] for r in fake.requests if r.kind == fake_openai.CHAT]


MISUNDERSTOOD = fake_openai.classification(None, 0.1, "Unclear", "What did you mean?")


# Follow-up: text → MISUNDERSTOOD → answer → CLASSIFIED, on the same inbox item


def test_the_whole_loop_leaves_one_inbox_item_and_one_filed_item(client, fake, cosmos) -> None:
    first = capture(client, fake, "budget thing w/ S", MISUNDERSTOOD, thread_id="loop-thread")
    value = first.custom()["value"]
    assert first.custom()["name"] == "MISUNDERSTOOD"
    capture_id = value["inboxItemId"]

    fake.enqueue(fake_openai.classification("People", 0.9, "Call Sarah about the budget"))
    answer = follow_up(client, capture_id, "Call Sarah about the budget", thread_id="ignored")
    assert_valid_run(answer)
    assert answer.events[0]["threadId"] == "loop-thread"  # the capture's own thread
    custom = answer.custom()
    assert custom["name"] == "CLASSIFIED" and custom["value"]["inboxItemId"] == capture_id
    assert custom["value"]["bucket"] == "People"
    # The answer is classified on its own first; confident, it needs nothing else.
    assert classified_texts(fake)[-1] == "Call Sarah about the budget"

    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["text"] == "budget thing w/ S"  # the original is kept
    assert [c["text"] for c in inbox["clarifications"]] == ["Call Sarah about the budget"]
    assert inbox["status"] == "filed" and inbox["filedBucket"] == "People"
    assert filed_in(cosmos, capture_id) == ["People"]
    assert len(list(cosmos.get_container_client("Inbox").query_items(
        "SELECT VALUE COUNT(1) FROM c WHERE c.threadId = 'loop-thread'",
        enable_cross_partition_query=True,
    ))) == 1  # fmt: skip


def test_two_rounds_that_still_cannot_be_classified_leave_it_unresolved(client, fake) -> None:
    capture_id = capture(client, fake, "zzz", MISUNDERSTOOD).custom()["value"]["inboxItemId"]
    # The answer alone, under the capture's few words as a heading, then with the capture.
    fake.enqueue(MISUNDERSTOOD, MISUNDERSTOOD, MISUNDERSTOOD)
    again = follow_up(client, capture_id, "hmm the thing")
    assert_valid_run(again)
    assert again.custom()["name"] == "MISUNDERSTOOD"
    fake.enqueue(MISUNDERSTOOD, MISUNDERSTOOD)
    last = follow_up(client, capture_id, "you know")
    assert_valid_run(last)
    assert last.custom()["name"] == "UNRESOLVED"
    assert last.custom()["value"] == {"inboxItemId": capture_id}
    item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert item["status"] == "unresolved" and len(item["clarifications"]) == 2

    refused = follow_up(client, capture_id, "one more")
    assert refused.status == 409 and json.loads(refused.raw)["code"] == "NOT_AWAITING_CLARIFICATION"


def test_a_retried_follow_up_counts_once(client, fake) -> None:
    capture_id = capture(client, fake, "zzz", MISUNDERSTOOD).custom()["value"]["inboxItemId"]
    fake.enqueue(fake_openai.classification("Admin", 0.8, "Pay the rent"))
    body_run_id = f"retry-{uuid.uuid4()}"
    first = follow_up(client, capture_id, "pay the rent", run_id=body_run_id)
    second = follow_up(client, capture_id, "pay the rent", run_id=body_run_id)
    assert_valid_run(second)
    assert first.custom()["value"] == second.custom()["value"]
    assert len(classified_texts(fake)) == 2  # the capture and one follow-up; the retry replays
    item = client.get(f"/api/captures/{capture_id}", headers=KEY).json()
    assert len(item["clarifications"]) == 1


def test_follow_up_only_for_a_misunderstood_capture_of_ones_own(client, fake) -> None:
    filed = capture(client, fake, "call mum", fake_openai.classification("People", 0.9, "Mum"))
    capture_id = filed.custom()["value"]["inboxItemId"]
    assert follow_up(client, capture_id, "it was about mum").status == 409
    assert follow_up(client, str(uuid.uuid4()), "anything").status == 404
    misunderstood = capture(client, fake, "zzz", MISUNDERSTOOD).custom()["value"]["inboxItemId"]
    assert follow_up(client, misunderstood, "mine?", headers=OTHER_KEY).status == 404
    bad = client.post(
        f"/api/captures/{misunderstood}/follow-up",
        content=b"{",
        headers={**KEY, "content-type": "application/json"},
    )
    assert bad.status_code == 400


def test_a_follow_up_with_the_model_down_is_filed_by_the_worker(client, fake, cosmos) -> None:
    capture_id = capture(client, fake, "zzz", MISUNDERSTOOD).custom()["value"]["inboxItemId"]
    fake.enqueue(fake_openai.http_error(503))
    fake.set_default(fake_openai.classification("Projects", 0.85, "Kitchen tiles"))
    run = follow_up(client, capture_id, "order the kitchen tiles")
    assert_valid_run(run)
    assert run.last()["result"]["status"] == "queued"
    eventually(lambda: filed_in(cosmos, capture_id) == ["Projects"], timeout=20)
    assert classified_texts(fake)[-1].startswith("order the kitchen tiles")
    fake.set_default(fake_openai.classification())


def test_a_voice_capture_takes_a_follow_up_too(client, fake, cosmos) -> None:
    # The scripted transcriber hears nothing: MISUNDERSTOOD, asking to say it again.
    fake.enqueue(fake_openai.transcription(""), kind=fake_openai.TRANSCRIBE)
    data = (AUDIO / "silence.wav").read_bytes()
    run = post_voice_capture(client, "quiet.wav", data, "audio/wav", headers=KEY)
    assert_valid_run(run)
    assert run.custom()["name"] == "MISUNDERSTOOD"
    capture_id = run.custom()["value"]["inboxItemId"]
    fake.enqueue(fake_openai.classification("Ideas", 0.9, "Repair cafe podcast"))
    answer = follow_up(client, capture_id, "a podcast about repair cafes")
    assert_valid_run(answer)
    assert answer.custom()["name"] == "CLASSIFIED"
    assert answer.events[0]["threadId"] == capture_id
    assert len(docs(cosmos, "Inbox", capture_id)) == 1
    assert filed_in(cosmos, capture_id) == ["Ideas"]


# Picking a bucket


def test_low_confidence_then_the_user_picks_the_bucket(client, fake, cosmos) -> None:
    low = capture(client, fake, "tiles?", fake_openai.classification("Ideas", 0.45, "Tiles"))
    assert low.custom()["name"] == "LOW_CONFIDENCE"
    capture_id = low.custom()["value"]["inboxItemId"]
    assert filed_in(cosmos, capture_id) == ["Ideas"]

    picked = client.post(
        f"/api/captures/{capture_id}/bucket", json={"bucket": "Projects"}, headers=KEY
    )
    assert picked.status_code == 200
    item = picked.json()
    assert item["status"] == "filed" and item["filedBucket"] == "Projects"
    assert item["chosenBy"] == "user" and item["outcome"] == "CLASSIFIED"
    assert filed_in(cosmos, capture_id) == ["Projects"]
    (project,) = docs(cosmos, "Projects", capture_id)
    assert project["inboxItemId"] == capture_id and project["title"] == "Tiles"

    again = client.post(
        f"/api/captures/{capture_id}/bucket", json={"bucket": "Projects"}, headers=KEY
    )
    assert again.status_code == 200 and again.json()["filedBucket"] == "Projects"
    assert filed_in(cosmos, capture_id) == ["Projects"]
    assert len(classified_texts(fake)) == 1  # picking asks no model


def test_a_misunderstood_capture_can_be_filed_by_hand(client, fake, cosmos) -> None:
    run = capture(client, fake, "renew passport asap", MISUNDERSTOOD)
    capture_id = run.custom()["value"]["inboxItemId"]
    r = client.post(f"/api/captures/{capture_id}/bucket", json={"bucket": "Admin"}, headers=KEY)
    assert r.status_code == 200
    assert r.json()["title"] == "renew passport asap"  # the user's words, not "Unclear"
    assert filed_in(cosmos, capture_id) == ["Admin"]


@pytest.mark.parametrize(
    ("body", "status"),
    [({"bucket": "Recipes"}, 422), ({}, 422), ({"bucket": "people"}, 422)],
)
def test_bad_bucket_picks_are_problems(client, fake, body, status) -> None:
    run = capture(client, fake, "x", fake_openai.classification("Ideas", 0.45, "X"))
    capture_id = run.custom()["value"]["inboxItemId"]
    r = client.post(f"/api/captures/{capture_id}/bucket", json=body, headers=KEY)
    assert r.status_code == status
    assert r.headers["content-type"] == "application/problem+json"


def test_bucket_pick_for_unknown_or_anothers_capture_is_404(client, fake) -> None:
    run = capture(client, fake, "x", fake_openai.classification("Ideas", 0.45, "X"))
    capture_id = run.custom()["value"]["inboxItemId"]
    pick = {"bucket": "People"}
    assert (
        client.post(f"/api/captures/{uuid.uuid4()}/bucket", json=pick, headers=KEY).status_code
        == 404
    )
    other = client.post(f"/api/captures/{capture_id}/bucket", json=pick, headers=OTHER_KEY)
    assert other.status_code == 404
    assert client.get(f"/api/captures/{capture_id}", headers=KEY).json()["filedBucket"] == "Ideas"


# The inbox and deletes


def test_the_inbox_pages_newest_first_with_a_continuation_token(client, fake) -> None:
    fake.set_default(fake_openai.classification("Ideas", 0.9, "An idea"))
    thread = f"paging-{uuid.uuid4()}"
    ids = []
    for n in range(7):
        run = post_run(
            client, "/api/capture", run_input(f"idea {n}", thread_id=thread), headers=KEY
        )
        ids.append(run.custom()["value"]["inboxItemId"])
    ids.reverse()  # newest first

    seen, token, pages = [], None, 0
    while True:
        params = {"limit": 3, **({"continuationToken": token} if token else {})}
        page = client.get("/api/inbox", params=params, headers=KEY).json()
        assert len(page["items"]) <= 3
        seen += [i["id"] for i in page["items"]]
        pages += 1
        token = page["continuationToken"]
        if not token:
            break
    ours = [i for i in seen if i in ids]
    assert ours == ids  # every one once, newest first, across pages
    assert len(seen) == len(set(seen))
    created = [
        i["createdAt"] for i in client.get("/api/inbox?limit=100", headers=KEY).json()["items"]
    ]
    assert created == sorted(created, reverse=True)
    fake.set_default(fake_openai.classification())


def test_the_inbox_filters_by_status_and_isolates_users(client, fake) -> None:
    mine = capture(client, fake, "zzz", MISUNDERSTOOD).custom()["value"]["inboxItemId"]
    theirs = capture(client, fake, "qqq", MISUNDERSTOOD, headers=OTHER_KEY)
    theirs_id = theirs.custom()["value"]["inboxItemId"]
    waiting = client.get(
        "/api/inbox", params={"status": "needs_clarification", "limit": 100}, headers=KEY
    ).json()["items"]
    assert mine in [i["id"] for i in waiting]
    assert {i["status"] for i in waiting} == {"needs_clarification"}
    assert {i["userId"] for i in waiting} == {"dev"}
    other = client.get("/api/inbox?limit=100", headers=OTHER_KEY).json()["items"]
    assert theirs_id in [i["id"] for i in other] and mine not in [i["id"] for i in other]


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("limit=0", 422),
        ("limit=101", 422),
        ("limit=ten", 422),
        ("status=lost", 422),
        ("continuationToken=not-a-token", 400),
    ],
)
def test_bad_inbox_queries_are_problems(client, query, status) -> None:
    r = client.get(f"/api/inbox?{query}", headers=KEY)
    assert r.status_code == status
    assert r.headers["content-type"] == "application/problem+json"


def test_delete_removes_the_capture_and_what_it_filed_idempotently(client, fake, cosmos) -> None:
    run = capture(client, fake, "call mum", fake_openai.classification("People", 0.9, "Mum"))
    capture_id = run.custom()["value"]["inboxItemId"]
    assert client.delete(f"/api/captures/{capture_id}", headers=OTHER_KEY).status_code == 204
    assert filed_in(cosmos, capture_id) == ["People"]  # another user's delete did nothing

    assert client.delete(f"/api/captures/{capture_id}", headers=KEY).status_code == 204
    assert docs(cosmos, "Inbox", capture_id) == [] and filed_in(cosmos, capture_id) == []
    assert client.get(f"/api/captures/{capture_id}", headers=KEY).status_code == 404
    assert client.delete(f"/api/captures/{capture_id}", headers=KEY).status_code == 204
    assert client.delete(f"/api/captures/{capture_id}").status_code == 401
