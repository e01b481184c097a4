"""Ask end to end, through the devhost with real Azurite and Cosmos and the model behind the
scripted OpenAI server: POST /api/ask as a valid AG-UI run (tools, then the answer with its
citations), offline (the model failing) and by the model's tool calls; GET /api/ask as JSON,
its thread carrying a follow-up; the official @ag-ui/client asking and following up; each
user's answers from their captures only; bad questions as 4xx problems with a code."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit import fake_openai
from testkit.support import KEY, OTHER_KEY, run_input, running_devhost
from tests.sse import assert_valid_run, post_run, stream_run

SCENARIO = Path(__file__).parents[1] / "agui_client" / "scenario.mjs"
FAIL = fake_openai.http_error(400, message="no model for this test")  # the offline answer


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("ask")) as url:
        yield url


def unique(prefix: str) -> str:
    """A word no other test writes: the session's database is shared."""
    return prefix + "".join(random.choices(string.ascii_lowercase, k=8))


def file(client, fake, text: str, bucket: str, headers=KEY) -> str:
    fake.enqueue(fake_openai.classification(bucket, 0.9, text[:40]))
    run = post_run(client, "/api/capture", run_input(text), headers=headers)
    assert_valid_run(run)
    return run.custom()["value"]["inboxItemId"]


@pytest.fixture(scope="module")
def shed(host: str, fake) -> dict[str, str]:
    """A project of the caller's (the tiler changed) and another user's on the same word."""
    import httpx

    word = unique("shed")
    with httpx.Client(base_url=host, timeout=30) as client:
        fake.reset()
        return {
            "word": word,
            "marco": file(client, fake, f"Marco will tile the {word} from Thursday.", "Projects"),
            "kuba": file(client, fake, f"Marco pulled out: Kuba tiles the {word} now.", "Projects"),
            "theirs": file(client, fake, f"Zed is tiling the {word}.", "Projects", OTHER_KEY),
        }  # fmt: skip


