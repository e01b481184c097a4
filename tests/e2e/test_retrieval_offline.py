"""Search by meaning and related items end to end, through a devhost with the offline models
(the real MiniLM) and the local stand-in over the Cosmos server: a paraphrase finds its capture,
related items are near in meaning, the vector is stored with the filed capture and renewed by an
edit of its title but never sent, and every answer is the caller's only. A module of its own:
its devhost runs the offline models."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from testkit.support import DEV_KEYS, KEY, OTHER_KEY, docs, running_devhost, warmed


@pytest.fixture(scope="module")
def offline_host(provisioned: dict[str, str], tmp_path_factory) -> Iterator[str]:
    env = {**provisioned, "API_KEYS": DEV_KEYS}
    with running_devhost(env, tmp_path_factory.mktemp("retrieval-offline")) as url:
        yield warmed(url)


@pytest.fixture
def client(offline_host: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=offline_host, timeout=60) as c:
        yield c


def capture(client: httpx.Client, text: str, headers: dict[str, str] = KEY) -> dict:
    answer = client.post(
        "/api/captures", json={"text": text}, headers={**headers, "Prefer": "wait=30"}
    )
    assert answer.status_code == 201, answer.text
    item = answer.json()
    assert item["status"] in ("filed", "needs_review"), item
    return item


def test_a_paraphrase_finds_its_capture_and_related_items_are_near(client, cosmos) -> None:
    cycling = capture(client, "I want to start cycling to work along the canal")
    helmet = capture(client, "buy a helmet for riding my bicycle to the office")
    tax = capture(client, "pay the council tax bill before friday")
    theirs = capture(client, "I want to start cycling to work along the canal", OTHER_KEY)

    found = client.get("/api/search", params={"q": "bike commute", "limit": 50}, headers=KEY)
    assert found.status_code == 200, found.text
    body = found.json()
    ids = [h["id"] for h in body["items"]]
    assert body["ranking"] == "hybrid"
    # Not a word in common, and found by its meaning; the tax bill is not near enough.
    assert cycling["id"] in ids and tax["id"] not in ids
    assert ids.index(cycling["id"]) < 3
    assert theirs["id"] not in ids
    assert all("embedding" not in h for h in body["items"])
    # The other user finds theirs, never the caller's.
    other = client.get("/api/search", params={"q": "bike commute"}, headers=OTHER_KEY).json()
    assert theirs["id"] in [h["id"] for h in other["items"]]
    assert not {cycling["id"], helmet["id"]} & {h["id"] for h in other["items"]}

    related = client.get(f"/api/captures/{cycling['id']}/related", headers=KEY)
    assert related.status_code == 200 and related.headers["cache-control"] == "no-store"
    near = [h["id"] for h in related.json()["items"]]
    assert related.json()["id"] == cycling["id"]
    assert helmet["id"] in near and cycling["id"] not in near and tax["id"] not in near
    assert theirs["id"] not in near
    # Another user's capture is not there for the caller.
    assert client.get(f"/api/captures/{theirs['id']}/related", headers=KEY).status_code == 404
    bad = client.get(f"/api/captures/{cycling['id']}/related?limit=99", headers=KEY)
    assert bad.status_code == 422 and bad.json()["code"]

    # Stored with the capture, never sent.
    (stored,) = docs(cosmos, "Inbox", cycling["id"])
    assert len(stored["embedding"]) == 384 and stored["embeddedFrom"].startswith("all-minilm")
    shown = client.get(f"/api/captures/{cycling['id']}", headers=KEY).json()
    assert "embedding" not in shown and "embeddedFrom" not in shown


def test_an_edited_title_renews_the_vector(client, cosmos) -> None:
    item = capture(client, "remember the towpath is closed on mondays")
    (before,) = docs(cosmos, "Inbox", item["id"])
    bucket = item["filedBucket"].lower()
    listed = client.get(f"/api/buckets/{bucket}", params={"limit": 100}, headers=KEY).json()
    [filed] = [i for i in listed["items"] if i["id"] == item["id"]]
    edited = client.patch(
        f"/api/captures/{item['id']}",
        json={"title": "Cycle route detour"},
        headers={**KEY, "If-Match": filed["etag"]},
    )
    assert edited.status_code == 200, edited.text
    (after,) = docs(cosmos, "Inbox", item["id"])
    assert after["embeddedFrom"] != before["embeddedFrom"]
    assert after["embedding"] != before["embedding"]
    found = client.get("/api/search", params={"q": "cycle route detour"}, headers=KEY).json()
    assert item["id"] in [h["id"] for h in found["items"][:3]]
