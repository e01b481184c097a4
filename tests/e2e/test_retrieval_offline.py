"""Search by meaning, related items and the embeddings backfill end to end, through a devhost
with the offline models (the real MiniLM) and the local stand-in over the Cosmos server: a
paraphrase finds its capture, related items are near in meaning, the vector (of the words: an
edited title is found by its words) is stored with the filed capture but never sent, every
answer is the caller's only, and captures stored before vectors are embedded by the
queue-driven backfill. A module of its own: its devhost runs the offline models."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from testkit.support import (
    ADMIN_KEY,
    DEV_KEYS,
    docs,
    eventually,
    running_devhost,
    warmed,
)

# Two users of this module's own: the suite's "dev" user has thousands of captures by now,
# which would crowd a search by meaning (and the assertions on what it finds) out.
_RUN = uuid.uuid4().hex[:12]
MINE = {"X-API-Key": f"retrieval-mine-{_RUN}"}
THEIRS = {"X-API-Key": f"retrieval-theirs-{_RUN}"}
_KEYS = ",".join(
    f"{user}-{_RUN}:{hashlib.sha256(key['X-API-Key'].encode()).hexdigest()}"
    for user, key in (("retrieval-mine", MINE), ("retrieval-theirs", THEIRS))
)


@pytest.fixture(scope="module")
def offline_host(provisioned: dict[str, str], tmp_path_factory) -> Iterator[str]:
    env = {**provisioned, "API_KEYS": f"{DEV_KEYS},{_KEYS}"}
    with running_devhost(env, tmp_path_factory.mktemp("retrieval-offline")) as url:
        yield warmed(url)


@pytest.fixture
def client(offline_host: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=offline_host, timeout=60) as c:
        yield c


def capture(client: httpx.Client, text: str, headers: dict[str, str] = MINE) -> dict:
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
    theirs = capture(client, "I want to start cycling to work along the canal", THEIRS)

    found = client.get("/api/search", params={"q": "bike commute", "limit": 50}, headers=MINE)
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
    other = client.get("/api/search", params={"q": "bike commute"}, headers=THEIRS).json()
    assert theirs["id"] in [h["id"] for h in other["items"]]
    assert not {cycling["id"], helmet["id"]} & {h["id"] for h in other["items"]}

    related = client.get(f"/api/captures/{cycling['id']}/related", headers=MINE)
    assert related.status_code == 200 and related.headers["cache-control"] == "no-store"
    near = [h["id"] for h in related.json()["items"]]
    assert related.json()["id"] == cycling["id"]
    assert helmet["id"] in near and cycling["id"] not in near and tax["id"] not in near
    assert theirs["id"] not in near
    # Another user's capture is not there for the caller.
    assert client.get(f"/api/captures/{theirs['id']}/related", headers=MINE).status_code == 404
    bad = client.get(f"/api/captures/{cycling['id']}/related?limit=99", headers=MINE)
    assert bad.status_code == 422 and bad.json()["code"]

    # Stored with the capture, never sent.
    (stored,) = docs(cosmos, "Inbox", cycling["id"])
    assert len(stored["embedding"]) == 384 and stored["embeddedFrom"].startswith("all-minilm")
    shown = client.get(f"/api/captures/{cycling['id']}", headers=MINE).json()
    assert "embedding" not in shown and "embeddedFrom" not in shown


def test_an_edited_title_is_found_and_the_vector_stays_of_the_words(client, cosmos) -> None:
    item = capture(client, "remember the towpath is closed on mondays")
    (before,) = docs(cosmos, "Inbox", item["id"])
    bucket = item["filedBucket"].lower()
    listed = client.get(f"/api/buckets/{bucket}", params={"limit": 100}, headers=MINE).json()
    [filed] = [i for i in listed["items"] if i["id"] == item["id"]]
    edited = client.patch(
        f"/api/captures/{item['id']}",
        json={"title": "Cycle route detour"},
        headers={**MINE, "If-Match": filed["etag"]},
    )
    assert edited.status_code == 200, edited.text
    (after,) = docs(cosmos, "Inbox", item["id"])
    assert after["title"] == "Cycle route detour"
    assert (after["embeddedFrom"], after["embedding"]) == (
        before["embeddedFrom"],
        before["embedding"],
    )
    found = client.get("/api/search", params={"q": "route detour"}, headers=MINE).json()
    assert item["id"] in [h["id"] for h in found["items"][:3]]


def test_the_backfill_embeds_captures_stored_before_vectors(client, cosmos) -> None:
    """Captures stored as before this change (no vector), then the backfill started by hand
    through the host's admin endpoint: its queue worker embeds them page after page; started
    again, it embeds only what is new and rewrites none of the others."""
    user = f"backfill-{uuid.uuid4()}"
    inbox = cosmos.get_container_client("Inbox")
    start = datetime.now(UTC) - timedelta(days=400)

    def old(n: int) -> str:
        text = "cycling to work along the canal" if n == 7 else f"old note {n}"
        item = InboxItem(
            id=f"bf-{user}-{n}",
            user_id=user,
            source="text",
            thread_id="t",
            run_id="r",
            text=text,
            status=Status.FILED,
            filed_bucket=Bucket.IDEAS,
            title=f"Old note {n}",
            created_at=start + timedelta(minutes=n),
        )
        inbox.create_item(item.to_json())  # as stored before: no vector
        return item.id

    def embedded() -> dict[str, str]:
        found = inbox.query_items(
            "SELECT c.id, c._etag FROM c WHERE c.userId = @u AND IS_ARRAY(c.embedding)",
            parameters=[{"name": "@u", "value": user}],
            partition_key=user,
        )
        return {d["id"]: d["_etag"] for d in found}

    ids = [old(n) for n in range(130)]  # more than a page (100)
    assert embedded() == {}
    body = {"input": json.dumps({"userId": user})}
    started = client.post("/admin/functions/embeddings_backfill", json=body, headers=ADMIN_KEY)
    assert started.status_code == 202, started.text
    eventually(lambda: len(embedded()) == len(ids), timeout=180, interval=1)
    before = embedded()
    (doc,) = docs(cosmos, "Inbox", ids[7])
    assert len(doc["embedding"]) == 384

    newer = old(500)
    again = client.post("/admin/functions/embeddings_backfill", json=body, headers=ADMIN_KEY)
    assert again.status_code == 202
    eventually(lambda: newer in embedded(), timeout=120, interval=1)
    # The new one embedded on the first page; the others of that page (the 99 newest) not
    # written again.
    after = embedded()
    first_page = sorted(ids, key=lambda i: int(i.rsplit("-", 1)[1]))[-99:]
    assert {i: after[i] for i in first_page} == {i: before[i] for i in first_page}
