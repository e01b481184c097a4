"""Searching the caller's captures in the Inbox container. By words, two ways: Cosmos DB's
full-text engine (FullTextContainsAny, ranked by ORDER BY RANK over BM25) where the account has
the index (COSMOS_FULL_TEXT, set by infra/), else CONTAINS over lowercased fields, which the
local server also runs, newest matches first (the service scores them). By words and meaning
(`hybrid`, `nearest`), two engines behind the one port (SEARCH_ENGINE): Cosmos DB's own, one
`ORDER BY RANK RRF(VectorDistance, FullTextScore)` query (`CosmosCaptureSearch`), and a
stand-in for the local server, which runs neither function (`LocalHybridSearch`: numpy over
the user's vectors, kept in the process and brought up to date by `_ts` on every call, and the
CONTAINS match, fused by domain/retrieval.rrf)."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from shared.adapters.cosmos_documents import CosmosStore, Parameters
from shared.domain.capture import InboxItem, Status
from shared.domain.ports import Found
from shared.domain.retrieval import rrf
from shared.settings import INBOX, STORAGE_TIMEOUT_S

if TYPE_CHECKING:
    import numpy as np
    from azure.cosmos.aio import DatabaseProxy

log = logging.getLogger(__name__)

# Without a ranking engine, the newest this many matches are returned for the caller to score.
LOCAL_CANDIDATES = 100
# What a filed capture's status is: `nearest` gives only these.
FILED_STATUSES = (Status.FILED.value, Status.NEEDS_REVIEW.value)
# Every stored field of an inbox item but its vector: a search answer never carries vectors
# (a 1536-dimension one is some 20 KB a hit).
PROJECTION = (
    ", ".join(
        f"c.{info.alias or name}"
        for name, info in InboxItem.model_fields.items()
        if name not in ("embedding", "etag")
    )
    + ", c._etag"
)


def _term_parameters(terms: list[str]) -> tuple[list[str], Parameters]:
    names = [f"@t{i}" for i in range(len(terms))]
    return names, [{"name": n, "value": t} for n, t in zip(names, terms, strict=True)]


def _base(user_id: str) -> Parameters:
    return [
        {"name": "@user", "value": user_id},
        {"name": "@deleting", "value": Status.DELETING.value},
    ]


def full_text_query(user_id: str, terms: list[str], limit: int) -> tuple[str, Parameters]:
    """Cosmos DB's own engine: text and title are in the container's full-text index; the
    clarification answers, in an array, are matched with CONTAINS (case-insensitive) and do not
    count towards the rank."""
    names, parameters = _term_parameters(terms)
    listed = ", ".join(names)
    answers = " OR ".join(f"CONTAINS(a.text, {n}, true)" for n in names)
    query = (
        f"SELECT TOP {int(limit)} * FROM c WHERE c.userId = @user AND c.status != @deleting AND ("
        f"FullTextContainsAny(c.text, {listed}) OR FullTextContainsAny(c.title, {listed}) OR "
        f"EXISTS(SELECT VALUE a FROM a IN c.clarifications WHERE {answers})) "
        f"ORDER BY RANK RRF(FullTextScore(c.text, {listed}), FullTextScore(c.title, {listed}))"
    )
    return query, [*_base(user_id), *parameters]


def contains_query(user_id: str, terms: list[str], limit: int) -> tuple[str, Parameters]:
    """What the local server runs: a lowercased CONTAINS per term and field, newest first."""
    names, parameters = _term_parameters(terms)
    fields = " OR ".join(
        f"CONTAINS(LOWER(c.text), {n}) OR CONTAINS(LOWER(c.title), {n})" for n in names
    )
    # One pass over the answers for all the terms: the server has no index, and runs a
    # subquery per document for each EXISTS it is given.
    answers = " OR ".join(f"CONTAINS(LOWER(a.text), {n})" for n in names)
    matches = f"{fields} OR EXISTS(SELECT VALUE a FROM a IN c.clarifications WHERE {answers})"
    query = (
        f"SELECT TOP {int(limit)} {PROJECTION} FROM c WHERE c.userId = @user "
        f"AND c.status != @deleting AND ({matches}) ORDER BY c.createdAt DESC"
    )
    return query, [*_base(user_id), *parameters]


def hybrid_query(
    user_id: str, terms: list[str], vector: list[float], limit: int
) -> tuple[str, Parameters]:
    """Cosmos DB's own hybrid search, in the user's partition: the vector ranking (cosine, the
    Inbox's vector policy) and BM25 over the text fused by RRF in the engine. No full-text
    filter: a capture that shares no word with the query (a paraphrase) still comes by its
    meaning."""
    names, parameters = _term_parameters(terms)
    listed = ", ".join(names)
    query = (
        f"SELECT TOP {int(limit)} {PROJECTION}, "
        "VectorDistance(c.embedding, @vector) AS similarity FROM c "
        "WHERE c.userId = @user AND c.status != @deleting "
        f"ORDER BY RANK RRF(VectorDistance(c.embedding, @vector), FullTextScore(c.text, {listed}))"
    )
    return query, [*_base(user_id), *parameters, {"name": "@vector", "value": vector}]


def nearest_query(
    user_id: str, vector: list[float], limit: int, excluding: str
) -> tuple[str, Parameters]:
    """The filed captures nearest `vector`, in the user's partition (ORDER BY VectorDistance
    puts the most similar first, whatever the distance function: no ASC or DESC)."""
    query = (
        f"SELECT TOP {int(limit)} {PROJECTION} FROM c "
        "WHERE c.userId = @user AND c.id != @excluding AND IS_ARRAY(c.embedding) "
        "AND ARRAY_CONTAINS(@filed, c.status) "
        "ORDER BY VectorDistance(c.embedding, @vector)"
    )
    parameters: Parameters = [
        {"name": "@user", "value": user_id},
        {"name": "@excluding", "value": excluding},
        {"name": "@filed", "value": list(FILED_STATUSES)},
        {"name": "@vector", "value": vector},
    ]
    return query, parameters


def _items(docs: list[dict]) -> list[InboxItem]:
    items = []
    for doc in docs:
        try:
            items.append(InboxItem.model_validate(doc))
        except ValidationError:
            log.warning("inbox item %r cannot be read; left out", doc.get("id"))
    return items


class CosmosCaptureSearch(CosmosStore):
    def __init__(
        self, database: DatabaseProxy, *, full_text: bool, timeout_s: float = STORAGE_TIMEOUT_S
    ) -> None:
        super().__init__(database, timeout_s=timeout_s)
        self._full_text = full_text

    async def search(self, user_id: str, terms: list[str], limit: int) -> Found:
        if self._full_text:
            query, parameters = full_text_query(user_id, terms, limit)
        else:
            query, parameters = contains_query(user_id, terms, max(limit, LOCAL_CANDIDATES))
        items = _items(await self._query(INBOX, user_id, query, parameters))
        return Found(items=items, ranked=self._full_text)

    async def hybrid(
        self, user_id: str, terms: list[str], q: str, vector: list[float], limit: int
    ) -> Found:
        query, parameters = hybrid_query(user_id, terms, vector, limit)
        return Found(
            items=_items(await self._query(INBOX, user_id, query, parameters)), ranked=True
        )

    async def nearest(
        self, user_id: str, vector: list[float], limit: int, *, excluding: str
    ) -> list[InboxItem]:
        query, parameters = nearest_query(user_id, vector, limit, excluding)
        return _items(await self._query(INBOX, user_id, query, parameters))


# -- the local stand-in ----------------------------------------------------------------------

# How many users' vectors one process keeps (about 1.5 MB a thousand captures at 384
# dimensions); the least recently searched is dropped first.
LOCAL_USERS = 16


@dataclass
class _UserVectors:
    """One user's vectors as the stand-in holds them, and up to which `_ts` they are known."""

    since: int = 0
    vectors: dict[str, tuple[list[float], bool]] = field(default_factory=dict)  # id: (v, filed)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Built from `vectors` when first needed after a change.
    ids: list[str] = field(default_factory=list)
    matrix: np.ndarray | None = None
    filed: np.ndarray | None = None


