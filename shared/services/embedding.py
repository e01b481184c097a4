"""A capture's vector kept current: embedded when it is filed (beside the classifier, on the
same words, inside the model's wait), again when its words change (a follow-up answer), and by
the backfill for what was stored before (or while the model was down)."""

from __future__ import annotations

import logging

from shared.domain.capture import InboxItem
from shared.domain.errors import EmbedderUnavailable
from shared.domain.ports import Embedder
from shared.domain.retrieval import embedding_key

log = logging.getLogger(__name__)

# A vector and its key (domain/retrieval.embedding_key).
Embedded = tuple[list[float], str]


def is_current(item: InboxItem, embedder: Embedder) -> bool:
    """Whether `item`'s stored vector is of its words now, by this model at its dimension (a
    capture with no words needs none; one of another length, EMBEDDING_DIMENSIONS changed, is
    embedded again)."""
    text = item.embedding_text()
    if not text:
        return item.embedding is None
    if item.embedding is None or len(item.embedding) != embedder.dimensions:
        return False
    return item.embedded_from == embedding_key(embedder.model, text)


async def vector_for(item: InboxItem, embedder: Embedder | None) -> Embedded | None:
    """The vector `item` should carry and its key, when it does not carry it already; None when
    it does, has no words, or the model cannot answer now (then the backfill embeds it)."""
    if embedder is None or is_current(item, embedder):
        return None
    text = item.embedding_text()
    if not text:
        return None
    try:
        [vector] = await embedder.embed([text])
    except EmbedderUnavailable:
        log.warning("capture %s: kept without a current embedding (model unavailable)", item.id)
        return None
    return vector, embedding_key(embedder.model, text)


def carrying(item: InboxItem, embedded: Embedded | None, embedder: Embedder | None) -> InboxItem:
    """`item` with the vector `vector_for` made, if it is of `item`'s words (no change for
    None, or for words that changed meanwhile: the vector saved is of what is saved)."""
    if embedded is None or embedder is None:
        return item
    if embedded[1] != embedding_key(embedder.model, item.embedding_text()):
        return item
    return item.embedded(*embedded)


async def with_embedding(item: InboxItem, embedder: Embedder | None) -> InboxItem:
    """`item` with the vector of its words now (unchanged when it has it already).
    The model down: `item` as it was, its old vector kept (still near in meaning; the key says
    it is behind) for the backfill to renew; never a failed capture."""
    if embedder is None or is_current(item, embedder):
        return item
    text = item.embedding_text()
    if not text:
        return item.embedded(None, None)
    try:
        [vector] = await embedder.embed([text])
    except EmbedderUnavailable:
        log.warning("capture %s: kept without a current embedding (model unavailable)", item.id)
        return item
    return item.embedded(vector, embedding_key(embedder.model, text))


async def embed_all(items: list[InboxItem], embedder: Embedder) -> list[InboxItem]:
    """The items not current, each with its vector, in one call to the model (the backfill's
    page). EmbedderUnavailable propagates: the queue retries the page."""
    stale = [i for i in items if not is_current(i, embedder)]
    texts = [i.embedding_text() for i in stale]
    wanted = [(i, t) for i, t in zip(stale, texts, strict=True) if t]
    vectors = await embedder.embed([t for _, t in wanted]) if wanted else []
    done = [
        i.embedded(v, embedding_key(embedder.model, t))
        for (i, t), v in zip(wanted, vectors, strict=True)
    ]
    return done + [i.embedded(None, None) for i, t in zip(stale, texts, strict=True) if not t]
