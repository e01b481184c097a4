"""Fuzzing the HTTP API through the devhost, with real Azurite and Cosmos: schemathesis against
the OpenAPI document the app serves, then raw bodies, paths and queries OpenAPI cannot express.
Every answer is a documented status, never a 5xx; every error is problem+json."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import Case, CheckContext, GenerationMode, Response
from schemathesis.config import SchemathesisConfig

from shared.http.contract import (
    CAPTURE,
    GET_CAPTURE,
    HEALTH,
    LIST_BUCKET,
    LIST_INBOX,
    OPENAPI,
    ROUTES,
    RUN_AGENT_INPUT,
    SEARCH,
    VOICE_FILE,
    Multipart,
    Route,
)
from shared.http.openapi import openapi_document
from shared.http.requests import BucketChoice
from shared.services.edit import FiledPatch
from testkit.support import KEY, run_input, running_devhost
from tests.sse import parse_sse

# Fixed seed and derandomised generation: the same cases every run, so a failure reproduces.
SEED = 20240611
MAX_EXAMPLES = 12

CONFIG = {
    "seed": SEED,
    "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True},
    # Both ways in of the one dev key: schemathesis also probes each with a wrong or no key.
    "auth": {
        "openapi": {
            "apiKey": {"api_key": KEY["X-API-Key"]},
            "bearer": {"bearer": KEY["X-API-Key"]},
        }
    },
    "request-timeout": 30,
    "checks": {
        # 503 is documented for storage outages; the emulators are up, so none is expected.
        "not_a_server_error": {"enabled": True},
        "status_code_conformance": {"enabled": True},
        "content_type_conformance": {"enabled": True},
        "response_schema_conformance": {"enabled": True},
        "ignored_auth": {"enabled": True},
        "negative_data_rejection": {
            "expected-statuses": ["400", "401", "404", "405", "409", "413", "415", "422"]
        },
        # A valid request about a capture that does not exist (random UUIDs) is rightly a 404,
        # a bucket pick on one that has no text yet a 409, and a run without user text a 422
        # with a reason code (checked below: never a field error the document didn't declare).
        "positive_data_acceptance": {"expected-statuses": ["2xx", "400", "404", "409", "422"]},
    },
}


# The only push service subscriptions may name here: a loopback port nothing listens on, so no
# push the fuzzing might set up ever leaves the machine.
NO_PUSH_SERVICE = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    # Short feeds: an events stream of a capture that never settles ends within the run.
    env = {
        **scripted_env,
        "EVENTS_TIMEOUT_S": "2",
        "SSE_KEEPALIVE_S": "1",
        "PUSH_SERVICE_ORIGINS": NO_PUSH_SERVICE,
    }
    with running_devhost(env, tmp_path_factory.mktemp("fuzz")) as url:
        yield url


# The audio part of a voice capture goes out as bytes, whatever was generated for it. Without
# this, schemathesis has no way to send a negative case's non-bytes value (a number, an object)
# as "audio/aac": about 1 case in 30 of that route raised instead of reaching the app.
schemathesis.serializer.alias(list(VOICE_FILE.media_types), "application/octet-stream")

# The document as the app builds it; the route serving exactly this is checked below. (A lazy
# `from_fixture` schema would load it from the devhost, but it breaks on pytest 9's nodes.)
schema = schemathesis.openapi.from_dict(
    openapi_document(), config=SchemathesisConfig.from_dict(CONFIG)
)


@schemathesis.check
def errors_are_problem_details(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Every 4xx/5xx the app answers is RFC 9457 problem+json with a matching status."""
    if response.status_code < 400:
        return None
    if response.status_code == 405 and not response.content and "allow" in response.headers:
        return None  # the Functions host's answer to a method no function takes, not the app's
    content_type = response.headers.get("content-type", [""])[0]
    assert content_type.startswith("application/problem+json"), (
        f"{response.status_code} answered as {content_type!r}"
    )
    body = json.loads(response.content)
    assert body["status"] == response.status_code and body["title"] and body["detail"]
    return True


