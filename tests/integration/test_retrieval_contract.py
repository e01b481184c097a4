"""What search and related items may rely on from `CaptureSearch.hybrid` and `.nearest`, run on
the fake of tests/fakes.py (marked unit too) and on the local stand-in (`LocalHybridSearch`)
over the local Cosmos server, with the same assertions; and the Cosmos DB engine's query text,
as far as it can be checked without Azure (the local server runs neither VectorDistance nor
FullTextScore)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from shared.adapters.search import PROJECTION, hybrid_query, nearest_query
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.documents import utcnow
from shared.domain.ports import CaptureRepository, CaptureSearch
from shared.domain.retrieval import rrf
from tests.fakes import Fakes, new_id, text_item

START = utcnow() - timedelta(days=1)


class Subject:
    repo: CaptureRepository
    search: CaptureSearch


class OnFake(Subject):
    def __init__(self) -> None:
        fakes = Fakes()
        self.repo, self.search = fakes.repo, fakes.search


class OnCosmos(Subject):
    def __init__(self) -> None:
        from shared import bootstrap
        from shared.adapters.repository import CosmosCaptureRepository
        from shared.adapters.search import LocalHybridSearch
        from shared.services.recall import rank_by_words

        database = bootstrap.root().clients.cosmos_database()
        self.repo = CosmosCaptureRepository(database)
        self.search = LocalHybridSearch(database, rank_words=rank_by_words)


@pytest.fixture
async def subject(backend: Any) -> AsyncIterator[Subject]:
    if backend is None:
        yield OnFake()
        return
    from shared.bootstrap import reset

    yield OnCosmos()
    await reset()


@pytest.fixture
def user() -> str:
    return f"retrieval-{new_id()}"


def unit(*xs: float) -> list[float]:
    norm = math.sqrt(sum(x * x for x in xs))
    return [x / norm for x in xs]


# Four directions of meaning, and the query's: nearest COMMUTE, then ERRAND.
COMMUTE = unit(1, 0.1, 0, 0)
ERRAND = unit(0.5, 1, 0, 0)
GARDEN = unit(0.01, 0, 1, 0)
MUSIC = unit(0, 0, 0, 1)
QUERY = unit(1, 0, 0, 0)


async def stored(
    subject: Subject,
    user: str,
    text: str,
    vector: list[float] | None,
    n: int,
    *,
    status: Status = Status.FILED,
) -> InboxItem:
    bucket = Bucket.IDEAS if status in (Status.FILED, Status.NEEDS_REVIEW) else None
    item = text_item(
        text,
        user_id=user,
        status=status,
        filed_bucket=bucket,
        title=text[:20],
        created_at=START + timedelta(seconds=n),
    )
    if vector is not None:
        item = item.embedded(vector, "test:" + text)
    saved, _ = await subject.repo.add(item)
    return saved


async def test_hybrid_fuses_meaning_and_words(subject: Subject, user: str) -> None:
    meaning = await stored(subject, user, "cycling to work along the canal", COMMUTE, 1)
    both = await stored(subject, user, "bike to work, buy a bike lock", ERRAND, 2)
    words = await stored(subject, user, "the old bike in the shed", GARDEN, 3)
    no_vector = await stored(subject, user, "bike shop opening hours", None, 5)
    music = await stored(subject, user, "a playlist for the party", MUSIC, 6)

    found = await subject.search.hybrid(user, ["bike"], "bike", QUERY, 10)

    assert found.ranked
    # By words: both (4), then no_vector and words (3 each, newest first). By meaning:
    # meaning, both, words, music. Fused by 1/(60 + rank): both 1/61 + 1/62, words 1/63 +
    # 1/63, meaning 1/61, no_vector 1/62, music 1/64. A capture with no vector yet still comes
    # by its words, and one matching no word by its meaning.
    assert [i.id for i in found.items] == [both.id, words.id, meaning.id, no_vector.id, music.id]
    # Each vector's cosine similarity to the query's, for the service's least similarity.
    assert found.similarity[meaning.id] == pytest.approx(1 / math.sqrt(1.01), abs=1e-5)
    assert found.similarity[music.id] == pytest.approx(0.0, abs=1e-6)
    assert no_vector.id not in found.similarity
    assert (await subject.search.hybrid(user, ["bike"], "bike", QUERY, 2)).items == found.items[:2]


async def test_hybrid_finds_by_meaning_alone(subject: Subject, user: str) -> None:
    commute = await stored(subject, user, "cycling to work along the canal", COMMUTE, 1)
    await stored(subject, user, "a playlist for the party", MUSIC, 2)

    found = await subject.search.hybrid(user, ["commute"], "commute", QUERY, 1)

    assert [i.id for i in found.items] == [commute.id]


async def test_only_the_callers_captures_and_never_a_tombstone(subject: Subject, user: str) -> None:
    other = f"other-{new_id()}"
    mine = await stored(subject, user, "cycling to work", COMMUTE, 1)
    gone = await stored(subject, user, "bike commute plans", QUERY, 2, status=Status.DELETING)
    theirs = await stored(subject, other, "bike commute, cycling to work", QUERY, 3)

    found = await subject.search.hybrid(user, ["bike", "commute"], "bike commute", QUERY, 10)
    near = await subject.search.nearest(user, QUERY, 10, excluding="none")

    assert [i.id for i in found.items] == [mine.id]
    assert [i.id for i in near] == [mine.id]
    assert gone.id not in [i.id for i in found.items]
    assert [i.id for i in await subject.search.nearest(other, QUERY, 10, excluding="x")] == [
        theirs.id
    ]


async def test_nearest_gives_filed_items_nearest_first(subject: Subject, user: str) -> None:
    anchor = await stored(subject, user, "cycling to work", QUERY, 1)
    errand = await stored(subject, user, "bike lock", ERRAND, 2)
    commute = await stored(subject, user, "train or bike", COMMUTE, 3)
    review = await stored(subject, user, "cycle path", COMMUTE, 4, status=Status.NEEDS_REVIEW)
    await stored(subject, user, "bike?", QUERY, 5, status=Status.NEEDS_CLARIFICATION)
    garden = await stored(subject, user, "plant tulips", GARDEN, 6)

    near = await subject.search.nearest(user, QUERY, 10, excluding=anchor.id)

    ids = [i.id for i in near]
    assert set(ids[:2]) == {commute.id, review.id}
    assert ids[2:] == [errand.id, garden.id]
    [first] = await subject.search.nearest(user, QUERY, 1, excluding=anchor.id)
    assert first.id in {commute.id, review.id}


async def test_a_vector_changed_or_deleted_is_seen_at_once(subject: Subject, user: str) -> None:
    item = await stored(subject, user, "notes", GARDEN, 1)
    other = await stored(subject, user, "more notes", ERRAND, 2)
    before = await subject.search.nearest(user, QUERY, 1, excluding="x")
    assert [i.id for i in before] == [other.id]

    await subject.repo.save(item.embedded(QUERY, "test:new"))
    after = await subject.search.nearest(user, QUERY, 1, excluding="x")
    assert [i.id for i in after] == [item.id]

    await subject.repo.remove(user, item.id)
    assert [i.id for i in await subject.search.nearest(user, QUERY, 1, excluding="x")] == [other.id]


async def test_the_vector_is_stored_and_read_back_never_sent(subject: Subject, user: str) -> None:
    item = await stored(subject, user, "cycling to work", COMMUTE, 1)
    read = await subject.repo.get(user, item.id)
    assert read is not None and read.embedding is not None
    assert [round(x, 6) for x in read.embedding] == [round(x, 6) for x in COMMUTE]
    assert read.embedded_from == "test:cycling to work"
    assert "embedding" not in read.to_json() and "embeddedFrom" not in read.to_json()
    [hit] = (await subject.search.hybrid(user, ["cycling"], "cycling", QUERY, 5)).items
    assert hit.id == item.id


def test_rrf_adds_reciprocal_ranks() -> None:
    fused = rrf([["a", "b", "c"], ["c", "a"]])
    assert [i for i, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61)
    assert rrf([["x", "x", "y"]]) == [("x", 1 / 61), ("y", 1 / 62)]
    assert rrf([]) == []


def test_the_cosmos_query_is_one_rrf_in_the_users_partition() -> None:
    query, parameters = hybrid_query("u1", ["bike", "commute"], [0.5, 0.5], 7)
    assert query.startswith(
        f"SELECT TOP 7 {PROJECTION}, VectorDistance(c.embedding, @vector) AS similarity FROM c "
        "WHERE c.userId = @user"
    )
    assert query.endswith(
        "ORDER BY RANK RRF(VectorDistance(c.embedding, @vector), FullTextScore(c.text, @t0, @t1))"
    )
    values = {p["name"]: p["value"] for p in parameters}
    assert values == {
        "@user": "u1",
        "@deleting": "deleting",
        "@t0": "bike",
        "@t1": "commute",
        "@vector": [0.5, 0.5],
    }
    # The vector is never projected: a hit carries no 1536 floats.
    assert "c.embedding," not in PROJECTION and "c.embedding" not in PROJECTION.split(", ")

    near, near_parameters = nearest_query("u1", [1.0], 3, "cap-1")
    assert "c.userId = @user" in near and "c.id != @excluding" in near
    assert near.endswith("ORDER BY VectorDistance(c.embedding, @vector)")
    assert {p["name"]: p["value"] for p in near_parameters}["@filed"] == [
        "filed",
        "needs_review",
    ]
