"""Retrieval on the fakes: what text of a capture is embedded, the vector written with its filing
and renewed by an edit of its title, a model that is down never failing a capture or a search,
hybrid search's answer, related items (the caller's only), and the vector kept out of what is
sent."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.domain.capture import Clarification, InboxItem, Status
from shared.domain.classification import Bucket, excerpt_to_classify
from shared.domain.documents import utcnow
from shared.domain.errors import EmbedderUnavailable, NotFound
from shared.domain.retrieval import embedding_key, embedding_text
from shared.services.edit import FiledPatch, edit_filed
from shared.services.embedding import embed_all, is_current, with_embedding
from shared.services.filing import classify_and_file
from shared.services.recall import RelatedQuery, SearchQuery, related, search
from tests.fakes import USER, Fakes, guess, text_item

START = utcnow() - timedelta(days=1)


async def filed(fakes: Fakes, text: str, title: str, n: int = 0, user: str = USER) -> InboxItem:
    """A capture classified and filed in Ideas, with the fakes' embedder."""
    fakes.classifier.then(guess(Bucket.IDEAS, 0.9, title))
    item = fakes.repo.seed(text_item(text, user_id=user, created_at=START + timedelta(minutes=n)))
    return await classify_and_file(
        item, fakes.repo, fakes.classifier, fakes.outbox, embedder=fakes.embedder
    )


def test_the_embedded_text_is_what_the_classifier_reads() -> None:
    assert embedding_text("  cycling to work ") == "cycling to work"
    # A long capture is read as the classifier reads it (its start and end).
    long = "word " * 5000
    assert embedding_text(long) == excerpt_to_classify(long.strip())
    answered = text_item("the thing").model_copy(
        update={"clarifications": [Clarification(run_id="r2", text="the bike lock")]}
    )
    assert answered.embedding_text() == "the bike lock\nthe thing"


async def test_the_vector_is_written_with_the_filing(fakes: Fakes) -> None:
    saved = await filed(fakes, "cycling to work along the canal", "Cycle commute")
    stored = fakes.repo.stored(USER, saved.id)
    assert stored is not None and stored.status is Status.FILED
    # The words the classifier was asked, asked for beside it.
    text = "cycling to work along the canal"
    assert fakes.embedder.texts == [text] == fakes.classifier.texts
    assert stored.embedding is not None and len(stored.embedding) == fakes.embedder.dimensions
    assert stored.embedded_from == embedding_key(fakes.embedder.model, text)
    assert is_current(stored, fakes.embedder)
    # Never sent: neither the item's JSON nor a filed item carries it.
    assert "embedding" not in stored.to_json() and "embeddedFrom" not in stored.to_json()
    assert stored.filed_bucket is not None
    in_bucket = await fakes.filed.get(USER, stored.filed_bucket, stored.id)
    assert in_bucket is not None and "embedding" not in in_bucket.to_json()


async def test_a_model_that_is_down_files_the_capture_without_a_vector(fakes: Fakes) -> None:
    fakes.embedder.fail_next("embed", EmbedderUnavailable("down"))
    saved = await filed(fakes, "cycling to work", "Cycle commute")
    stored = fakes.repo.stored(USER, saved.id)
    assert stored is not None and stored.status is Status.FILED
    assert stored.embedding is None and not is_current(stored, fakes.embedder)


async def test_a_vector_of_another_dimension_is_embedded_again(fakes: Fakes) -> None:
    # EMBEDDING_DIMENSIONS changed (1536 -> 512): the same words, the same model, but the
    # stored vector no longer fits the index; the backfill (and the next filing) renews it.
    saved = await filed(fakes, "cycling to work along the canal", "Cycle commute")
    stored = fakes.repo.stored(USER, saved.id)
    assert (
        stored is not None and stored.embedding is not None and is_current(stored, fakes.embedder)
    )
    longer = stored.embedded(stored.embedding * 3, stored.embedded_from)
    assert not is_current(longer, fakes.embedder)
    renewed = await with_embedding(longer, fakes.embedder)
    assert renewed.embedding is not None and len(renewed.embedding) == fakes.embedder.dimensions
    assert is_current(renewed, fakes.embedder)


async def test_an_answer_renews_the_vector(fakes: Fakes) -> None:
    first = await filed(fakes, "the thing", "The thing")
    answered = first.model_copy(
        update={"clarifications": [Clarification(run_id="r2", text="the bike lock for work")]}
    )
    assert not is_current(answered, fakes.embedder)
    renewed = await with_embedding(answered, fakes.embedder)
    assert renewed.embedded_from == embedding_key(
        fakes.embedder.model, "the bike lock for work\nthe thing"
    )  # the answer first, as the classifier reads it
    # Current already: no model call.
    calls = len(fakes.embedder.texts)
    assert await with_embedding(renewed, fakes.embedder) is renewed
    assert len(fakes.embedder.texts) == calls