# Schema-valid requests the app still refuses, for reasons JSON Schema cannot express.
SEMANTIC_CODES = {
    "NO_USER_MESSAGE",  # no user message, or not the last one
    "TOO_MANY_MESSAGES",  # over the MAX_MESSAGES setting
    "EMPTY_CAPTURE",
    "CAPTURE_TOO_LONG",
    "ANSWER_TOO_LONG",  # a follow-up longer than an answer (MAX_ANSWER_CHARS)
    # A question (POST /api/ask's last user message) blank, too long or with control characters.
    "EMPTY_QUESTION",
    "QUESTION_TOO_LONG",
    "INVALID_TEXT",
    "EMPTY_AUDIO",
    # An audio part the RunAgentInput schema cannot constrain: its mimeType, its base64, how
    # many there are, where its bytes are.
    "UNSUPPORTED_AUDIO_TYPE",
    "BAD_AUDIO_DATA",
    "TOO_MANY_AUDIO_PARTS",
    "UNSUPPORTED_AUDIO_SOURCE",
    "UNKNOWN_AUDIO_URL",
    "BAD_TOKEN",  # a continuation token we did not make
    "UNSUPPORTED_PUSH_SERVICE",  # a push endpoint that is not a real push service's
    "INVALID_PUSH_KEYS",  # a p256dh of the right shape that is not a point on P-256
    "UNKNOWN_TIME_ZONE",  # a time zone name the tz database does not have
    "INVALID_QUERY",  # an ISO week of the right shape that does not exist (2026-W99)
}


@schemathesis.check
def valid_data_is_refused_only_for_semantic_reasons(
    ctx: CheckContext, response: Response, case: Case
) -> bool | None:
    if response.status_code not in (400, 422) or case.meta is None:
        return None
    if case.meta.generation.mode is not GenerationMode.POSITIVE:
        return None
    code = json.loads(response.content).get("code")
    assert code in SEMANTIC_CODES, f"schema-valid data refused: {response.content[:300]!r}"
    return True


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_route_conforms_to_its_openapi_description(host: str, case: Case) -> None:
    case.call_and_validate(
        base_url=host,
        additional_checks=[
            errors_are_problem_details,
            valid_data_is_refused_only_for_semantic_reasons,
        ],
    )


def test_the_document_is_served_public_and_describes_every_route(host: str) -> None:
    response = httpx.get(f"{host}{OPENAPI.path}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    doc = response.json()
    assert doc == openapi_document()
    assert doc["openapi"].startswith("3.1")
    routes = {(route.path, route.method.lower()) for route in ROUTES}
    assert {(path, op) for path, ops in doc["paths"].items() for op in ops} == routes
    capture = doc["paths"][CAPTURE.path]["post"]
    assert capture["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/RunAgentInput"
    }
    assert set(doc["components"]["schemas"]["RunAgentInput"]["required"]) >= {
        "threadId",
        "runId",
        "messages",
    }
    assert doc["paths"][HEALTH.path]["get"]["security"] == []
    assert doc["components"]["securitySchemes"]["apiKey"]["name"] == "X-API-Key"


def test_a_positive_example_streams_a_run_the_document_describes(host: str) -> None:
    """The positive path as schemathesis sees it: a valid body answered 200 with an SSE run."""
    with httpx.Client(base_url=host, timeout=30) as client:
        response = client.post(CAPTURE.path, json=run_input("Call Sarah"), headers=KEY)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events, _ = parse_sse(response.text)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"


# Raw requests: what an OpenAPI description cannot express.

CAPTURE_ID = "0b9a3c3e-5d7f-4c61-9d43-2a0f9e6b1c55"  # well-formed, never created


def _url(route: Route, capture_id: str = CAPTURE_ID) -> str:
    return route.path.format(id=capture_id)


# Every route that takes a JSON body, as a URL (a capture that does not exist, in the path).
JSON_BODY_ROUTES = tuple(
    route for route in ROUTES if route.body is not None and not isinstance(route.body, Multipart)
)
# (method, URL): a PATCH route is fuzzed with PATCH, the others with POST.
JSON_ROUTES = tuple((route.method, _url(route)) for route in JSON_BODY_ROUTES)
RUN_INPUT_ROUTES = [_url(route) for route in JSON_BODY_ROUTES if route.body == RUN_AGENT_INPUT]
CONTENT_TYPES = (
    None,
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json\u00e9".encode("latin-1"),  # not ASCII: sent as the raw byte
    "",
)
RUN_ENDS = {"RUN_FINISHED", "RUN_ERROR"}


@pytest.fixture(scope="module")
def raw(host: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=host, timeout=30) as client:
        yield client


def assert_answered(response: httpx.Response) -> None:
    """A documented answer: problem+json for an error, or a whole run; never a 5xx."""
    assert response.status_code < 500, response.text[:300]
    content_type = response.headers.get("content-type", "")
    if response.status_code >= 400:
        assert content_type.startswith("application/problem+json"), (response, content_type)
        body = response.json()
        assert body["status"] == response.status_code and body["detail"]
    elif content_type.startswith("text/event-stream"):
        events, _ = parse_sse(response.text)
        assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] in RUN_ENDS


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and Infinity too: Python's json writes and reads them
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(
    route=st.sampled_from(JSON_ROUTES),
    body=st.binary(max_size=512),
    content_type=st.sampled_from(CONTENT_TYPES),
)
def test_random_bytes_get_a_problem(raw, route: tuple, body: bytes, content_type) -> None:
    headers = {**KEY, **({"Content-Type": content_type} if content_type is not None else {})}
    assert_answered(raw.request(*route, content=body, headers=headers))