class LocalHybridSearch(CosmosCaptureSearch):
    """The stand-in for Cosmos DB's hybrid search, behind the same port, over the local server
    (which runs neither VectorDistance nor FullTextScore). Words: the CONTAINS match (the
    newest LOCAL_CANDIDATES matches) ranked by `rank_words` (services/recall.score, handed in
    by the composition root); meaning: the cosine similarity of the user's vectors, held in
    this process and brought up to date with one `_ts` query a call. The two rankings fused
    by domain/retrieval.rrf (k 60) as the engine fuses them. Where the two differ:
    docs/contract.md."""

    def __init__(
        self,
        database: DatabaseProxy,
        *,
        rank_words: Callable[[list[InboxItem], list[str], str], list[InboxItem]],
        timeout_s: float = STORAGE_TIMEOUT_S,
    ) -> None:
        super().__init__(database, full_text=False, timeout_s=timeout_s)
        self._rank_words = rank_words
        self._users: OrderedDict[str, _UserVectors] = OrderedDict()

    async def hybrid(
        self, user_id: str, terms: list[str], q: str, vector: list[float], limit: int
    ) -> Found:
        query, parameters = contains_query(user_id, terms, max(limit, LOCAL_CANDIDATES))
        words, held = await asyncio.gather(
            self._query(INBOX, user_id, query, parameters), self._vectors(user_id)
        )
        by_words = self._rank_words(_items(words), terms, q)
        nearest = _nearest(held, vector, max(limit, LOCAL_CANDIDATES), filed_only=False)
        by_meaning = [id_ for id_, _ in nearest]
        fused = [id_ for id_, _ in rrf([[i.id for i in by_words], by_meaning])][:limit]
        known = {i.id: i for i in by_words}
        items = await self._fetch(user_id, fused, known)
        return Found(
            items=[i for i in items if not i.is_deleted], ranked=True, similarity=dict(nearest)
        )

    async def nearest(
        self, user_id: str, vector: list[float], limit: int, *, excluding: str
    ) -> list[InboxItem]:
        held = await self._vectors(user_id)
        # A few more than asked: one moved out of its bucket or removed since is left out.
        near = _nearest(held, vector, limit + 8, filed_only=True)
        ids = [i for i, _ in near if i != excluding]
        items = await self._fetch(user_id, ids, {})
        return [i for i in items if i.status.value in FILED_STATUSES][:limit]

    async def _fetch(
        self, user_id: str, ids: list[str], known: dict[str, InboxItem]
    ) -> list[InboxItem]:
        """The items of `ids` in that order: from `known`, else one point read each (at once);
        one gone since is left out."""
        missing = [i for i in ids if i not in known]
        docs = await asyncio.gather(*(self._read(INBOX, user_id, i) for i in missing))
        for doc in _items([d for d in docs if d is not None]):
            known[doc.id] = doc
        return [known[i] for i in ids if i in known]

    async def _vectors(self, user_id: str) -> _UserVectors:
        held = self._users.get(user_id)
        if held is None:
            held = self._users[user_id] = _UserVectors()
            while len(self._users) > LOCAL_USERS:
                self._users.popitem(last=False)
        self._users.move_to_end(user_id)
        async with held.lock:
            query = (
                "SELECT c.id, c.embedding, c.status, c._ts FROM c "
                "WHERE c.userId = @user AND c._ts >= @since"
            )
            parameters: Parameters = [
                {"name": "@user", "value": user_id},
                {"name": "@since", "value": held.since},
            ]
            changed = await self._query(INBOX, user_id, query, parameters)
            for doc in changed:
                vector = doc.get("embedding")
                if doc.get("status") == Status.DELETING.value or not isinstance(vector, list):
                    if held.vectors.pop(doc["id"], None) is not None:
                        held.matrix = None
                    continue
                entry = (vector, doc.get("status") in FILED_STATUSES)
                if held.vectors.get(doc["id"]) != entry:
                    held.vectors[doc["id"]] = entry
                    held.matrix = None
                # Seconds: the last second is read again next time, for what came within it.
                held.since = max(held.since, int(doc.get("_ts", 0)))
            if held.matrix is None:
                _build(held)
        return held


