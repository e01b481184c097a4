"""AG-UI 1.0 interrupts end to end: a capture that asks its user ends the run with an interrupt,
and POST /api/capture with `resume` on the same thread answers it. Through a real devhost, on
real Azurite and Cosmos, with the scripted model."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from testkit import fake_openai
from testkit.support import KEY, docs, running_devhost
from tests.sse import SseRun, assert_valid_run, get_run, post_run

BUCKET_GUESS = fake_openai.classification("Projects", 0.45, "Kitchen tiles")
UNCLEAR = fake_openai.classification(None, 0.1, "?", question="What about the tiles?")


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("interrupts")) as url:
        yield url


def said(text: str, thread_id: str, *, version: str | None = "1.0", **extra: object) -> dict:
    body: dict = {
        "threadId": thread_id,
        "runId": f"r-{uuid.uuid4()}",
        "messages": [{"id": f"m-{uuid.uuid4()}", "role": "user", "content": text}],
        **extra,
    }
    if version is not None:
        body["protocolVersion"] = version
    return body


def resumed(thread_id: str, *entries: dict) -> dict:
    return said("", thread_id, resume=list(entries)) | {"messages": []}


def answer(interrupt_id: str, text: str) -> dict:
    return {"interruptId": interrupt_id, "status": "resolved", "payload": {"answer": text}}


def pick(interrupt_id: str, bucket: str) -> dict:
    return {"interruptId": interrupt_id, "status": "resolved", "payload": {"bucket": bucket}}


def cancel(interrupt_id: str) -> dict:
    return {"interruptId": interrupt_id, "status": "cancelled"}


def capture(client, body: dict) -> SseRun:
    run = post_run(client, "/api/capture", body, headers=KEY)
    assert_valid_run(run)
    return run


def interrupt_of(run: SseRun) -> dict:
    outcome = run.last()["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    return interrupt


def thread() -> str:
    return f"t-{uuid.uuid4()}"


def test_every_run_declares_the_protocol_version(client, fake) -> None:
    fake.enqueue(fake_openai.classification("People", 0.92, "Call Sarah"))
    run = capture(client, said("Call Sarah about the budget", thread()))
    assert run.events[0]["type"] == "RUN_STARTED" and run.events[0]["protocolVersion"] == "1.0"
    assert "outcome" not in run.last()  # filed: a plain success


def test_low_confidence_ends_in_an_interrupt_asking_for_a_bucket(client, fake, cosmos) -> None:
    fake.enqueue(BUCKET_GUESS)
    body = said("tiles for the kitchen", thread())
    run = capture(client, body)
    types = run.types()
    # The spec: the state and the whole conversation, then the interrupting RUN_FINISHED.
    assert types[-3:] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert "CUSTOM" in types  # the outcome push stays
    capture_id = run.last()["result"]["inboxItemId"]
    assert run.last()["result"]["outcome"] == "LOW_CONFIDENCE"
    interrupt = interrupt_of(run)
    assert interrupt["id"] == f"{capture_id}:1" and interrupt["reason"] == "confirmation"
    assert interrupt["metadata"] == {
        "captureId": capture_id,
        "kind": "bucket",
        "bucket": "Projects",
        "confidence": 0.45,
        "buckets": ["People", "Projects", "Ideas", "Admin"],
    }
    # The provisional bucket and confidence, said once (the default question restates them).
    assert interrupt["message"] == "Filed under Projects for now (not sure). Is that right?"
    # A bucket (the buttons) or an answer (the box).
    schema = interrupt["responseSchema"]
    assert schema["anyOf"] == [
        {"$ref": "#/$defs/BucketPayload"},
        {"$ref": "#/$defs/AnswerPayload"},
    ]
    assert schema["$defs"]["BucketPayload"]["required"] == ["bucket"]
    assert schema["$defs"]["AnswerPayload"]["required"] == ["answer"]
    state = next(e for e in run.events if e["type"] == "STATE_SNAPSHOT")["snapshot"]
    assert state["id"] == capture_id and state["status"] == "needs_review"
    messages = next(e for e in run.events if e["type"] == "MESSAGES_SNAPSHOT")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[0]["id"] == body["messages"][0]["id"]
    (stored,) = docs(cosmos, "Inbox", capture_id)
    assert stored["interrupts"][0]["id"] == interrupt["id"]
    assert stored["interrupts"][0]["status"] == "open"


def test_a_client_from_before_interrupts_gets_the_run_as_before(client, fake) -> None:
    fake.enqueue(BUCKET_GUESS, BUCKET_GUESS)
    for version in (None, "0.9"):
        run = capture(client, said("tiles for the kitchen", thread(), version=version))
        assert "STATE_SNAPSHOT" not in run.types() and "outcome" not in run.last()
        assert run.custom()["name"] == "LOW_CONFIDENCE"  # answered through the REST routes


def test_an_answer_files_the_capture_in_place_and_a_replay_files_nothing_twice(
    client, fake, cosmos
) -> None:
    t = thread()
    fake.enqueue(UNCLEAR)
    asked = capture(client, said("tiles", t))
    interrupt = interrupt_of(asked)
    assert (
        interrupt["reason"] == "input_required" and interrupt["message"] == "What about the tiles?"
    )
    assert interrupt["responseSchema"]["required"] == ["answer"]
    capture_id = asked.last()["result"]["inboxItemId"]

    fake.enqueue(fake_openai.classification("Projects", 0.9, "Kitchen tiles"))
    entry = answer(interrupt["id"], "order the kitchen tiles for the renovation")
    done = capture(client, resumed(t, entry))
    assert done.events[0]["protocolVersion"] == "1.0"
    assert done.custom()["name"] == "CLASSIFIED" and "outcome" not in done.last()
    assert done.last()["result"]["inboxItemId"] == capture_id

    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["status"] == "filed" and inbox["text"] == "tiles"
    assert [c["text"] for c in inbox["clarifications"]] == [
        "order the kitchen tiles for the renovation"
    ]
    assert inbox["interrupts"][0]["status"] == "resolved"

    calls = len(fake.requests)
    again = capture(client, resumed(t, entry))
    assert again.custom()["name"] == "CLASSIFIED"
    assert again.last()["result"]["inboxItemId"] == capture_id
    assert len(fake.requests) == calls  # no model call (nor embedding), nothing filed again
    assert len(docs(cosmos, "Projects", capture_id)) == 1
    assert len(docs(cosmos, "Inbox", capture_id)) == 1


def test_the_rounds_limit_leaves_the_capture_unresolved(client, fake, cosmos) -> None:
    t = thread()
    # The capture, then each answer alone and with the capture (the first also under the
    # capture's one word, a heading).
    fake.enqueue(*[UNCLEAR] * 6)
    first = interrupt_of(capture(client, said("hmm", t)))
    second = interrupt_of(capture(client, resumed(t, answer(first["id"], "the thing"))))
    assert second["id"].endswith(":2") and second["id"] != first["id"]
    last = capture(client, resumed(t, answer(second["id"], "you know, the thing")))
    assert last.custom()["name"] == "UNRESOLVED" and "outcome" not in last.last()
    (inbox,) = docs(cosmos, "Inbox", last.last()["result"]["inboxItemId"])
    assert inbox["status"] == "unresolved" and len(inbox["clarifications"]) == 2


def test_a_bucket_resume_is_the_users_pick(client, fake, cosmos) -> None:
    t = thread()
    fake.enqueue(BUCKET_GUESS)
    interrupt = interrupt_of(capture(client, said("tiles for the kitchen", t)))
    capture_id = interrupt["metadata"]["captureId"]
    done = capture(client, resumed(t, pick(interrupt["id"], "Admin")))
    assert done.custom()["name"] == "CLASSIFIED" and done.custom()["value"]["bucket"] == "Admin"
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["filedBucket"] == "Admin" and inbox["chosenBy"] == "user"
    assert docs(cosmos, "Projects", capture_id) == [] and docs(cosmos, "Admin", capture_id)


def test_a_typed_answer_naming_a_bucket_files_it_there(client, fake, cosmos) -> None:
    t = thread()
    fake.enqueue(BUCKET_GUESS)
    interrupt = interrupt_of(capture(client, said("tiles for the kitchen", t)))
    capture_id = interrupt["metadata"]["captureId"]
    assert docs(cosmos, "Projects", capture_id)  # filed provisionally
    calls = len(fake.requests_of(fake_openai.CHAT))
    done = capture(client, resumed(t, answer(interrupt["id"], "just put it in admin")))
    assert done.custom()["name"] == "CLASSIFIED" and done.custom()["value"]["bucket"] == "Admin"
    # A bucket named is the user's pick: no classifier call (the answer is embedded with the
    # words, as every answer is).
    assert len(fake.requests_of(fake_openai.CHAT)) == calls
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert (inbox["status"], inbox["filedBucket"], inbox["chosenBy"]) == ("filed", "Admin", "user")
    assert inbox["title"] == "Kitchen tiles"  # what was said, never "Admin"
    assert inbox["interrupts"][0]["response"] == {"answer": "just put it in admin"}
    assert docs(cosmos, "Projects", capture_id) == [] and docs(cosmos, "Admin", capture_id)


def test_a_typed_answer_that_explains_is_classified_on_its_own(client, fake, cosmos) -> None:
    t = thread()
    fake.enqueue(BUCKET_GUESS, fake_openai.classification("Admin", 0.9, "Pay the tiler"))
    interrupt = interrupt_of(capture(client, said("tiles for the kitchen", t)))
    capture_id = interrupt["metadata"]["captureId"]
    done = capture(client, resumed(t, answer(interrupt["id"], "pay the tiler's invoice")))
    assert done.custom()["name"] == "CLASSIFIED" and done.custom()["value"]["bucket"] == "Admin"
    asked = fake.requests_of(fake_openai.CHAT)[-1]
    assert asked.messages[-1]["content"] == "pay the tiler's invoice"  # alone
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert (inbox["filedBucket"], inbox["chosenBy"], inbox["title"]) == (
        "Admin",
        "classifier",
        "Pay the tiler",
    )
    assert docs(cosmos, "Projects", capture_id) == [] and docs(cosmos, "Admin", capture_id)


def test_the_rest_follow_up_takes_an_answer_to_a_which_bucket_question(
    client, fake, cosmos
) -> None:
    fake.enqueue(BUCKET_GUESS)
    run = capture(client, said("tiles for the kitchen", thread(), version=None))
    capture_id = run.last()["result"]["inboxItemId"]
    follow = post_run(
        client,
        f"/api/captures/{capture_id}/follow-up",
        said("it's a project - kitchen tiles", "ignored", version=None),
        headers=KEY,
    )
    assert_valid_run(follow)
    assert follow.custom()["name"] == "CLASSIFIED"
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert (inbox["filedBucket"], inbox["chosenBy"], inbox["title"]) == (
        "Projects",
        "user",
        "Kitchen tiles",
    )


def test_cancel_closes_the_question_and_leaves_the_capture(client, fake, cosmos) -> None:
    t = thread()
    fake.enqueue(BUCKET_GUESS)
    interrupt = interrupt_of(capture(client, said("tiles for the kitchen", t)))
    capture_id = interrupt["metadata"]["captureId"]
    done = capture(client, resumed(t, cancel(interrupt["id"])))
    assert done.types() == ["RUN_STARTED", "RUN_FINISHED"] and "outcome" not in done.last()
    (inbox,) = docs(cosmos, "Inbox", capture_id)
    assert inbox["status"] == "needs_review" and inbox["filedBucket"] == "Projects"
    assert inbox["interrupts"][0]["status"] == "cancelled"
    # The thread takes new input again.
    fake.enqueue(fake_openai.classification("People", 0.92, "Call Sarah"))
    assert capture(client, said("Call Sarah", t)).custom()["name"] == "CLASSIFIED"


def run_error(run: SseRun) -> str:
    assert run.last()["type"] == "RUN_ERROR", run.types()
    return run.last()["code"]


def test_the_specs_rules_refuse_with_a_code_and_change_nothing(client, fake, cosmos) -> None:
    t = thread()
    fake.enqueue(UNCLEAR)
    interrupt = interrupt_of(capture(client, said("tiles", t)))
    capture_id = interrupt["metadata"]["captureId"]
    (before,) = docs(cosmos, "Inbox", capture_id)

    new_input = said("something else entirely", t)
    assert run_error(capture(client, new_input)) == "INTERRUPT_PENDING"
    assert run_error(capture(client, resumed(t, answer("nope:1", "x")))) == "UNKNOWN_INTERRUPT_ID"
    bad = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"answer": ""}}
    assert run_error(capture(client, resumed(t, bad))) == "INVALID_PAYLOAD"
    wrong_kind = pick(interrupt["id"], "Admin")  # a bucket where an answer is asked for
    assert run_error(capture(client, resumed(t, wrong_kind))) == "INVALID_PAYLOAD"

    (after,) = docs(cosmos, "Inbox", capture_id)
    assert (after["status"], after["interrupts"], after["clarifications"]) == (
        before["status"],
        before["interrupts"],
        before["clarifications"],
    )
    on_thread = cosmos.get_container_client("Inbox").query_items(
        "SELECT * FROM c WHERE c.threadId = @t",
        parameters=[{"name": "@t", "value": t}],
        enable_cross_partition_query=True,
    )
    assert len(list(on_thread)) == 1  # the refused new input stored nothing


def test_a_resume_must_answer_every_open_question_of_the_thread(client, fake) -> None:
    t = thread()
    # Two questions on one thread can only come from clients that do not speak interrupts.
    fake.enqueue(UNCLEAR, UNCLEAR)
    first = capture(client, said("tiles", t, version=None)).last()["result"]["inboxItemId"]
    capture(client, said("grout", t, version=None))
    partial = resumed(t, answer(f"{first}:1", "the kitchen tiles"))
    assert run_error(capture(client, partial)) == "PARTIAL_RESUME"


def test_the_rest_routes_close_the_open_question(client, fake, cosmos) -> None:
    t = thread()
    fake.enqueue(BUCKET_GUESS)
    interrupt = interrupt_of(capture(client, said("tiles for the kitchen", t)))
    capture_id = interrupt["metadata"]["captureId"]
    r = client.post(f"/api/captures/{capture_id}/bucket", json={"bucket": "Ideas"}, headers=KEY)
    assert r.status_code == 200
    assert r.json()["interrupts"][0]["status"] == "resolved"
    # Answered: the same question resumed differently is refused, new input is welcome.
    assert run_error(capture(client, resumed(t, cancel(interrupt["id"])))) == "INTERRUPT_CLOSED"
    fake.enqueue(fake_openai.classification("People", 0.92, "Call Sarah"))
    assert capture(client, said("Call Sarah", t)).custom()["name"] == "CLASSIFIED"


def test_the_events_feed_ends_in_the_same_interrupt(client, fake) -> None:
    fake.enqueue(BUCKET_GUESS)
    run = capture(client, said("tiles for the kitchen", thread(), version=None))
    capture_id = run.last()["result"]["inboxItemId"]
    feed = get_run(client, f"/api/captures/{capture_id}/events?protocolVersion=1.0", headers=KEY)
    assert_valid_run(feed)
    interrupt = interrupt_of(feed)
    assert interrupt["id"] == f"{capture_id}:1" and interrupt["reason"] == "confirmation"
    messages = next(e for e in feed.events if e["type"] == "MESSAGES_SNAPSHOT")["messages"]
    assert messages[0] == {
        "id": f"{capture_id}:said",
        "role": "user",
        "content": "tiles for the kitchen",
    }
    legacy = get_run(client, f"/api/captures/{capture_id}/events", headers=KEY)
    assert_valid_run(legacy)
    assert "outcome" not in legacy.last()
