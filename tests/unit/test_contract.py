"""The HTTP contract is one description (shared/contract.py): the routes the function app
registers are exactly the routes /api/openapi.json documents, and the inbox's query model
accepts exactly what the document says it does. No emulators needed."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from devhost.loader import import_app
from shared.http.contract import LIST_INBOX
from shared.http.openapi import openapi_document
from shared.http.problems import Problem
from shared.http.queries import parse_inbox_query
from shared.services.inbox import InboxQuery

REPO = Path(__file__).resolve().parents[2]
OPERATIONS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def _openapi_path(prefix: str, template: str) -> str:
    """A Functions route template as an OpenAPI path: `{id:guid}` and `{id?}` are `{id}`."""
    return "/" + "/".join(
        part
        for part in (prefix, re.sub(r"\{\*?(\w+)(?::\w+)?\??\}", r"{\1}", template.strip("/")))
        if part
    )


@cache
def registered() -> frozenset[tuple[str, str]]:
    """(method, path) of every HTTP function, as the Python worker indexes the app."""
    host = json.loads((REPO / "host.json").read_text())
    prefix = host.get("extensions", {}).get("http", {}).get("routePrefix", "api")
    routes = set()
    for function in import_app(REPO):
        if function.trigger.type != "httpTrigger":
            continue
        raw = function.trigger.raw
        path = _openapi_path(prefix, raw.get("route") or function.name)
        # No methods: the function takes every one, which no document lists as such.
        for method in raw.get("methods") or ["*"]:
            routes.add((method.lower(), path))
    return frozenset(routes)


def documented() -> frozenset[tuple[str, str]]:
    return frozenset(
        (method, path)
        for path, operations in openapi_document()["paths"].items()
        for method in operations
        if method in OPERATIONS
    )


def test_the_function_app_registers_http_routes() -> None:
    assert len(registered()) >= 10  # the check below is about something


def test_every_registered_route_is_documented() -> None:
    missing = sorted(registered() - documented())
    assert not missing, f"registered, but not in /api/openapi.json: {missing}"


def test_every_documented_route_is_registered() -> None:
    missing = sorted(documented() - registered())
    assert not missing, f"in /api/openapi.json, but no function takes it: {missing}"


def _inbox_parameter(name: str) -> dict:
    (parameter,) = [
        p
        for p in openapi_document()["paths"][LIST_INBOX.path]["get"]["parameters"]
        if p["name"] == name
    ]
    return parameter


def test_the_inbox_query_takes_every_status_the_document_lists_and_no_other() -> None:
    listed = _inbox_parameter("status")["schema"]["enum"]
    assert "deleting" not in listed  # the delete's tombstone is never listed
    for status in listed:
        assert parse_inbox_query({"status": status}).status == status
    for status in ("deleting", "FILED", "", " filed"):
        with pytest.raises(Problem) as refused:
            parse_inbox_query({"status": status})
        assert refused.value.status == 422
        assert refused.value.detail == f"status must be one of: {', '.join(listed)}."


def test_the_inbox_query_takes_the_limits_the_document_gives() -> None:
    schema = _inbox_parameter("limit")["schema"]
    low, high = schema["minimum"], schema["maximum"]
    assert parse_inbox_query({}).limit == schema["default"]
    assert parse_inbox_query({"limit": str(low)}).limit == low
    assert parse_inbox_query({"limit": str(high)}).limit == high
    assert parse_inbox_query({"limit": "020"}).limit == 20
    # "²" and 5000-digit numbers are digits to str.isdigit(), not to int(); the others are
    # numbers pydantic alone would read.
    for limit in (str(low - 1), str(high + 1), "", "²", "9" * 5_000, " 5", "+5", "5.0", "1_0"):
        with pytest.raises(Problem) as refused:
            parse_inbox_query({"limit": limit})
        assert refused.value.status == 422
        assert refused.value.detail == f"limit must be a whole number from {low} to {high}."


def test_the_inbox_query_reads_only_the_documented_names() -> None:
    query = parse_inbox_query({"continuation_token": "x", "Limit": "0", "unknown": "1"})
    assert query == InboxQuery()
    assert parse_inbox_query({"continuationToken": ""}).continuation_token is None
    # The limit is checked first, as it always was.
    with pytest.raises(Problem, match="limit"):
        parse_inbox_query({"limit": "0", "status": "deleting"})