def _build(held: _UserVectors) -> None:
    import numpy as np

    held.ids = list(held.vectors)
    dims = {len(v) for v, _ in held.vectors.values()}
    if len(dims) > 1:  # vectors of two models (a change of embedder): only the newest kind
        newest = len(next(reversed(held.vectors.values()))[0])
        held.ids = [i for i in held.ids if len(held.vectors[i][0]) == newest]
    held.matrix = (
        np.array([held.vectors[i][0] for i in held.ids], dtype=np.float32)
        if held.ids
        else np.zeros((0, 0), dtype=np.float32)
    )
    held.filed = np.array([held.vectors[i][1] for i in held.ids], dtype=bool)


def _nearest(
    held: _UserVectors, vector: list[float], limit: int, *, filed_only: bool
) -> list[tuple[str, float]]:
    """The ids of the `limit` vectors nearest `vector` and their cosine similarity (the stored
    vectors are unit length), nearest first."""
    import numpy as np

    matrix, filed = held.matrix, held.filed
    if matrix is None or filed is None or not held.ids or matrix.shape[1] != len(vector):
        return []
    similarity = matrix @ np.asarray(vector, dtype=np.float32)
    if filed_only:
        similarity = np.where(filed, similarity, -np.inf)
    count = min(limit, len(held.ids))
    top = np.argpartition(-similarity, count - 1)[:count]
    top = top[np.argsort(-similarity[top], kind="stable")]
    return [(held.ids[i], float(similarity[i])) for i in top if np.isfinite(similarity[i])]
