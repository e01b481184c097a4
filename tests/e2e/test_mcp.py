"""The MCP door end to end: the official `mcp` client over streamable HTTP on the devhost's
`/runtime/webhooks/mcp` (served from the app's MCP trigger functions, as the Functions MCP
extension serves them), real Azurite and Cosmos, the scripted model. Every tool of
`ASSISTANT_TOOLS` is listed as the catalogue has it and called; refusals are tool errors with
the HTTP API's status and code; each call acts as the user whose key it carries; the request
budget is the HTTP API's; resources and prompts are listed and read."""

from __future__ import annotations

import hashlib
import random
import string
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from mcp.shared.exceptions import MCPError

from shared.services.assistant_tools import ASSISTANT_TOOLS
from shared.settings import get_settings
from testkit import fake_openai
from testkit.mcp_client import mcp_client, structured, tool_error
from testkit.support import DEV_KEYS, KEY, OTHER_KEY, running_devhost

# One event loop for the module, so that the module's capture (`mine`) is made once.
pytestmark = pytest.mark.asyncio(loop_scope="module")

LIMITED_KEY = {"X-API-Key": "limited-user-key"}
BURST = 100


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    limited = hashlib.sha256(b"limited-user-key").hexdigest()
    env = {
        **scripted_env,
        "API_KEYS": f"{DEV_KEYS},limited:{limited}",
        # A budget the rate limit test can spend in a moment (a token back a minute); the
        # other tests stay well under it.
        "RATE_LIMIT_PER_MINUTE": "1",
        "RATE_LIMIT_BURST": str(BURST),
    }
    with running_devhost(env, tmp_path_factory.mktemp("mcp")) as url:
        yield url


def unique(prefix: str) -> str:
    return prefix + "".join(random.choices(string.ascii_lowercase, k=8))


async def call(
    host: str, name: str, arguments: dict[str, Any], headers=KEY
) -> types.CallToolResult:
    async with mcp_client(host, headers) as client:
        return await client.call_tool(name, arguments)


async def capture(host: str, fake, text: str, bucket: str | None = "Projects", **kw) -> dict:
    fake.reset()  # nothing left over from an earlier test's script
    fake.enqueue(fake_openai.classification(bucket, 0.9 if bucket else 0.1, **kw))
    return structured(await call(host, "capture", {"text": text}))


# What each tool is called with to succeed, made from a capture of the user's, and what its
# answer must hold. A tool added to ASSISTANT_TOOLS needs its line here (the first test says so).
Example = tuple[Callable[[dict], dict[str, Any]], Callable[[dict, dict], None]]
EXAMPLES: dict[str, Example] = {
    "capture": (
        lambda c: {"text": f"ask {c['name']} about the roadmap again"},
        lambda c, out: out["status"] in ("filed", "queued", "received", "classifying"),
    ),
    "search": (
        lambda c: {"query": c["word"]},
        lambda c, out: c["id"] in [r["id"] for r in out["items"]],
    ),
    "person": (
        lambda c: {"name": c["name"]},
        lambda c, out: c["id"] in [i["id"] for i in out["items"]],
    ),
    "list_bucket": (
        lambda c: {"bucket": "projects", "person": c["name"], "done": False},
        lambda c, out: c["id"] in [i["id"] for i in out["items"]],
    ),
    "get_capture": (
        lambda c: {"captureId": c["id"]},
        lambda c, out: out["id"] == c["id"] and out["filedBucket"] == "Projects",
    ),
    "answer_question": (
        lambda c: {"captureId": c["asking"], "answer": "it is a project"},
        lambda c, out: out["id"] == c["asking"] and out["clarifications"][0]["text"],
    ),
    "update_capture": (
        lambda c: {"captureId": c["id"], "etag": c["etag"], "dueDate": "2099-01-02"},
        lambda c, out: out["item"]["dueDate"] == "2099-01-02" and out["item"]["etag"],
    ),
    "ask": (
        lambda c: {"question": f"what about the {c['word']} plan?", "threadId": "mcp-test"},
        lambda c, out: c["id"] in [x["captureId"] for x in out["citations"]],
    ),
    "today": (
        lambda c: {"date": "2099-01-02"},
        lambda c, out: out["date"] == "2099-01-02" and isinstance(out["due"], list),
    ),
}


