"""The tools an outside assistant may call (services/assistant_tools.py) and the MCP door over
them: the door's functions are the catalogue (names, descriptions, schemas), the write tools
run their use cases on the fakes, and every refusal is a tool error with the HTTP API's code."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.domain.classification import Bucket
from shared.domain.errors import (
    Conflict,
    Invalid,
    LimitReached,
    NotFound,
    PreconditionFailed,
    StorageUnavailable,
)
from shared.http.mcp_binding import Invocation, tool_error, tool_result
from shared.http.problems import Problem
from shared.services.assistant_tools import ASSISTANT_TOOLS
from shared.services.recall import SearchResults
from shared.services.tools import READ_TOOLS, AssistantPorts, Tool
from tests.fakes import USER, DigestFakes, FakeAskThreads, Fakes, guess

NOW = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)


def ports(fakes: Fakes, wait_s: float = 5) -> AssistantPorts:
    return AssistantPorts(
        adapters=fakes.adapters,
        preferences=DigestFakes().preferences,
        max_capture_chars=100,
        wait_s=wait_s,
        now=lambda: NOW,
        ask_threads=FakeAskThreads(),
    )


def tool(name: str) -> Tool[Any, AssistantPorts]:
    return next(t for t in ASSISTANT_TOOLS if t.name == name)


def mcp_bindings() -> dict[str, dict[str, Any]]:
    """The MCP door's tool functions' trigger bindings, as the host reads them, by tool name."""
    import azure.functions as func

    from shared.entrypoints import mcp_server

    app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
    app.register_functions(mcp_server.bp)
    found = {}
    for function in app.get_functions():
        (binding,) = (json.loads(b) for b in function.get_raw_bindings())
        if binding["type"] == "mcpToolTrigger":
            found[binding["toolName"]] = {**binding, "function": function.get_function_name()}
    return found


def test_the_mcp_tools_are_the_catalogue() -> None:
    bindings = mcp_bindings()
    assert list(bindings) == [t.name for t in ASSISTANT_TOOLS]
    for t in ASSISTANT_TOOLS:
        binding = bindings[t.name]
        assert binding["function"] == f"mcp_tool_{t.name}"
        assert binding["description"] == t.description
        assert json.loads(binding["inputSchema"]) == t.input_schema()
        # The worker's schema, and the worker's whole result (text and structured content).
        assert binding["useWorkerInputSchema"] is True and binding["useResultSchema"] is True


def test_the_assistant_tools_are_the_catalogue_and_the_writes() -> None:
    names = [t.name for t in ASSISTANT_TOOLS]
    assert len(set(names)) == len(names)
    assert {t.name for t in READ_TOOLS} <= set(names)
    assert {"capture", "answer_question", "update_capture", "today"} <= set(names)
    read = {t.name: t for t in READ_TOOLS}
    for t in ASSISTANT_TOOLS:
        schema = t.input_schema()
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert t.description.strip() and all(
            p.get("description") for p in schema["properties"].values()
        ), t.name
        if t.name in read:  # the same tool the ask agent is shown
            assert (t.description, schema) == (
                read[t.name].description,
                read[t.name].input_schema(),
            )
    writes = {t.name for t in ASSISTANT_TOOLS if t.writes}
    assert writes == {"capture", "answer_question", "update_capture"}


async def test_capture_files_it_and_tells_the_outcome_once(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    item = await tool("capture").call(USER, {"text": "  Call Sarah  "}, ports(fakes))
    assert item.status.value == "filed" and item.filed_bucket is Bucket.PEOPLE
    assert item.text == "Call Sarah"
    again = await tool("capture").call(
        USER, {"text": "Call Sarah", "idempotencyKey": "k1"}, ports(fakes)
    )
    retried = await tool("capture").call(
        USER, {"text": "Call Sarah", "idempotencyKey": "k1"}, ports(fakes)
    )
    assert retried.id == again.id != item.id  # one key, one capture


async def test_capture_keeps_the_rules_every_door_keeps(fakes: Fakes) -> None:
    with pytest.raises(Invalid) as refused:
        await tool("capture").call(USER, {"text": "x" * 101}, ports(fakes))
    assert refused.value.code == "CAPTURE_TOO_LONG"
    with pytest.raises(Invalid) as refused:
        await tool("capture").call(USER, {"text": "   "}, ports(fakes))
    assert refused.value.code == "EMPTY_CAPTURE"


async def test_a_question_asked_back_is_answered_and_the_capture_filed(fakes: Fakes) -> None:
    fakes.classifier.then(
        guess(None, 0.2, "Hmm", question="A project or an idea?"),
        guess(Bucket.PROJECTS, 0.9, "Kitchen"),
    )
    asked = await tool("capture").call(USER, {"text": "kitchen tiles"}, ports(fakes))
    assert asked.question_text == "A project or an idea?" and not asked.filed_bucket
    answered = await tool("answer_question").call(
        USER, {"captureId": asked.id, "answer": "a project"}, ports(fakes)
    )
    assert answered.filed_bucket is Bucket.PROJECTS
    assert [c.text for c in answered.clarifications] == ["a project"]
    with pytest.raises(Conflict) as refused:
        await tool("answer_question").call(
            USER, {"captureId": asked.id, "answer": "again"}, ports(fakes)
        )
    assert refused.value.code == "NOT_AWAITING_CLARIFICATION"
    with pytest.raises(NotFound):
        await tool("answer_question").call(
            "someone-else", {"captureId": asked.id, "answer": "mine?"}, ports(fakes)
        )


async def test_an_update_needs_the_current_etag_and_answers_the_new_one(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9, "Kitchen"))
    item = await tool("capture").call(USER, {"text": "tile the kitchen"}, ports(fakes))
    await fakes.drain()
    filed = await fakes.repo.get_filed(USER, Bucket.PROJECTS, item.id)
    assert filed is not None and filed.etag
    args = {"captureId": item.id, "etag": filed.etag, "title": "Tiles", "dueDate": "2026-12-01"}
    updated = (await tool("update_capture").call(USER, args, ports(fakes))).to_json()["item"]
    assert updated["title"] == "Tiles" and updated["dueDate"] == "2026-12-01"
    assert updated["etag"] and updated["etag"] != filed.etag
    with pytest.raises(PreconditionFailed):
        await tool("update_capture").call(USER, args, ports(fakes))
    cleared = {"captureId": item.id, "etag": updated["etag"], "dueDate": None, "done": True}
    after = (await tool("update_capture").call(USER, cleared, ports(fakes))).to_json()["item"]
    assert after["dueDate"] is None and after["done"] is True and after["title"] == "Tiles"


async def test_today_is_the_digest_of_the_users_day(fakes: Fakes) -> None:
    digest = await tool("today").call(USER, {}, ports(fakes))
    assert digest.to_json()["date"] == "2026-11-27"
    other = await tool("today").call(USER, {"date": "2026-12-24"}, ports(fakes))
    assert other.to_json()["date"] == "2026-12-24"
    with pytest.raises(Invalid) as refused:
        await tool("today").call(USER, {"date": "tomorrow"}, ports(fakes))
    assert refused.value.code == "INVALID_ARGUMENTS" and "date" in refused.value.message


# -- the door's edge -------------------------------------------------------------------------


def envelope(answer: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """An McpToolResult (the extension's) and the CallToolResult it carries."""
    outer = json.loads(answer)
    assert outer["type"] == "call_tool_result"
    inner = json.loads(outer["content"])
    assert json.loads(outer["structuredContent"]) == inner["structuredContent"]
    return outer, inner


def test_a_result_is_text_and_structured_content() -> None:
    found = SearchResults(query="tiles", items=[])
    _, result = envelope(tool_result(found))
    assert result["isError"] is False
    assert result["structuredContent"] == found.to_json()
    (block,) = result["content"]
    assert block["type"] == "text" and json.loads(block["text"]) == found.to_json()


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (NotFound("There is no such capture."), 404, "NOT_FOUND"),
        (Conflict("Busy.", "CONFLICT"), 409, "CONFLICT"),
        (PreconditionFailed("Changed since.", "PRECONDITION_FAILED"), 412, "PRECONDITION_FAILED"),
        (Invalid("search: query: too short.", "INVALID_ARGUMENTS"), 422, "INVALID_ARGUMENTS"),
        (Problem(401, "A valid API key is required."), 401, "UNAUTHORIZED"),
        (StorageUnavailable("cosmos down"), 503, "SERVICE_UNAVAILABLE"),
        (RuntimeError("secret internals"), 500, "INTERNAL"),
    ],
)
def test_every_refusal_is_a_tool_error_with_the_https_status_and_code(exc, status, code) -> None:
    _, result = envelope(tool_error(exc))
    error = result["structuredContent"]["error"]
    assert result["isError"] is True
    assert (error["status"], error["code"]) == (status, code)
    assert result["content"][0]["text"] == f"{code}: {error['message']}"
    assert "secret" not in json.dumps(result) and "cosmos" not in json.dumps(result)


