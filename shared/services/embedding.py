"""A capture's vector kept current: embedded when it is filed (beside the classifier, whose
vector of the same words the offline embedder reuses), again when its words or title change,
and by the backfill for what was stored before (or while the model was down)."""

from __future__ import annotations

import logging

from shared.domain.capture import InboxItem
from shared.domain.errors import EmbedderUnavailable
from shared.domain.ports import Embedder
from shared.domain.retrieval import embedding_key

log = logging.getLogger(__name__)


def is_current(item: InboxItem, embedder: Embedder) -> bool:
    """Whether `item`'s stored vector is of its words and title now, by this model (a capture
    with no words needs none)."""
    text = item.embedding_text()
    if not text:
        return item.embedding is None
    return item.embedding is not None and item.embedded_from == embedding_key(embedder.model, text)


async def with_embedding(item: InboxItem, embedder: Embedder | None) -> InboxItem:
    """`item` with the vector of its words and title now (unchanged when it has it already).
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