async def test_every_tool_has_an_example() -> None:
    assert set(EXAMPLES) == {t.name for t in ASSISTANT_TOOLS}


async def test_the_tool_list_is_the_catalogue(host) -> None:
    async with mcp_client(host) as client:  # listing needs no user: it holds no one's data
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [t.name for t in ASSISTANT_TOOLS]
    for served, tool in zip(listed, ASSISTANT_TOOLS, strict=True):
        assert served.description == tool.description
        assert served.input_schema == tool.input_schema()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def mine(host, fake) -> dict:
    """A filed project naming a person, with its etag, and a capture waiting on a question."""
    name, word = unique("Quill").capitalize(), unique("zeph")
    filed = await capture(host, fake, f"{name} says the {word} plan is on", title="The plan")
    assert filed["status"] == "filed" and filed["filedBucket"] == "Projects", filed
    listed = structured(await call(host, "list_bucket", {"bucket": "projects", "person": name}))
    (item,) = listed["items"]
    asking = await capture(host, fake, f"{word} hmm", None, question="Is it a project?")
    assert asking["status"] in ("needs_clarification", "needs_review"), asking
    assert asking["questionText"] == "Is it a project?"
    return {
        "id": filed["id"],
        "etag": item["etag"],
        "name": name,
        "word": word,
        "asking": asking["id"],
    }


@pytest.mark.parametrize("tool", ASSISTANT_TOOLS, ids=lambda t: t.name)
async def test_every_tool_answers_with_text_and_structured_content(host, fake, mine, tool) -> None:
    arguments, check = EXAMPLES[tool.name]
    if tool.name == "ask":  # the offline answer: the model's loop is tested in test_ask.py
        fake.set_default(fake_openai.http_error(400, message="no model for this test"))
    else:
        fake.set_default(fake_openai.classification("Projects", 0.9, "Filed"))
    try:
        result = await call(host, tool.name, arguments(mine))
    finally:
        fake.reset()
    out = structured(result)
    assert not result.is_error and check(mine, out), out


@pytest.mark.parametrize("tool", ASSISTANT_TOOLS, ids=lambda t: t.name)
@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "not-a-key"}], ids=["no key", "wrong key"])
async def test_every_tool_refuses_a_call_without_a_users_key(host, tool, headers) -> None:
    arguments = EXAMPLES[tool.name][0](
        {"id": str(uuid.uuid4()), "etag": "x", "name": "A", "word": "w", "asking": "x"}
    )
    error = tool_error(await call(host, tool.name, arguments, headers))
    assert error == {
        "status": 401,
        "code": "UNAUTHORIZED",
        "message": "A valid API key is required (X-API-Key or Authorization: Bearer).",
    }


@pytest.mark.parametrize("tool", ASSISTANT_TOOLS, ids=lambda t: t.name)
async def test_every_tool_says_which_arguments_are_wrong(host, tool) -> None:
    schema = tool.input_schema()
    wrong = {name: ["not", "this"] for name in schema.get("required", [])}
    error = tool_error(await call(host, tool.name, {**wrong, "notAnArgument": 1}))
    assert error["status"] == 422 and error["code"] == "INVALID_ARGUMENTS"
    assert error["message"].startswith(f"{tool.name}: ") and "notAnArgument" in error["message"]
    for name in wrong:
        assert name in error["message"]


async def test_a_missing_required_argument_is_refused_before_the_function_runs(host) -> None:
    async with mcp_client(host, KEY) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("get_capture", {})
    assert refused.value.code == types.INVALID_PARAMS
    assert "captureId" in refused.value.message


async def test_a_bearer_key_works_as_on_http(host, mine) -> None:
    bearer = {"Authorization": f"Bearer {KEY['X-API-Key']}"}
    found = structured(await call(host, "get_capture", {"captureId": mine["id"]}, bearer))
    assert found["id"] == mine["id"]


