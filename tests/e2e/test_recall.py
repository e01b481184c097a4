"""The recall routes end to end, through the devhost with real Azurite and Cosmos and the model
behind the scripted OpenAI server: a bucket's pages, the people, a person, search, editing a
filed item and the export, each for its caller only, and bad input as 4xx problems."""

from __future__ import annotations

import io
import json
import random
import string
import subprocess
import unicodedata
import zipfile
from collections.abc import Iterator
from datetime import datetime

import pytest

from testkit import fake_openai
from testkit.support import KEY, OTHER_KEY, run_input, running_devhost
from tests.sse import assert_valid_run, post_run


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("recall")) as url:
        yield url


def unique(prefix: str) -> str:
    """A word no other test writes: the session's database is shared."""
    return prefix + "".join(random.choices(string.ascii_lowercase, k=8))


def file(client, fake, text: str, bucket: str | None, title: str = "Filed", headers=KEY) -> str:
    fake.enqueue(fake_openai.classification(bucket, 0.9 if bucket else 0.1, title, "What?"))
    run = post_run(client, "/api/capture", run_input(text), headers=headers)
    assert_valid_run(run)
    return run.custom()["value"]["inboxItemId"]


def problem(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    if code is not None:
        assert body["code"] == code
    return body


def test_a_bucket_pages_and_filters_for_its_caller(client, fake) -> None:
    name = unique("Quill")
    made = [file(client, fake, f"{name} says step {n} is next", "Projects") for n in range(3)]
    first = client.get(f"/api/buckets/projects?person={name.lower()}&limit=2", headers=KEY)
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    page = first.json()
    assert page["bucket"] == "Projects" and page["continuationToken"]
    assert [i["id"] for i in page["items"]] == made[::-1][:2]
    item = page["items"][0]
    assert item["people"] == [name] and item["nextAction"] == "Filed" and item["etag"]
    assert set(item) >= {"text", "source", "createdAt", "dueDate", "done", "oneLiner"}
    token = page["continuationToken"]
    rest = client.get(
        f"/api/buckets/projects?person={name}&limit=2&continuationToken={token}", headers=KEY
    )
    assert [i["id"] for i in rest.json()["items"]] == [made[0]]
    assert rest.json()["continuationToken"] is None
    theirs = client.get(f"/api/buckets/projects?person={name}", headers=OTHER_KEY)
    assert theirs.status_code == 200 and theirs.json()["items"] == []
    done = client.get(f"/api/buckets/projects?person={name}&done=true", headers=KEY)
    assert done.json()["items"] == []


def test_admin_lists_by_due_date(client, fake) -> None:
    word = unique("Errand")
    undated = file(client, fake, f"{word} renew the permit", "Admin")
    later = file(client, fake, f"{word} pay the fine on 2099-03-04", "Admin")
    sooner = file(client, fake, f"{word} bins on 2099-03-01", "Admin")
    found = client.get("/api/buckets/admin?limit=100&dueBefore=2099-12-31", headers=KEY).json()
    ids = [i["id"] for i in found["items"]]
    assert ids.index(sooner) < ids.index(later) and undated not in ids
    assert found["items"][ids.index(sooner)]["dueDate"] == "2099-03-01"


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/api/buckets/nope", 404, "NO_SUCH_BUCKET"),
        ("/api/buckets/Admin", 404, "NO_SUCH_BUCKET"),
        ("/api/buckets/ideas?limit=0", 422, "INVALID_QUERY"),
        ("/api/buckets/ideas?limit=abc", 422, "INVALID_QUERY"),
        ("/api/buckets/ideas?done=yes", 422, "INVALID_QUERY"),
        ("/api/buckets/ideas?dueBefore=2026-02-30", 422, "INVALID_QUERY"),
        ("/api/buckets/ideas?continuationToken=%25%25", 400, "BAD_TOKEN"),
        ("/api/search?q=", 422, "INVALID_QUERY"),
        ("/api/search?q=%20%20", 422, "INVALID_QUERY"),
        (f"/api/search?q={'x' * 201}", 422, "INVALID_QUERY"),
        ("/api/search?q=a&limit=51", 422, "INVALID_QUERY"),
        ("/api/search", 422, "INVALID_QUERY"),
        ("/api/people/nobody%20at%20all", 404, "NO_SUCH_PERSON"),
        ("/api/people/ana?limit=101", 422, "INVALID_QUERY"),
        ("/api/people/ana?continuationToken=%25%25", 400, "BAD_TOKEN"),
    ],
)
def test_bad_input_is_a_problem(client, path: str, status: int, code: str) -> None:
    problem(client.get(path, headers=KEY), status, code)