@FUZZ
@given(route=st.sampled_from(JSON_ROUTES), value=json_values)
def test_any_json_value_gets_a_problem_or_a_run(raw, route: tuple, value: object) -> None:
    body = json.dumps(value).encode()  # lone surrogates arrive escaped, as JSON allows
    assert_answered(
        raw.request(*route, content=body, headers={**KEY, "Content-Type": "application/json"})
    )


@FUZZ
@given(
    field=st.sampled_from(["threadId", "runId", "messages", "state", "tools", "context"]),
    value=json_values,
    route=st.sampled_from(RUN_INPUT_ROUTES),
)
def test_a_run_input_with_one_field_of_any_type(raw, field: str, value: object, route) -> None:
    body = json.dumps({**run_input("Call Sarah"), field: value}).encode()
    headers = {**KEY, "Content-Type": "application/json"}
    assert_answered(raw.post(route, content=body, headers=headers))


@FUZZ
@given(text=st.text(min_size=1, max_size=64))
def test_any_capture_text_is_filed_or_refused(raw, text: str) -> None:
    # Any unicode, lone surrogates included (escaped by json.dumps): a run or a problem.
    body = json.dumps(run_input(text)).encode()
    response = raw.post(
        CAPTURE.path, content=body, headers={**KEY, "Content-Type": "application/json"}
    )
    assert_answered(response)


def _user(text: str, n: int) -> dict:
    return {"id": f"m{n}", "role": "user", "content": text}


ODD_BODIES = {
    "deeply nested arrays": b"[" * 100_000,
    "deeply nested objects": b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
    "nesting inside a run input": json.dumps(run_input("x"))[:-1].encode()
    + b', "state": '
    + b"[" * 5_000
    + b"]" * 5_000
    + b"}",
    "truncated": json.dumps(run_input("Call Sarah")).encode()[:-7],
    "not UTF-8": b'{"threadId": "t", "runId": "\xff\xfe", "messages": []}',
    "UTF-16": json.dumps(run_input("Call Sarah")).encode("utf-16"),
    "BOM then JSON": b"\xef\xbb\xbf" + json.dumps(run_input("Call Sarah")).encode(),
    "NUL bytes": b"\x00" * 64,
    "empty": b"",
    "JSON null": b"null",
    "a huge array": b"[" + b"0," * 100_000 + b"0]",
    "many messages": json.dumps(
        {"threadId": "t", "runId": "r", "messages": [_user("x", n) for n in range(3_000)]}
    ).encode(),
    "a huge string": json.dumps(run_input("x" * 200_000)).encode(),
    "over the body limit": b" " * (300 * 1024),
    "NaN and Infinity": b'{"threadId": NaN, "runId": Infinity, "bucket": -Infinity}',
    "duplicate keys": b'{"bucket": "People", "bucket": 1}',
    "a 5,000-digit number": b'{"threadId": ' + b"9" * 5_000 + b', "bucket": 1}',
}


@pytest.mark.parametrize("route", JSON_ROUTES)
@pytest.mark.parametrize("name", ODD_BODIES)
def test_odd_bodies_get_a_problem(raw, route: tuple, name: str) -> None:
    body = ODD_BODIES[name]
    headers = {**KEY, "Content-Type": "application/json"}
    response = raw.request(*route, content=body, headers=headers)
    assert_answered(response)