def test_an_ask_run_tells_its_tools_then_the_answer_with_citations(client, fake, shed) -> None:
    fake.enqueue(FAIL)
    run = post_run(client, "/api/ask", run_input(f"who is tiling the {shed['word']}?"), headers=KEY)
    assert_valid_run(run)
    types = run.types()
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    assert types[1:5] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]
    start = types.index("TEXT_MESSAGE_START")
    assert "TOOL_CALL_START" not in types[start:]
    search = json.loads(run.events[2]["delta"])
    assert run.events[1]["toolCallName"] == "search" and shed["word"] in search["query"]
    result = run.last()["result"]
    ids = [c["captureId"] for c in result["citations"]]
    assert ids[:2] == [shed["kuba"], shed["marco"]] and shed["theirs"] not in ids
    assert "Kuba" in result["answer"] and "changed" in result["answer"]
    assert set(result["citations"][0]) == {"captureId", "bucket", "title", "quote"}
    end = next(e for e in run.events if e["type"] == "TEXT_MESSAGE_END")
    assert end["metadata"]["citations"] == result["citations"]
    said = "".join(e["delta"] for e in run.events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert said == result["answer"]
    for told in (e for e in run.events if e["type"] == "TOOL_CALL_RESULT"):
        assert shed["theirs"] not in told["content"]


def test_an_ask_run_by_the_model_calls_the_same_tools(client, fake, shed) -> None:
    fake.enqueue(
        fake_openai.tool_calls(fake_openai.tool_call("search", {"query": shed["word"]}, "c1")),
        fake_openai.completion(f"Kuba tiles it now [{shed['kuba']}], not Zed [{shed['theirs']}]."),
    )
    run = post_run(client, "/api/ask", run_input(f"who tiles the {shed['word']}?"), headers=KEY)
    assert_valid_run(run)
    result = run.last()["result"]
    assert result["answer"] == "Kuba tiles it now [1], not Zed."
    assert [c["captureId"] for c in result["citations"]] == [shed["kuba"]]
    told = next(e for e in run.events if e["type"] == "TOOL_CALL_RESULT")
    assert told["toolCallId"] == "c1" and shed["kuba"] in told["content"]


def test_the_plain_door_answers_as_json_and_keeps_its_thread(client, fake, shed) -> None:
    thread = unique("th-")
    fake.enqueue(FAIL, FAIL)
    first = client.get(
        "/api/ask", params={"q": f"what's new with the {shed['word']}?", "threadId": thread},
        headers=KEY,
    )  # fmt: skip
    assert first.status_code == 200, first.text
    assert first.headers["cache-control"] == "no-store"
    assert {c["captureId"] for c in first.json()["citations"]} == {shed["kuba"], shed["marco"]}
    follow = client.get(
        "/api/ask", params={"q": "and who is tiling it?", "threadId": thread}, headers=KEY
    )
    body = follow.json()
    assert body["citations"][0]["captureId"] == shed["kuba"] and "Kuba" in body["answer"]
    # The other user's thread of that id is their own, and their captures theirs.
    fake.enqueue(FAIL)
    theirs = client.get(
        "/api/ask", params={"q": "and who is tiling it?", "threadId": thread}, headers=OTHER_KEY
    )
    assert theirs.status_code == 200
    assert {c["captureId"] for c in theirs.json()["citations"]} == {shed["theirs"]}
    fake.enqueue(FAIL)
    nothing = client.get("/api/ask", params={"q": f"{unique('boat')} engine?"}, headers=KEY)
    assert nothing.json()["citations"] == [] and "nothing" in nothing.json()["answer"]


def problem(response, status: int, code: str | None) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json().get("code") == code


@pytest.mark.parametrize(
    ("text", "code"),
    [("  ", "EMPTY_QUESTION"), ("x" * 10_000, "QUESTION_TOO_LONG"), ("why\u0000", "INVALID_TEXT")],
    ids=["empty", "10000", "nul"],
)
def test_bad_questions_are_refused_with_a_code(client, text: str, code: str) -> None:
    problem(client.post("/api/ask", json=run_input(text), headers=KEY), 422, code)


def test_bad_plain_questions_and_odd_unicode(client, fake) -> None:
    problem(client.get("/api/ask", params={"q": ""}, headers=KEY), 422, "INVALID_QUERY")
    problem(client.get("/api/ask", params={"q": "x" * 2000}, headers=KEY), 422, "INVALID_QUERY")
    problem(
        client.get("/api/ask", params={"q": "hi", "threadId": "a/b"}, headers=KEY),
        422,
        "INVALID_QUERY",
    )
    problem(client.post("/api/ask", json={"threadId": "t"}, headers=KEY), 422, None)
    fake.enqueue(FAIL)
    # A lone surrogate and a right-to-left override: made valid, and asked.
    odd = '{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user",'
    odd += '"content":"ti\\udfffles \u202e?"}]}'
    run = stream_run(
        client, "POST", "/api/ask", content=odd,
        headers={**KEY, "Content-Type": "application/json"},
    )  # fmt: skip
    assert_valid_run(run)
    assert client.get("/api/ask", params={"q": "hi"}).status_code == 401


def test_the_official_client_asks_and_follows_up(host, fake, shed) -> None:
    fake.reset()
    fake.enqueue(FAIL, FAIL)
    env = {
        **os.environ,
        "BASE_URL": host,
        "API_KEY": KEY["X-API-Key"],
        "QUESTION": f"What's happening with the {shed['word']}?",
        "FOLLOW_UP": "and who is tiling it now?",
    }
    done = subprocess.run(
        ["node", str(SCENARIO), "ask"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    for run in (seen["first"], seen["second"]):
        assert run["errors"] == [] and "thrown" not in run and run["protocolVersion"] == "1.0"
        assert run["result"]["citations"]
    assert (
        seen["tools"][0]["name"] == "search" and shed["word"] in seen["tools"][0]["args"]["query"]
    )
    # The client keeps each answer with its citations, and the tool results as tool messages.
    first, second = seen["said"]
    assert first["citations"] == seen["first"]["result"]["citations"]
    assert second["citations"][0]["captureId"] == shed["kuba"] and "Kuba" in second["content"]
    assert seen["toolResults"] >= 2