@pytest.mark.parametrize(
    "path",
    ["/api/buckets/people", "/api/people", "/api/people/x", "/api/search?q=x", "/api/export"],
)
def test_every_route_needs_a_key(client, path: str) -> None:
    problem(client.get(path), 401)
    problem(client.patch("/api/captures/00000000-0000-0000-0000-000000000000", json={}), 401)


def test_people_and_a_person_case_and_accent_aside(client, fake) -> None:
    # Ends in a vowel: a lowercase word ending "ly", "ing" or "ed" reads as no one's name.
    suffix = unique("") + "a"
    zoe = f"Zoë{suffix}"
    # (A long capitalised word no list holds after "with" is a firm: "lunch with Northline".)
    first = file(client, fake, f"{zoe} says lunch on friday", "People")
    second = file(client, fake, f"ask zoe{suffix} about the tiles", "Projects")  # lowercase
    third = file(client, fake, f"{zoe}'s birthday", "People")
    listed = client.get("/api/people", headers=KEY).json()["people"]
    (entry,) = [p for p in listed if p["name"].lower().endswith(suffix)]
    assert entry["name"] == zoe and entry["mentions"] >= 2 and entry["openItems"] >= 2
    assert "lastMentionedAt" in entry
    page = client.get(f"/api/people/ZOE{suffix.upper()}", headers=KEY)
    assert page.status_code == 200, page.text
    ids = [i["id"] for i in page.json()["items"]]
    assert ids[0] == third and first in ids
    assert page.json()["name"] == zoe and page.json()["continuationToken"] is None
    # "ask zoe…": a name in lowercase counts where the sentence puts a person (issue 40).
    assert second in ids
    one = client.get(f"/api/people/{zoe}?limit=1", headers=KEY).json()
    assert [i["id"] for i in one["items"]] == [third] and one["continuationToken"]
    rest = client.get(
        f"/api/people/{zoe}?limit=5&continuationToken={one['continuationToken']}", headers=KEY
    ).json()
    assert [i["id"] for i in rest["items"]] == ids[1:] and rest["continuationToken"] is None
    theirs = client.get("/api/people", headers=OTHER_KEY).json()["people"]
    assert all(not p["name"].lower().endswith(suffix) for p in theirs)
    problem(client.get(f"/api/people/{zoe}", headers=OTHER_KEY), 404, "NO_SUCH_PERSON")


def test_search_finds_text_and_titles_for_its_caller(client, fake) -> None:
    word = unique("tiler")
    in_text = file(client, fake, f"the {word} comes at nine, ask about grout", "Projects")
    in_title = file(client, fake, "quote for the bathroom", "Projects", title=f"{word} quote")
    found = client.get(f"/api/search?q={word.upper()}", headers=KEY)
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["query"] == word.upper()
    hits = {h["id"]: h for h in body["items"]}
    # The word's matches (score > 0); other captures of the suite's user may come too, found
    # by meaning alone (score 0), and RRF may rank one of them among the word's matches.
    by_words = [h["id"] for h in body["items"] if h["score"] > 0]
    assert set(by_words) == {in_text, in_title}
    assert word in hits[in_text]["snippet"] and hits[in_text]["bucket"] == "Projects"
    assert hits[in_text]["status"] == "filed" and hits[in_text]["score"] > 0
    theirs = client.get(f"/api/search?q={word}", headers=OTHER_KEY).json()["items"]
    assert not {in_text, in_title} & {h["id"] for h in theirs}  # near in meaning: their own
    assert all(h["score"] == 0 for h in theirs)


def test_search_cuts_its_snippet_from_a_capture_whose_capitals_fold_longer(client, fake) -> None:
    # "İ" is two characters lowercased: an offset found in the lowercased text once ran past
    # the end of the text as written, and every search that found this capture answered 500.
    word, other = unique("grout"), unique("plain")
    dotted = file(client, fake, f"{'İ' * 80} İstanbul: the {word} {other} is due", "Projects")
    plain = file(client, fake, f"the {other} is plain", "Projects")
    found = client.get(f"/api/search?q={word}", headers=KEY)
    assert found.status_code == 200, found.text
    # The word's one match (score > 0); captures near in meaning alone come with score 0.
    (hit,) = [h for h in found.json()["items"] if h["score"] > 0]
    assert hit["id"] == dotted and f"the {word} {other} is due" in hit["snippet"]
    both = client.get(f"/api/search?q={other}", headers=KEY)
    assert both.status_code == 200, both.text
    # The two that hold the word (search also brings what is near in meaning, with score 0).
    assert {h["id"] for h in both.json()["items"] if h["score"] > 0} == {dotted, plain}


