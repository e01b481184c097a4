"""What fuzzing the HTTP API found, each kept as the smallest request that showed it, through the
devhost with real Azurite and Cosmos: the answer is a 4xx problem+json, where it was a 500."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import pytest

from shared.http.openapi import openapi_document
from testkit.support import KEY, run_input, running_devhost


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("fuzz-regressions")) as url:
        yield url


def assert_problem(response: httpx.Response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text[:300]
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["detail"]
    if code:
        assert body["code"] == code
    return body


def test_an_empty_voice_note_is_refused_not_a_500(client) -> None:
    # Was a 500: the Blob SDK cannot upload an iterator that yields nothing.
    files = {"file": ("note.m4a", b"", "audio/mp4")}

    def waiting() -> list[str]:
        inbox = client.get("/api/inbox?status=awaiting_upload&limit=100", headers=KEY).json()
        return [i["id"] for i in inbox["items"]]

    before = waiting()
    assert_problem(client.post("/api/voice-capture", files=files, headers=KEY), 422, "EMPTY_AUDIO")
    assert waiting() == before  # nothing was stored for it


@pytest.mark.parametrize(
    ("path", "body"),
    [("/api/capture", run_input("Call Sarah")), ("/api/voice-notes", {"contentType": "audio/mp4"})],
)
def test_an_idempotency_key_too_long_to_use_whole_is_refused(client, path, body) -> None:
    # Was accepted and cut to 200 characters, so two keys sharing those named one capture.
    headers = {**KEY, "Idempotency-Key": "k" * 201}
    assert_problem(client.post(path, json=body, headers=headers), 400, "BAD_IDEMPOTENCY_KEY")


@pytest.mark.parametrize("limit", ["%C2%B2", "9" * 5_000])
def test_an_inbox_limit_int_cannot_read_is_a_422(client, limit) -> None:
    # Was a 500: "²" and 5000-digit numbers pass str.isdigit(), then int() raises ValueError.
    assert_problem(client.get(f"/api/inbox?limit={limit}", headers=KEY), 422)


def test_a_continuation_token_of_deeply_nested_json_is_a_400(client) -> None:
    # Was a 500: json.loads raised RecursionError, which the token check did not catch.
    token = base64.urlsafe_b64encode(b"[" * 3_000).decode()
    response = client.get(f"/api/inbox?continuationToken={token}", headers=KEY)
    assert_problem(response, 400, "BAD_TOKEN")


def test_a_deeply_nested_body_is_a_400(client) -> None:
    # Was a 500 (RecursionError); the JSON nesting limit in shared/http_input.py answers it.
    headers = {**KEY, "Content-Type": "application/json"}
    assert_problem(client.post("/api/capture", content=b"[" * 100_000, headers=headers), 400)


# Found in the document itself: schema-valid requests by its word that the app refuses.


def test_the_document_requires_the_tag_of_every_tagged_union() -> None:
    # pydantic leaves `role` (messages) and `type` (content parts) optional, having defaults;
    # the app refuses a message without one, so the document must require them.
    schemas = openapi_document()["components"]["schemas"]
    for name in ("UserMessage", "ActivityMessage", "ToolMessage"):
        assert "role" in schemas[name]["required"]
    assert "type" in schemas["TextPart"]["required"]


def test_the_document_lists_the_audio_types_a_voice_note_may_be() -> None:
    # Any string was valid by the model's schema; all but these are a 415.
    schema = openapi_document()["components"]["schemas"]["VoiceNoteRequest"]
    assert "audio/mp4" in schema["properties"]["contentType"]["enum"]
    assert schema.get("additionalProperties") is False  # unknown fields are refused
