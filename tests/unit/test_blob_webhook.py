"""How the devhost's blobs webhook reads Event Grid's bodies: the blob a `data.url` names, for
Azure's account hosts and the emulator's path-style URLs, and the validation code."""

from __future__ import annotations

import json

import pytest

from devhost.blob_webhook import BadEvents, blob_location, to_message, validation_code


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://acct.blob.core.windows.net/voice-notes/dev/abc.m4a",
            ("voice-notes", "dev/abc.m4a"),
        ),
        (
            "http://127.0.0.1:10000/devstoreaccount1/voice-notes/dev/abc.m4a",
            ("voice-notes", "dev/abc.m4a"),
        ),
        ("http://localhost:10000/devstoreaccount1/grid/a%20b%2Bc.txt", ("grid", "a b+c.txt")),
    ],
)
def test_the_blob_comes_from_the_url(offline, url: str, expected: tuple[str, str]) -> None:
    assert blob_location(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "voice-notes/dev/abc.m4a",
        "https://acct.blob.core.windows.net/voice-notes",
        "http://127.0.0.1:10000/devstoreaccount1/voice-notes",
    ],
)
def test_a_url_naming_no_blob_is_refused(offline, url: str) -> None:
    with pytest.raises(BadEvents):
        blob_location(url)


def test_a_message_carries_the_etag_quoted_as_the_host_compares_it(offline) -> None:
    event = {
        "id": "1",
        "data": {
            "url": "https://acct.blob.core.windows.net/grid/x.txt",
            "eTag": "0x8D4BCC2E4835CD0",
            "blobType": "BlockBlob",
        },
    }
    message = to_message(event, "Host.Functions.grid")
    assert message.model_dump(by_alias=True) == {
        "Type": "BlobTrigger",
        "FunctionId": "Host.Functions.grid",
        "BlobType": "BlockBlob",
        "ContainerName": "grid",
        "BlobName": "x.txt",
        "ETag": '"0x8D4BCC2E4835CD0"',
    }


def test_the_validation_code_of_either_schema(offline) -> None:
    grid = [{"id": "1", "data": {"validationCode": "abc"}}]
    cloud = {"id": "1", "data": json.dumps({"validationCode": "def"})}
    assert validation_code(json.dumps(grid).encode()) == "abc"
    assert validation_code(json.dumps(cloud).encode()) == "def"
    with pytest.raises(BadEvents):
        validation_code(b"[]")