ODD_IDS = (
    "..",
    "...",
    "%2E%2E",
    "..%2F..%2Fhealth",
    "a%2Fb",
    "%2F",
    "%00",
    "%ZZ",
    "x" * 5_000,
    "caf%C3%A9",
    "%F0%9F%92%A9",
    "%FF%FE",
    "%23frag",
    "%3Fq=1",
    "id;param",
    " ",
    "%20",
    CAPTURE_ID.upper(),
    "{" + CAPTURE_ID + "}",
    CAPTURE_ID.replace("-", ""),
)
ID_ROUTES = [route for route in ROUTES if "{id}" in route.route]


# Ids that no longer match `captures/{id}` once the path is decoded or normalised: no function
# sees them, and the host answers its own bare 404, as the real Functions host does (or 405,
# when what is left is another route: `push/subscriptions/` is POST's).
LEAVE_THE_ROUTE = {"..", "..%2F..%2Fhealth", "a%2Fb", "%2F"}


@pytest.mark.parametrize("route", ID_ROUTES, ids=lambda route: f"{route.method} {route.path}")
@pytest.mark.parametrize("capture_id", ODD_IDS)
def test_odd_capture_ids_are_not_found(raw, route: Route, capture_id: str) -> None:
    url = raw.base_url.copy_with(raw_path=_url(route, capture_id).encode())
    body = {"bucket": "People"} if route.body is BucketChoice else run_input("Call Sarah")
    if route.body is FiledPatch:
        body = {"done": True}
    json_body = body if route.body is not None else None
    response = raw.request(route.method, url, json=json_body, headers=KEY)
    if capture_id in LEAVE_THE_ROUTE:
        assert response.status_code in (404, 405) and not response.content
    elif route.method == "DELETE":
        assert response.status_code == 204  # deleting what isn't there is done already
    else:
        assert_answered(response)
        assert response.status_code == 404, response.text[:300]


ODD_QUERIES = (
    "limit=0",
    "limit=-1",
    "limit=101",
    "limit=1.5",
    "limit=1e2",
    "limit=",
    "limit=%C2%B2",  # a superscript two: a digit to str.isdigit, not to int()
    "limit=%D9%A3",  # an Arabic-Indic three
    "limit=" + "9" * 5_000,
    "limit=0x10",
    "limit=%00",
    "limit=1&limit=2",
    "status=",
    "status=FILED",
    "status=%FF",
    "continuationToken=",
    "continuationToken=%FF%FE",
    "continuationToken=" + "A" * 8_000,
    "continuationToken=W10",  # base64 of []
    "continuationToken=bnVsbA",  # base64 of null
    "continuationToken=" + base64.urlsafe_b64encode(b"[" * 3_000).decode(),  # deep nesting
    "continuationToken=" + base64.urlsafe_b64encode(b'{"t":"x","ids":1}').decode(),
    "unknown=1",
    "%FF=%FF",
    "&&&",
    "=",
)


@pytest.mark.parametrize("query", ODD_QUERIES)
def test_odd_inbox_queries_get_a_page_or_a_problem(raw, query: str) -> None:
    url = raw.base_url.copy_with(raw_path=f"{LIST_INBOX.path}?{query}".encode())
    assert_answered(raw.get(url, headers=KEY))


# The recall routes' own parameters, besides the inbox's odd ones above.
RECALL_QUERIES = (
    *ODD_QUERIES,
    "done=TRUE",
    "done=1",
    "dueBefore=2026-13-01",
    "dueBefore=1700000000",
    "dueBefore=%FF",
    "person=",
    "person=" + "x" * 500,
    "person=%00%FF",
    "q=",
    "q=%00",
    "q=" + "x" * 5_000,
    "q=%F0%9F%92%A9",
    "q=%25%5F%5B",
    "q=a&limit=51",
)


@pytest.mark.parametrize("path", [LIST_BUCKET.path.format(bucket="admin"), SEARCH.path])
@pytest.mark.parametrize("query", RECALL_QUERIES)
def test_odd_recall_queries_get_an_answer_or_a_problem(raw, path: str, query: str) -> None:
    if path == SEARCH.path and not query.startswith("q="):
        query = f"q=x&{query}"
    url = raw.base_url.copy_with(raw_path=f"{path}?{query}".encode())
    assert_answered(raw.get(url, headers=KEY))