def test_a_rate_limit_says_when_to_come_back() -> None:
    limited = Problem(429, "Too many requests.", code="RATE_LIMITED", headers={"Retry-After": "7"})
    error = envelope(tool_error(limited))[1]["structuredContent"]["error"]
    assert (error["code"], error["retryAfter"]) == ("RATE_LIMITED", 7)
    reached = LimitReached("Too many feeds.", "TOO_MANY_FEEDS", retry_after_s=10)
    assert envelope(tool_error(reached))[1]["structuredContent"]["error"]["retryAfter"] == 10


def test_the_caller_is_the_key_in_the_transport_headers(unit_settings) -> None:
    import hashlib

    unit_settings(API_KEYS=f"ann:{hashlib.sha256(b'ann-key').hexdigest()}")
    context = {
        "name": "search",
        "arguments": {"query": "x"},
        "sessionid": None,
        "transport": {
            "name": "http-streamable",
            "properties": {"headers": {"X-Api-Key": "ann-key"}},
        },
    }
    assert Invocation.read(json.dumps(context)).user() == "ann"
    context["transport"]["properties"]["headers"] = {"Authorization": "Bearer ann-key"}
    assert Invocation.read(json.dumps(context)).user() == "ann"
    for headers in ({}, {"x-api-key": "nope"}):
        context["transport"]["properties"]["headers"] = headers
        with pytest.raises(Problem) as refused:
            Invocation.read(json.dumps(context)).user()
        assert refused.value.status == 401
    with pytest.raises(ValueError):
        Invocation.read("not json")


def test_the_docs_list_every_tool() -> None:
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    contract = (docs / "contract.md").read_text().split("## MCP server", 1)[1]
    contract = contract.split("\n## ", 1)[0]
    guide = (docs / "mcp.md").read_text()
    for t in ASSISTANT_TOOLS:
        assert f"| `{t.name}` |" in contract, t.name
        assert f"| `{t.name}` |" in guide, t.name


async def test_ask_answers_from_the_callers_captures_only(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9, "Kitchen tiles"))
    filed = await tool("capture").call(
        USER, {"text": "Kuba is doing the kitchen tiles now, done by Thursday"}, ports(fakes)
    )
    asked = {"question": "who is doing the kitchen tiles?", "threadId": "kitchen"}
    mine = await tool("ask").call(USER, asked, ports(fakes))
    assert [c.capture_id for c in mine.citations] == [filed.id]
    assert "Kuba" in mine.answer and "[1]" in mine.answer
    theirs = await tool("ask").call("someone-else", asked, ports(fakes))
    assert theirs.citations == [] and "[1]" not in theirs.answer
