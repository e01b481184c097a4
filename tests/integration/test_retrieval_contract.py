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
    assert [i.id for i in near.items] == [mine.id]
    assert gone.id not in [i.id for i in found.items]
    their_near = await subject.search.nearest(other, QUERY, 10, excluding="x")
    assert [i.id for i in their_near.items] == [theirs.id]


async def test_nearest_gives_filed_items_nearest_first(subject: Subject, user: str) -> None:
    anchor = await stored(subject, user, "cycling to work", QUERY, 1)
    errand = await stored(subject, user, "bike lock", ERRAND, 2)
    commute = await stored(subject, user, "train or bike", COMMUTE, 3)
    review = await stored(subject, user, "cycle path", COMMUTE, 4, status=Status.NEEDS_REVIEW)
    await stored(subject, user, "bike?", QUERY, 5, status=Status.NEEDS_CLARIFICATION)
    garden = await stored(subject, user, "plant tulips", GARDEN, 6)

    near = await subject.search.nearest(user, QUERY, 10, excluding=anchor.id)

    ids = [i.id for i in near.items]
    # Each with its cosine similarity to the vector asked about, nearest first.
    assert near.similarity[commute.id] == pytest.approx(1 / math.sqrt(1.01), abs=1e-5)
    assert [near.similarity[i] for i in ids] == sorted(
        (near.similarity[i] for i in ids), reverse=True
    )
    assert set(ids[:2]) == {commute.id, review.id}
    assert ids[2:] == [errand.id, garden.id]
    [first] = (await subject.search.nearest(user, QUERY, 1, excluding=anchor.id)).items
    assert first.id in {commute.id, review.id}


async def test_a_vector_changed_or_deleted_is_seen_at_once(subject: Subject, user: str) -> None:
    item = await stored(subject, user, "notes", GARDEN, 1)
    other = await stored(subject, user, "more notes", ERRAND, 2)
    before = await subject.search.nearest(user, QUERY, 1, excluding="x")
    assert [i.id for i in before.items] == [other.id]

    await subject.repo.save(item.embedded(QUERY, "test:new"))
    after = await subject.search.nearest(user, QUERY, 1, excluding="x")
    assert [i.id for i in after.items] == [item.id]

    await subject.repo.remove(user, item.id)
    gone = await subject.search.nearest(user, QUERY, 1, excluding="x")
    assert [i.id for i in gone.items] == [other.id]


async def test_an_edit_or_a_removal_is_seen_by_the_next_search(subject: Subject, user: str) -> None:
    """The stand-in holds the captures in the process: each search brings them up to date
    (an edit's new words and title, a removal that wrote nothing since, one removed and one
    added between two searches)."""
    tiles = await stored(subject, user, "kitchen tiles from Marco", GARDEN, 1)
    other = await stored(subject, user, "garden fence", MUSIC, 2)
    assert [i.id for i in (await subject.search.hybrid(user, ["marco"], "marco", ERRAND, 5)).items][
        :1
    ] == [tiles.id]

    edited = tiles.model_copy(update={"text": "kitchen tiles from Kuba", "title": "Tiler Kuba"})
    edited = await subject.repo.save(edited)
    by_new = await subject.search.hybrid(user, ["kuba"], "kuba", ERRAND, 5)
    [hit] = [i for i in by_new.items if i.id == tiles.id]
    assert (hit.text, hit.title) == ("kitchen tiles from Kuba", "Tiler Kuba")
    by_old = await subject.search.hybrid(user, ["marco"], "marco", MUSIC, 1)
    assert [i.id for i in by_old.items] == [other.id]  # by meaning alone: no word matches

    await subject.repo.remove(user, tiles.id)
    gone = await subject.search.hybrid(user, ["kitchen"], "kitchen", GARDEN, 5)
    assert [i.id for i in gone.items] == [other.id]

    # One removed and one added between two searches: the count alone would not tell.
    await subject.repo.remove(user, other.id)
    added = await stored(subject, user, "garden shed", MUSIC, 3)
    now = await subject.search.hybrid(user, ["garden"], "garden", MUSIC, 5)
    assert [i.id for i in now.items] == [added.id]
    near = await subject.search.nearest(user, MUSIC, 5, excluding="x")
    assert [i.id for i in near.items] == [added.id]


ODD_TEXTS = [
    ("İstanbul trip in May", "Travel", None),
    ("KIRMIZI kap\u0131", None, None),
    ("Große STRASSE party", "ΣΟΦΟΣ notes", None),
    ("a ﬁle for the ﬂat", None, "the café, naïve"),
    ("🚲 ride to the Ǆungla", "ǅ title", None),
    (None, "A voice note still untranscribed", "a LATER answer: Straße"),
]
ODD_TERMS = [
    "i̇stanbul", "istanbul", "k\u0131rm\u0131z\u0131", "kirmizi", "große", "strasse", "straße",
    "σοφος", "σοφοσ", "file", "ﬁle", "café", "naïve", "🚲", "ǆungla", "ǆ", "later", "voice", "t",
    "", "a\x00b",  # matched field by field: every capture with a field, and none
]  # fmt: skip