async def test_another_users_key_finds_nothing_of_mine(host, mine) -> None:
    error = tool_error(await call(host, "get_capture", {"captureId": mine["id"]}, OTHER_KEY))
    assert (error["status"], error["code"]) == (404, "NOT_FOUND")
    searched = structured(await call(host, "search", {"query": mine["word"]}, OTHER_KEY))
    # Their own captures may come by meaning (score 0); nothing of mine, and no word matches.
    assert mine["id"] not in {i["id"] for i in searched["items"]}
    assert all(i["score"] == 0 for i in searched["items"])
    person = await call(host, "person", {"name": mine["name"]}, OTHER_KEY)
    assert (tool_error(person)["status"], tool_error(person)["code"]) == (404, "NO_SUCH_PERSON")
    edit = {"captureId": mine["id"], "etag": mine["etag"], "done": True}
    assert tool_error(await call(host, "update_capture", edit, OTHER_KEY))["status"] == 404
    async with mcp_client(host, OTHER_KEY) as client:
        with pytest.raises(MCPError):
            await client.read_resource(f"capture://{mine['id']}")


async def test_refusals_carry_the_http_apis_status_and_code(host, fake, mine) -> None:
    client = httpx.AsyncClient(base_url=host, timeout=30)
    # A stale etag: 412 PRECONDITION_FAILED, as PATCH with an old If-Match.
    stale = {"captureId": mine["id"], "etag": '"0-stale"', "title": "Renamed"}
    over_mcp = tool_error(await call(host, "update_capture", stale))
    over_http = (
        await client.patch(
            f"/api/captures/{mine['id']}",
            json={"title": "Renamed"},
            headers={**KEY, "If-Match": '"0-stale"'},
        )
    ).json()
    assert (over_mcp["status"], over_mcp["code"]) == (over_http["status"], over_http["code"])
    assert over_mcp["message"] == over_http["detail"]
    # Answering a capture that asks nothing: 409 NOT_AWAITING_CLARIFICATION.
    answer = {"captureId": mine["id"], "answer": "yes"}
    error = tool_error(await call(host, "answer_question", answer))
    assert (error["status"], error["code"]) == (409, "NOT_AWAITING_CLARIFICATION")
    # A capture over the limit: 422 CAPTURE_TOO_LONG, as POST /api/captures.
    too_long = "x" * (get_settings().max_capture_chars + 1)
    error = tool_error(await call(host, "capture", {"text": too_long}))
    http = (await client.post("/api/captures", json={"text": too_long}, headers=KEY)).json()
    assert (error["status"], error["code"]) == (http["status"], http["code"])
    # A next action outside Projects: 422 NOT_A_PROJECT.
    filed = await capture(host, fake, "an idea about kites", "Ideas")
    listed = structured(await call(host, "get_capture", {"captureId": filed["id"]}))
    ideas = structured(await call(host, "list_bucket", {"bucket": "ideas", "limit": 100}))
    (item,) = [i for i in ideas["items"] if i["id"] == listed["id"]]
    wrong = {"captureId": item["id"], "etag": item["etag"], "nextAction": "Buy string"}
    error = tool_error(await call(host, "update_capture", wrong))
    assert (error["status"], error["code"]) == (422, "NOT_A_PROJECT")
    # No such capture: 404 (HTTP has no code for it; the tool error names the status).
    error = tool_error(await call(host, "get_capture", {"captureId": str(uuid.uuid4())}))
    assert (error["status"], error["code"]) == (404, "NOT_FOUND")
    await client.aclose()


async def test_an_edit_answers_the_new_etag_and_the_old_one_is_refused(host, fake) -> None:
    name = unique("Wren").capitalize()
    filed = await capture(host, fake, f"{name} says bins go out tuesday", title="Bins")
    (item,) = structured(await call(host, "list_bucket", {"bucket": "projects", "person": name}))[
        "items"
    ]
    edit = {"captureId": filed["id"], "etag": item["etag"], "title": "Bins day", "done": True}
    updated = structured(await call(host, "update_capture", edit))["item"]
    assert updated["title"] == "Bins day" and updated["done"] is True
    assert updated["etag"] != item["etag"]
    again = tool_error(await call(host, "update_capture", edit))
    assert again["code"] == "PRECONDITION_FAILED"
    cleared = {"captureId": filed["id"], "etag": updated["etag"], "dueDate": None}
    assert structured(await call(host, "update_capture", cleared))["item"]["dueDate"] is None