def test_the_export_unzips_with_names_every_system_creates_and_the_captures_times(
    client, fake, tmp_path
) -> None:
    word = unique("vault")
    titles = {
        "composed": f"Zoë {word}",
        "decomposed": f"Zoe\u0308 {word}",  # "e" and a combining diaeresis
        "upper": f"ZOË {word}",
        "device": "con",
        "port": "COM1",
        "override": f"invoice {word}\u202egpj.exe",  # a right-to-left override
    }
    ids = {key: file(client, fake, f"{key} {word}", "Ideas", title=t) for key, t in titles.items()}
    zipped = tmp_path / "export.zip"
    zipped.write_bytes(client.get("/api/export", headers=KEY).content)
    # unzip, as a user would: it sets each file's time from the entry, names as written.
    subprocess.run(["unzip", "-q", str(zipped), "-d", str(tmp_path / "out")], check=True)
    ideas = tmp_path / "out" / "Ideas"
    on_disk = {p.name: p for p in ideas.iterdir()}
    ours = {name: path for name, path in on_disk.items() if word in path.read_text()}
    # One file each, none overwriting another, as macOS and Windows would also have it:
    # names unique whatever the case and the form of their accents, in NFC.
    assert len(ours) == len(titles), sorted(ours)
    folded = {
        unicodedata.normalize("NFC", unicodedata.normalize("NFD", n).casefold()) for n in ours
    }
    assert len(folded) == len(ours)
    assert all(unicodedata.is_normalized("NFC", n) for n in ours)
    zoes = {n.casefold() for n in ours if n.casefold().startswith("zoë")}
    assert zoes == {f"zoë {word}.md", f"zoë {word} (2).md", f"zoë {word} (3).md"}
    assert {"_con.md", "_COM1.md", f"invoice {word}gpj.exe.md"} <= set(ours)
    assert not any(unicodedata.category(ch) == "Cf" for n in on_disk for ch in n)
    # Each note is dated by its capture, not 1980.
    for key, capture_id in ids.items():
        (path,) = [p for p in ours.values() if f'id: "{capture_id}"' in p.read_text()]
        created = client.get(f"/api/captures/{capture_id}", headers=KEY).json()["createdAt"]
        when = datetime.fromisoformat(created.replace("Z", "+00:00"))
        assert abs(path.stat().st_mtime - when.timestamp()) < 2, key


def test_a_filed_item_is_edited_under_its_etag(client, fake) -> None:
    word = unique("Edit")
    capture_id = file(client, fake, f"{word} plan the shed", "Projects", title="Shed")
    found = client.get(f"/api/search?q={word}", headers=KEY).json()["items"]
    (item,) = [h for h in found if h["score"] > 0]  # the word's match; others near in meaning
    page = client.get("/api/buckets/projects?limit=100", headers=KEY).json()["items"]
    (view,) = [i for i in page if i["id"] == capture_id]
    url = f"/api/captures/{capture_id}"
    merge = {"Content-Type": "application/merge-patch+json"}

    problem(client.patch(url, json={"done": True}, headers=KEY), 428, "PRECONDITION_REQUIRED")
    edit = {"title": "Build the shed", "done": True, "dueDate": "2099-01-02", "nextAction": "Buy"}
    answer = client.patch(
        url, content=json.dumps(edit), headers={**KEY, **merge, "If-Match": view["etag"]}
    )
    assert answer.status_code == 200, answer.text
    edited = answer.json()
    assert answer.headers["etag"] == edited["etag"] != view["etag"]
    assert (edited["title"], edited["done"], edited["dueDate"], edited["nextAction"]) == (
        "Build the shed", True, "2099-01-02", "Buy",
    )  # fmt: skip
    assert client.get(url, headers=KEY).json()["title"] == "Build the shed"  # the inbox too
    stale = client.patch(url, json={"done": False}, headers={**KEY, "If-Match": view["etag"]})
    problem(stale, 412, "PRECONDITION_FAILED")
    bare = edited["etag"].strip('"')  # without the quotes, as some clients send it
    cleared = client.patch(url, json={"dueDate": None}, headers={**KEY, "If-Match": bare})
    assert cleared.status_code == 200 and cleared.json()["dueDate"] is None
    theirs = client.patch(url, json={"done": False}, headers={**OTHER_KEY, "If-Match": bare})
    problem(theirs, 404)
    etag = {"If-Match": cleared.json()["etag"]}
    problem(client.patch(url, json={"status": "x"}, headers={**KEY, **etag}), 422)
    problem(client.patch(url, json={"done": "yes"}, headers={**KEY, **etag}), 422)
    problem(client.patch(url, content=b"{", headers={**KEY, **etag, **merge}), 400)
    problem(
        client.patch(url, content=b"{}", headers={**KEY, **etag, "Content-Type": "text/plain"}), 415
    )
    unfiled = file(client, fake, "qqq", None)
    problem(
        client.patch(f"/api/captures/{unfiled}", json={}, headers={**KEY, **etag}), 409, "NOT_FILED"
    )
    problem(client.patch("/api/captures/not-an-id", json={}, headers={**KEY, **etag}), 404)
    assert item["id"] == capture_id