async def test_an_answer_files_with_its_words_embedded(fakes: Fakes) -> None:
    fakes.classifier.then(guess(None, 0.1, "?", "What about it?"))
    item = fakes.repo.seed(text_item("the thing"))
    asked = await classify_and_file(
        item, fakes.repo, fakes.classifier, fakes.outbox, embedder=fakes.embedder
    )
    assert asked.status is Status.NEEDS_CLARIFICATION and is_current(asked, fakes.embedder)
    reopened = fakes.repo.seed(asked.reopened(Clarification(run_id="r2", text="bike lock")))
    fakes.classifier.then(guess(Bucket.ADMIN, 0.9, "Bike lock"))
    filed_now = await classify_and_file(
        reopened, fakes.repo, fakes.classifier, fakes.outbox, embedder=fakes.embedder
    )
    assert filed_now.status is Status.FILED
    assert filed_now.embedded_from == embedding_key(fakes.embedder.model, "bike lock\nthe thing")


async def test_an_edit_keeps_the_vector_of_the_words(fakes: Fakes) -> None:
    saved = await filed(fakes, "cycling to work", "Cycle commute")
    bucket = saved.filed_bucket
    assert bucket is not None
    stored = await fakes.filed.get(USER, bucket, saved.id)
    assert stored is not None
    calls = len(fakes.embedder.texts)
    patch = FiledPatch.model_validate({"title": "Canal ride plan"})
    await edit_filed(USER, saved.id, patch, stored.etag, fakes.adapters)
    after = fakes.repo.stored(USER, saved.id)
    assert after is not None and after.title == "Canal ride plan"
    # The words did not change: the vector is current as it was, and no model was asked.
    assert after.embedding == saved.embedding and is_current(after, fakes.embedder)
    assert len(fakes.embedder.texts) == calls
    # The new title is found by its words.
    found = await search(USER, SearchQuery(q="canal ride"), fakes.search, fakes.embedder)
    assert [h.id for h in found.items] == [saved.id]


async def test_embed_all_embeds_only_what_is_behind(fakes: Fakes) -> None:
    current = await filed(fakes, "cycling to work", "Cycle commute")
    old = text_item("bike lock", title="Bike lock")
    empty = text_item("   ").embedded([1.0], "x")
    done = await embed_all([current, old, empty], fakes.embedder)
    assert [i.id for i in done] == [old.id, empty.id]
    assert is_current(done[0], fakes.embedder) and done[1].embedding is None
    fakes.embedder.fail_next("embed", EmbedderUnavailable("down"))
    with pytest.raises(EmbedderUnavailable):
        await embed_all([old], fakes.embedder)


async def test_search_ranks_by_words_and_meaning(fakes: Fakes) -> None:
    words = await filed(fakes, "bike shed paint", "Shed", 1)
    both = await filed(fakes, "bike to work", "Work", 2)
    await filed(fakes, "a playlist", "Music", 3)
    results = await search(USER, SearchQuery(q="bike work"), fakes.search, fakes.embedder)
    assert results.ranking == "hybrid"
    assert [h.id for h in results.items] == [both.id, words.id]  # not the playlist
    assert fakes.embedder.texts[-1] == "bike work"
    assert "embedding" not in str(results.to_json())


async def test_search_answers_by_words_when_the_model_is_down(fakes: Fakes) -> None:
    hit = await filed(fakes, "bike to work", "Work", 1)
    fakes.embedder.fail_next("embed", EmbedderUnavailable("down"))
    results = await search(USER, SearchQuery(q="bike"), fakes.search, fakes.embedder)
    assert results.ranking == "words" and [h.id for h in results.items] == [hit.id]
    # And with no embedder at all (the ask door's old call shape): words.
    assert (await search(USER, SearchQuery(q="bike"), fakes.search)).ranking == "words"


async def test_related_gives_the_callers_nearest_filed_items(fakes: Fakes) -> None:
    anchor = await filed(fakes, "bike to work on mondays", "Commute", 1)
    near = await filed(fakes, "bike to work in the rain", "Rain ride", 2)
    far = await filed(fakes, "tulip bulbs", "Garden", 3)
    theirs = await filed(fakes, "bike to work on mondays", "Commute", 4, user="someone-else")
    found = await related(USER, anchor.id, RelatedQuery(limit=5), fakes.adapters)
    assert found.id == anchor.id
    # Nearest first, and only what is near: the tulips share no word (cosine 0 < 0.3).
    assert [h.id for h in found.items] == [near.id]
    assert 0.3 <= found.items[0].score < 1
    assert far.id not in [h.id for h in found.items]
    assert theirs.id not in [h.id for h in found.items]
    with pytest.raises(NotFound):
        await related(USER, theirs.id, RelatedQuery(), fakes.adapters)
    with pytest.raises(NotFound):
        await related("someone-else", anchor.id, RelatedQuery(), fakes.adapters)


async def test_related_embeds_an_old_capture_for_the_question(fakes: Fakes) -> None:
    near = await filed(fakes, "bike to work in the rain", "Rain ride", 1)
    old = fakes.repo.seed(text_item("bike to work", title="Commute"))
    found = await related(USER, old.id, RelatedQuery(), fakes.adapters)
    assert [h.id for h in found.items] == [near.id]
    stored = fakes.repo.stored(USER, old.id)
    assert stored is not None and stored.embedding is None  # asked, not stored
    fakes.embedder.fail_next("embed", EmbedderUnavailable("down"))
    assert (await related(USER, old.id, RelatedQuery(), fakes.adapters)).items == []