async def test_a_capture_asks_back_and_the_answer_files_it(host, fake) -> None:
    asking = await capture(host, fake, "kites? maybe", None, question="Idea or project?")
    assert asking["status"] in ("needs_clarification", "needs_review")
    fake.enqueue(fake_openai.classification("Ideas", 0.95, "Kites"))
    answered = structured(
        await call(host, "answer_question", {"captureId": asking["id"], "answer": "an idea"})
    )
    assert answered["status"] == "filed" and answered["filedBucket"] == "Ideas", answered


async def test_the_budget_is_the_http_apis(host) -> None:
    # One user's budget, spent over MCP, is spent for HTTP too: the same limiter.
    results = []
    async with mcp_client(host, LIMITED_KEY) as client:
        while len(results) <= BURST + 5 and not (results and results[-1].is_error):
            results.append(await client.call_tool("today", {}))
    assert len(results) > BURST and not any(r.is_error for r in results[:BURST])
    error = tool_error(results[-1])
    assert (error["status"], error["code"]) == (429, "RATE_LIMITED")
    assert error["retryAfter"] >= 1
    async with httpx.AsyncClient(base_url=host, timeout=30) as client:
        http = await client.get("/api/digest", headers=LIMITED_KEY)
    assert http.status_code == 429 and http.json()["code"] == "RATE_LIMITED"


async def test_each_capture_is_a_markdown_resource(host, fake, mine) -> None:
    waiting = await capture(host, fake, "kites, or not", None, question="Is it a project?")
    async with mcp_client(host, KEY) as client:
        (template,) = (await client.list_resource_templates()).resource_templates
        assert (template.uri_template, template.mime_type) == ("capture://{id}", "text/markdown")
        filed = await client.read_resource(f"capture://{mine['id']}")
        asking = await client.read_resource(f"capture://{waiting['id']}")
    (contents,) = filed.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.uri == f"capture://{mine['id']}" and contents.mime_type == "text/markdown"
    assert contents.text.startswith("---\n") and f'id: "{mine["id"]}"' in contents.text
    assert '\nbucket: "Projects"' in contents.text and mine["word"] in contents.text
    (open_one,) = asking.contents
    assert 'status: "' in open_one.text and "Question: Is it a project?" in open_one.text


async def test_a_resource_without_a_key_is_refused(host, mine) -> None:
    async with mcp_client(host) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"capture://{mine['id']}")
    # As the host tells a function's failure: that it failed, nothing of why.
    assert refused.value.code == types.INTERNAL_ERROR
    assert refused.value.message == f"An error occurred invoking 'capture://{mine['id']}'."


async def test_the_prompts_are_listed_and_filled_in(host) -> None:
    async with mcp_client(host) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"whats_due", "prepare_one_on_one", "weekly_review"}
        (person,) = prompts["prepare_one_on_one"].arguments or []
        assert person.name == "person" and person.required
        one_on_one = await client.get_prompt("prepare_one_on_one", {"person": "Sarah"})
        due = await client.get_prompt("whats_due")
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("prepare_one_on_one", {})
    (message,) = one_on_one.messages
    assert message.role == "user" and isinstance(message.content, types.TextContent)
    assert 'name "Sarah"' in message.content.text and "`person`" in message.content.text
    assert "`today`" in due.messages[0].content.text  # type: ignore[union-attr]
    assert refused.value.code == types.INVALID_PARAMS and "person" in refused.value.message


async def test_a_devhost_reached_by_another_name_answers_as_the_host_does(host) -> None:
    # The extension checks no Host header: a devhost reached by its LAN address answers.
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "curl", "version": "0"},
        },
    }
    headers = {"Host": "192.168.1.20:7071", "Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=host, timeout=10) as client:
        answer = await client.post("/runtime/webhooks/mcp", json=initialize, headers=headers)
        not_here = await client.get("/runtime/webhooks/mcp", headers=headers)
        gone = await client.delete("/runtime/webhooks/mcp", headers=headers)
    assert answer.status_code == 200 and '"serverInfo"' in answer.text, answer.text
    assert '"name":"second-brain"' in answer.text.replace(" ", "")
    # Stateless, as the extension: no standalone stream, no session to end.
    assert not_here.status_code == gone.status_code == 405
