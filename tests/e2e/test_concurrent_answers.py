"""Many answers to the same captures at once, as a hostile or hurried client sends them: REST
picks and AG-UI resumes with different buckets, in parallel, through a real devhost on real
Azurite and Cosmos. Afterwards Cosmos holds one truth per capture: the buckets agree with the
inbox item, each question has one answer, and every client was told what really happened."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from testkit import fake_openai
from testkit.support import BUCKETS, KEY, docs, running_devhost
from tests.sse import assert_valid_run, post_run

CAPTURES = 8
ANSWERS_PER_CAPTURE = 10
SEED = 27  # the same rounds every run, so a failure reproduces


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("concurrent-answers")) as url:
        yield url


def said(text: str, thread_id: str, **extra: object) -> dict:
    return {
        "threadId": thread_id,
        "runId": f"r-{uuid.uuid4()}",
        "messages": [{"id": f"m-{uuid.uuid4()}", "role": "user", "content": text}],
        "protocolVersion": "1.0",
        **extra,
    }


def asking(client: httpx.Client, fake) -> tuple[str, str]:
    """A LOW_CONFIDENCE capture on a thread of its own: (its id, its thread)."""
    fake.enqueue(fake_openai.classification("Projects", 0.45, "Kitchen tiles"))
    thread = f"t-{uuid.uuid4()}"
    run = post_run(client, "/api/capture", said("tiles for the kitchen", thread), headers=KEY)
    assert_valid_run(run)
    return run.last()["result"]["inboxItemId"], thread


def rest_pick(host: str, capture_id: str, bucket: str) -> tuple[str, str | None, str | None]:
    with httpx.Client(base_url=host, timeout=60) as c:
        answer = c.post(f"/api/captures/{capture_id}/bucket", json={"bucket": bucket}, headers=KEY)
    if answer.status_code == 200:
        return "pick", answer.json()["filedBucket"], None
    assert answer.status_code == 409, answer.text  # lost every round to other writers
    return "pick", None, answer.json().get("code")


def resume(
    host: str, capture_id: str, thread: str, bucket: str
) -> tuple[str, str | None, str | None]:
    body = said(
        "",
        thread,
        resume=[
            {"interruptId": f"{capture_id}:1", "status": "resolved", "payload": {"bucket": bucket}}
        ],
    ) | {"messages": []}
    with httpx.Client(base_url=host, timeout=60) as c:
        run = post_run(c, "/api/capture", body, headers=KEY)
    assert_valid_run(run)
    last = run.last()
    if last["type"] == "RUN_ERROR":
        return f"resume:{bucket}", None, last["code"]
    return f"resume:{bucket}", last["result"]["bucket"], None


def test_parallel_picks_and_resumes_leave_one_truth_per_capture(host, client, fake, cosmos) -> None:
    rounds = random.Random(SEED)
    captures = [asking(client, fake) for _ in range(CAPTURES)]
    jobs = []
    for capture_id, thread in captures:
        for _ in range(ANSWERS_PER_CAPTURE):
            bucket = rounds.choice(BUCKETS)
            if rounds.random() < 0.5:
                jobs.append((capture_id, rest_pick, (host, capture_id, bucket)))
            else:
                jobs.append((capture_id, resume, (host, capture_id, thread, bucket)))
    # Each capture's answers leave together, as a burst: the writers meet on one capture.
    start = {capture_id: threading.Barrier(ANSWERS_PER_CAPTURE) for capture_id, _ in captures}

    def together(capture_id: str, send, args):
        start[capture_id].wait(timeout=60)
        return send(*args)

    with ThreadPoolExecutor(max_workers=ANSWERS_PER_CAPTURE) as pool:
        told = [(c, pool.submit(together, c, send, args)) for c, send, args in jobs]
    results: dict[str, list[tuple[str, str | None, str | None]]] = {}
    for capture_id, future in told:
        results.setdefault(capture_id, []).append(future.result())

    for capture_id, _ in captures:
        (inbox,) = docs(cosmos, "Inbox", capture_id)
        filed_in = [name for name in BUCKETS if docs(cosmos, name, capture_id)]
        assert filed_in == [inbox["filedBucket"]], (inbox["filedBucket"], filed_in)
        assert inbox["status"] == "filed" and inbox["chosenBy"] == "user"
        # The question has one answer; the resumes told it was taken asked for that bucket,
        # and every other resume was refused.
        (question,) = inbox["interrupts"]
        assert question["status"] == "resolved"
        answered = question["response"]["bucket"]
        succeeded = {r[1] for r in results[capture_id] if r[2] is None}
        assert inbox["filedBucket"] in succeeded
        for who, bucket, code in results[capture_id]:
            if who.startswith("resume:"):
                asked = who.split(":", 1)[1]
                if code is None:
                    assert asked == answered, (asked, answered)
                    assert bucket in succeeded  # where it was, or where a later pick moved it
                else:
                    assert code in {"INTERRUPT_CLOSED", "CONFLICT"}, code
                    assert code == "CONFLICT" or asked != answered, (asked, answered)