async def test_words_match_as_the_servers_lowercased_contains(subject: Subject, user: str) -> None:
    """The stand-in matches words in the process: the same captures as `search` (the local
    server's CONTAINS over LOWER of the text, title and answers), odd Unicode included, and
    the newest LOCAL_CANDIDATES of them."""
    from shared.adapters.search import LOCAL_CANDIDATES
    from shared.domain.capture import Clarification

    for n, (text, title, answer) in enumerate(ODD_TEXTS):
        answers = [Clarification(run_id=f"r{n}", text=answer)] if answer else []
        item = text_item(
            text, user_id=user, title=title, clarifications=answers, created_at=START
        ).model_copy(update={"created_at": START + timedelta(seconds=n)})
        await subject.repo.add(item)
    matches = {}
    for term in ODD_TERMS:
        by_store = await subject.search.search(user, [term], 100)
        by_words = await subject.search.hybrid(user, [term], term, QUERY, 100)
        assert {i.id for i in by_words.items} == {i.id for i in by_store.items}, term
        matches[term] = len(by_words.items)
    # Lowercasing, not folding: "STRASSE" is "strasse", "ΣΟΦΟΣ" ends in a final sigma.
    counts = [matches[t] for t in ("straße", "große", "σοφος", "σοφοσ", "🚲", "t", "", "a\x00b")]
    assert counts == [1, 1, 1, 0, 1, 5, 6, 0]

    # The three oldest score best ("tile" thrice) but are not among the newest matches.
    many = [
        await stored(subject, user, "tile tile tile" if n < 3 else f"tile {n}", None, 100 + n)
        for n in range(LOCAL_CANDIDATES + 3)
    ]
    found = await subject.search.hybrid(user, ["tile"], "tile", QUERY, 10)
    assert [i.id for i in found.items] == [i.id for i in reversed(many[-10:])]


async def test_a_capture_id_in_two_partitions_answers_each_its_own(
    subject: Subject, user: str
) -> None:
    other = f"other-{new_id()}"
    mine = await stored(subject, user, "cycling to work", COMMUTE, 1)
    twin = text_item("a playlist for the party", user_id=other, id=mine.id, status=Status.FILED)
    twin = twin.model_copy(update={"filed_bucket": Bucket.IDEAS, "created_at": START})
    await subject.repo.add(twin.embedded(MUSIC, "test:twin"))

    for _ in range(2):  # each user's held captures, read first and then brought up to date
        [hit] = (await subject.search.hybrid(user, ["cycling"], "cycling", COMMUTE, 5)).items
        assert (hit.user_id, hit.text) == (user, "cycling to work")
        [theirs] = (await subject.search.hybrid(other, ["party"], "party", MUSIC, 5)).items
        assert (theirs.user_id, theirs.text) == (other, "a playlist for the party")
        [near] = (await subject.search.nearest(other, COMMUTE, 5, excluding="x")).items
        assert near.user_id == other


async def test_the_stand_in_lets_the_least_recently_searched_user_go(
    cosmos: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in holds at most LOCAL_USERS users' captures; one let go is read again."""
    from shared import bootstrap
    from shared.adapters import search as module

    monkeypatch.setattr(module, "LOCAL_USERS", 1)
    subject = OnCosmos()
    first, second = f"retrieval-{new_id()}", f"retrieval-{new_id()}"
    mine = await stored(subject, first, "cycling to work", COMMUTE, 1)
    theirs = await stored(subject, second, "cycling to the lake", COMMUTE, 2)
    try:
        for user, item in ((first, mine), (second, theirs), (first, mine)):
            found = await subject.search.hybrid(user, ["cycling"], "cycling", COMMUTE, 5)
            assert [i.id for i in found.items] == [item.id]
            assert list(subject.search._users) == [user]  # type: ignore[attr-defined]
    finally:
        await bootstrap.reset()


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
        "ORDER BY RANK RRF(VectorDistance(c.embedding, @vector), "
        "FullTextScore(c.text, @t0, @t1), FullTextScore(c.title, @t0, @t1))"
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
    assert "VectorDistance(c.embedding, @vector) AS similarity" in near
    assert "c.userId = @user" in near and "c.id != @excluding" in near
    assert near.endswith("ORDER BY VectorDistance(c.embedding, @vector)")
    assert {p["name"]: p["value"] for p in near_parameters}["@filed"] == [
        "filed",
        "needs_review",
    ]