# Lone surrogates, numbers past Python's 4,300-digit limit and numbers no float holds (NaN and
# the infinities, which Python's json reads though JSON has no such thing, and 1e999), in every
# field of a valid body.
SURROGATE = "\udfff"
HUGE = "__a number of 5,000 digits__"
NUMBERS = {
    "<5000 digits>": "9" * 5_000,
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e999": "1e999",
    '"<5000 digits>"': '"' + "9" * 5_000 + '"',
}
# One valid body per JSON route, by operation id: a new route needs one here.
VALID_BODIES = {
    "capture": {
        **run_input("Call Sarah about the budget", thread_id="surrogates"),
        "protocolVersion": "1.0",
        "state": {"draft": "x"},
        "forwardedProps": {"n": 1},
    },
    "ask": {
        **run_input("Who is doing the kitchen tiles?", thread_id="surrogates"),
        "protocolVersion": "1.0",
    },
    "createCapture": {"text": "Call Sarah about the budget"},
    "startVoiceNote": {"contentType": "audio/mp4", "threadId": "surrogates"},
    "pickBucket": {"bucket": "People"},
    "editCapture": {"title": "Shed", "dueDate": "2026-12-01", "nextAction": "Buy", "done": True},
    "followUp": {
        **run_input("It was about the budget", thread_id="surrogates"),
        "protocolVersion": "1.0",
    },
    "putPreferences": {
        "timeZone": "Europe/London",
        "digestAt": "07:30",
        "digest": True,
        "weeklyReviewDay": "sunday",
        "reminders": True,
    },
    "subscribePush": {
        "endpoint": f"{NO_PUSH_SERVICE}/push/surrogates",
        "expirationTime": 1_900_000_000_000,
        "keys": {
            "p256dh": "BA9Y6ijR_hdIfZDVsxEr-oQAgL02NwGGRH6GhYdzh1_h8IT0Z4l2PTRqxfqH"
            "vEX9IU3phdELjSHNuNcBrRvbBt8",
            "auth": "c2l4dGVlbiBieXRlIGtleQ",
        },
    },
}


def _leaves(value: object, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _leaves(child, (*path, index))
    else:
        yield path


def _with(body: dict, path: tuple, value: object) -> dict:
    copy = json.loads(json.dumps(body))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return copy


def _mutants(valid: dict) -> Iterator[tuple[str, bytes]]:
    for path in _leaves(valid):
        # A run id of its own, unless it is the field under test: each mutant is a new capture
        # (the same id with another body would be refused as a reused key).
        body = {**valid, "runId": f"r-{uuid.uuid4()}"} if "runId" in valid else valid
        original = _with(body, path, None)
        leaf = json.loads(json.dumps(body))
        for step in path:
            leaf = leaf[step]
        where = ".".join(map(str, path))
        if isinstance(leaf, str):
            for odd in (leaf + SURROGATE, SURROGATE, "\ud83d" + leaf):
                yield f"{where}={odd!r}", json.dumps(_with(body, path, odd)).encode()
        # Any field, whatever its type, may arrive as a number Python cannot read or hold.
        text = json.dumps(_with(original, path, HUGE))
        for name, number in NUMBERS.items():
            yield f"{where}={name}", text.replace(f'"{HUGE}"', number).encode()


MUTANTS = [
    ((route.method, _url(route)), name, body)
    for route in JSON_BODY_ROUTES
    for name, body in _mutants(VALID_BODIES[route.operation_id])
]


@pytest.mark.parametrize(
    ("route", "name", "body"), MUTANTS, ids=[f"{r[0]} {r[1]} {n}" for r, n, _ in MUTANTS]
)
def test_surrogates_and_huge_numbers_in_every_field_get_a_problem_or_a_run(
    raw, route: tuple, name: str, body: bytes
) -> None:
    headers = {**KEY, "Content-Type": "application/json"}
    response = raw.request(*route, content=body, headers=headers)
    assert_answered(response)
    response.content.decode("utf-8")  # strict: what we answer is valid UTF-8


def test_every_capture_the_fuzzing_stored_reads_back(raw) -> None:
    """Runs last: whatever the tests above stored (lone surrogates in text and ids among it),
    the user's inbox pages, and each capture reads, as valid UTF-8."""
    token, seen = None, 0
    while True:
        query = "limit=100" + (f"&continuationToken={token}" if token else "")
        page = raw.get(f"{LIST_INBOX.path}?{query}", headers=KEY)
        assert page.status_code == 200, page.text[:300]
        body = json.loads(page.content.decode("utf-8"))
        for item in body["items"]:
            one = raw.get(_url(GET_CAPTURE, item["id"]), headers=KEY)
            assert one.status_code == 200 and one.content.decode("utf-8")
        seen += len(body["items"])
        token = body["continuationToken"]
        if not token:
            break
    assert seen > 0