def test_a_capture_reads_back_what_its_filed_item_holds(client, fake) -> None:
    """GET of a capture and its line in captures.jsonl carry the filed item's people, due date,
    next action and done, as filed and as edited (issue 39)."""
    word = unique("Details")
    capture_id = file(client, fake, f"{word} ask Ottilie to renew it on 2099-03-04", "Admin")
    url = f"/api/captures/{capture_id}"
    capture = client.get(url, headers=KEY).json()
    page = client.get("/api/buckets/admin?limit=100", headers=KEY).json()["items"]
    (filed,) = [i for i in page if i["id"] == capture_id]
    assert (capture["people"], capture["dueDate"], capture["done"], capture["nextAction"]) == (
        filed["people"], filed["dueDate"], False, None,
    ) == (["Ottilie"], "2099-03-04", False, None)  # fmt: skip

    edit = {"title": "Renew it", "dueDate": "2099-05-06", "done": True}
    answer = client.patch(url, json=edit, headers={**KEY, "If-Match": filed["etag"]})
    assert answer.status_code == 200, answer.text
    capture = client.get(url, headers=KEY).json()
    assert (capture["title"], capture["dueDate"], capture["done"]) == (
        "Renew it", "2099-05-06", True,
    )  # fmt: skip
    with client.stream("GET", "/api/export", headers=KEY) as response:
        archive = zipfile.ZipFile(io.BytesIO(b"".join(response.iter_bytes())))
    lines = [json.loads(line) for line in archive.read("captures.jsonl").splitlines()]
    (line,) = [line for line in lines if line["id"] == capture_id]
    assert (line["dueDate"], line["people"], line["done"]) == ("2099-05-06", ["Ottilie"], True)


def test_a_bad_edit_says_what_is_wrong_with_each_field(client, fake) -> None:
    capture_id = file(client, fake, unique("Long") + " the shed roof", "Projects", title="Roof")
    page = client.get("/api/buckets/projects?limit=100", headers=KEY).json()["items"]
    (view,) = [i for i in page if i["id"] == capture_id]
    headers = {**KEY, "If-Match": view["etag"]}
    url = f"/api/captures/{capture_id}"
    body = problem(client.patch(url, json={"title": "x" * 121}, headers=headers), 422)
    assert body["code"] == "INVALID_PATCH"
    assert body["detail"] == "title: at most 120 characters."
    assert body["errors"] == [{"loc": "title", "msg": "at most 120 characters"}]
    body = problem(client.patch(url, json={"dueDate": "soon", "done": "yes"}, headers=headers), 422)
    assert body["code"] == "INVALID_PATCH"
    assert [e["loc"] for e in body["errors"]] == ["dueDate", "done"]
    assert body["detail"].startswith("dueDate: must be a day (YYYY-MM-DD)")
    body = problem(client.patch(url, json={"title": "   "}, headers=headers), 422, "INVALID_PATCH")
    assert body["detail"] == "title: cannot be empty."
    assert client.patch(url, json={"title": "x" * 120}, headers=headers).status_code == 200


def test_the_export_is_a_zip_of_the_callers_items(client, fake) -> None:
    word = unique("Export")
    capture_id = file(
        client, fake, f"{word} idea: a map of quiet places", "Ideas", title=f"{word}: map?"
    )
    with client.stream("GET", "/api/export", headers=KEY) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/zip"
        disposition = response.headers["content-disposition"]
        assert disposition.startswith('attachment; filename="second-brain-20')
        data = b"".join(response.iter_bytes())
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    note = archive.read(f"Ideas/{word} map.md").decode()
    assert f'id: "{capture_id}"' in note and 'source: "text"' in note
    lines = [json.loads(line) for line in archive.read("captures.jsonl").splitlines()]
    assert capture_id in {line["id"] for line in lines}
    assert {line["userId"] for line in lines} == {"dev"}
    theirs = zipfile.ZipFile(io.BytesIO(client.get("/api/export", headers=OTHER_KEY).content))
    everything = b"".join(theirs.read(name) for name in theirs.namelist())
    assert word.encode() not in everything and capture_id.encode() not in everything
    assert all(word not in name for name in theirs.namelist())
