"""Searching the caller's captures in the Inbox container. By words, two ways: Cosmos DB's
full-text engine (FullTextContainsAny, ranked by ORDER BY RANK over BM25) where the account has
the index (COSMOS_FULL_TEXT, set by infra/), else CONTAINS over lowercased fields, which the
local server also runs, newest matches first (the service scores them). By words and meaning
(`hybrid`, `nearest`), two engines behind the one port (SEARCH_ENGINE): Cosmos DB's own, one
`ORDER BY RANK RRF(VectorDistance, FullTextScore)` query (`CosmosCaptureSearch`), and a
stand-in for the local server, which runs neither function (`LocalHybridSearch`: the user's
captures held in the process with their vectors, brought up to date on every call by `_ts` and
a count, the CONTAINS rule and numpy's cosine run over them, fused by domain/retrieval.rrf)."""

from __future__ import annotations

import asyncio
import logging
from bisect import bisect_right
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
    Inbox's vector policy) and BM25 over the text and over the title (the vector is of the
    words alone) fused by RRF in the engine. No full-text filter: a capture that shares no
    word with the query (a paraphrase) still comes by its meaning."""
    names, parameters = _term_parameters(terms)
    listed = ", ".join(names)
    query = (
        f"SELECT TOP {int(limit)} {PROJECTION}, "
        "VectorDistance(c.embedding, @vector) AS similarity FROM c "
        "WHERE c.userId = @user AND c.status != @deleting "
        "ORDER BY RANK RRF(VectorDistance(c.embedding, @vector), "
        f"FullTextScore(c.text, {listed}), FullTextScore(c.title, {listed}))"
    )
    return query, [*_base(user_id), *parameters, {"name": "@vector", "value": vector}]


def nearest_query(
    user_id: str, vector: list[float], limit: int, excluding: str
) -> tuple[str, Parameters]:
    """The filed captures nearest `vector`, in the user's partition (ORDER BY VectorDistance
    puts the most similar first, whatever the distance function: no ASC or DESC)."""
    query = (
        f"SELECT TOP {int(limit)} {PROJECTION}, "
        "VectorDistance(c.embedding, @vector) AS similarity FROM c "
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


def _scored(docs: list[dict]) -> Found:
    """Documents projected with their `similarity` (VectorDistance), in the engine's order."""
    similarity = {
        str(d.get("id")): float(d["similarity"])
        for d in docs
        if isinstance(d.get("similarity"), int | float)
    }
    return Found(items=_items(docs), ranked=True, similarity=similarity)


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
        return _scored(await self._query(INBOX, user_id, query, parameters))

    async def nearest(
        self, user_id: str, vector: list[float], limit: int, *, excluding: str
    ) -> Found:
        query, parameters = nearest_query(user_id, vector, limit, excluding)
        return _scored(await self._query(INBOX, user_id, query, parameters))


# -- the local stand-in ----------------------------------------------------------------------

# How many users' captures one process holds: at most LOCAL_USERS, and beyond LOCAL_CAPTURES
# in all the least recently searched are let go (the one searching is kept). A capture held is
# some 8 KB (its item 3.6 KB, its 384-dimension vector 1.5 KB, its words lowercased): 10,000
# about 75 MB (`python -m bench.search_profile`).
LOCAL_USERS = 16
LOCAL_CAPTURES = 30_000
# Between the fields of the held words: no query term holds it (one that does is matched field
# by field), so a term found in the joined words lies within one field.
SEPARATOR = "\x00"


def _written_query(user_id: str, since: int) -> tuple[str, Parameters]:
    """Which captures were written since `since` (`_ts`, seconds), by id and ETag: `>=`, the
    last second is looked at again, for what came within it after the last look."""
    query = "SELECT c.id, c._etag, c._ts FROM c WHERE c.userId = @user AND c._ts >= @since"
    return query, [{"name": "@user", "value": user_id}, {"name": "@since", "value": since}]


def _docs_query(user_id: str, *, since: int, ids: list[str] | None) -> tuple[str, Parameters]:
    """The captures of `ids` (else every one written since `since`), whole: the held copy is
    what search answers with."""
    chosen = "ARRAY_CONTAINS(@ids, c.id)" if ids is not None else "c._ts >= @since"
    query = f"SELECT {PROJECTION}, c.embedding, c._ts FROM c WHERE c.userId = @user AND {chosen}"
    parameters: Parameters = [{"name": "@user", "value": user_id}]
    if ids is not None:
        return query, [*parameters, {"name": "@ids", "value": ids}]
    return query, [*parameters, {"name": "@since", "value": since}]


def _count_query(user_id: str) -> tuple[str, Parameters]:
    """How many documents the user has, tombstones too: a removed one writes nothing for `_ts`
    to find, so the count of those taken is checked against it. (No status filter: the local
    server's `!=` costs more than the count itself.)"""
    query = "SELECT VALUE COUNT(1) FROM c WHERE c.userId = @user"
    return query, [{"name": "@user", "value": user_id}]


def _ids_query(user_id: str) -> tuple[str, Parameters]:
    query = "SELECT VALUE c.id FROM c WHERE c.userId = @user"
    return query, [{"name": "@user", "value": user_id}]


def _words_of(item: InboxItem) -> list[str]:
    """The fields the words are matched in, lowercased as the local server's LOWER does."""
    fields = [item.text, item.title, *(c.text for c in item.clarifications)]
    return [f.lower() for f in fields if f is not None]


@dataclass
class _Built:
    """What a search reads, built from `_Held` when first needed after a change."""

    newest: list[InboxItem]  # every held capture, newest first (ORDER BY c.createdAt DESC)
    words: str  # their words (`_words_of`), in that order, each field ended by SEPARATOR
    starts: list[int]  # where each one's words start in `words`, and `len(words)` last
    ids: list[str]  # the rows of `matrix`
    matrix: np.ndarray  # their vectors (unit length), float32
    filed: np.ndarray  # whether each row's capture is filed (FILED_STATUSES)


@dataclass
class _Held:
    """One user's captures as the stand-in holds them: every one not tombstoned, as stored but
    for its vector (held apart, float32), and up to which `_ts` they are known."""

    since: int = 0
    items: dict[str, InboxItem] = field(default_factory=dict)
    words: dict[str, str] = field(default_factory=dict)  # id: its fields joined, SEPARATOR-ended
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    # Every document taken (held, unreadable, tombstoned): its ETag.
    etags: dict[str, str | None] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    built: _Built | None = None

    def take(self, doc: dict) -> None:
        """One document written since the last look: held, replaced, or let go (tombstoned)."""
        import numpy as np

        id_ = str(doc.get("id"))
        self.since = max(self.since, int(doc.get("_ts", 0)))
        if id_ in self.etags and self.etags[id_] == doc.get("_etag"):
            return  # read again (all that was written since, after a backfill), unchanged
        vector = doc.pop("embedding", None)
        self.forget(id_)
        self.etags[id_] = doc.get("_etag")
        if doc.get("status") == Status.DELETING.value:
            return
        try:
            item = InboxItem.model_validate(doc)
        except ValidationError:
            log.warning("inbox item %r cannot be read; left out", id_)
            return
        self.items[id_] = item
        self.words[id_] = "".join(f + SEPARATOR for f in _words_of(item))
        if isinstance(vector, list) and vector:
            self.vectors[id_] = np.asarray(vector, dtype=np.float32)

    def forget(self, id_: str) -> None:
        self.items.pop(id_, None)
        self.words.pop(id_, None)
        self.vectors.pop(id_, None)
        self.etags.pop(id_, None)
        self.built = None

    def count(self) -> int:
        """The documents taken: held, unreadable or tombstoned."""
        return len(self.etags)

    def build(self) -> _Built:
        import numpy as np

        if self.built is not None:
            return self.built
        newest = sorted(self.items.values(), key=lambda i: i.created_at, reverse=True)
        starts, at = [], 0
        for item in newest:
            starts.append(at)
            at += len(self.words[item.id])
        starts.append(at)
        ids = list(self.vectors)
        if len({len(v) for v in self.vectors.values()}) > 1:
            # Vectors of two models (a change of embedder): only the newest kind.
            newest_kind = len(next(reversed(self.vectors.values())))
            ids = [i for i in ids if len(self.vectors[i]) == newest_kind]
        matrix = (
            np.stack([self.vectors[i] for i in ids]) if ids else np.zeros((0, 0), dtype=np.float32)
        )
        # The rows are the vectors from now on: one copy of each held.
        self.vectors.update(zip(ids, matrix, strict=True))
        filed = np.array([self.items[i].status.value in FILED_STATUSES for i in ids], dtype=bool)
        self.built = _Built(
            newest=newest,
            words="".join(self.words[i.id] for i in newest),
            starts=starts,
            ids=ids,
            matrix=matrix,
            filed=filed,
        )
        return self.built


class LocalHybridSearch(CosmosCaptureSearch):
    """The stand-in for Cosmos DB's hybrid search, behind the same port, over the local server
    (which runs neither VectorDistance nor FullTextScore). It holds each user's captures in
    this process (the stored fields and the vector), brought up to date on every call by one
    `_ts` query for what was written since and one count for what was removed. Words: the
    substring match over the lowercased text, title and answers, as `contains_query` states it
    (the newest LOCAL_CANDIDATES matches), ranked by `rank_words` (services/recall.score,
    handed in by the composition root); meaning: the cosine similarity of the user's vectors
    (numpy). The two rankings fused by domain/retrieval.rrf (k 60) as the engine fuses them.
    Where the two differ: docs/contract.md."""

    def __init__(
        self,
        database: DatabaseProxy,
        *,
        rank_words: Callable[[list[InboxItem], list[str], str], list[InboxItem]],
        timeout_s: float = STORAGE_TIMEOUT_S,
    ) -> None:
        super().__init__(database, full_text=False, timeout_s=timeout_s)
        self._rank_words = rank_words
        self._users: OrderedDict[str, _Held] = OrderedDict()

    async def hybrid(
        self, user_id: str, terms: list[str], q: str, vector: list[float], limit: int
    ) -> Found:
        held = await self._current(user_id)
        built = held.build()
        candidates = _matching(built, terms, max(limit, LOCAL_CANDIDATES))
        by_words = self._rank_words(candidates, terms, q)
        nearest = _nearest(built, vector, max(limit, LOCAL_CANDIDATES), filed_only=False)
        by_meaning = [id_ for id_, _ in nearest]
        fused = [id_ for id_, _ in rrf([[i.id for i in by_words], by_meaning])][:limit]
        items = [held.items[i] for i in fused if i in held.items]
        return Found(items=items, ranked=True, similarity=dict(nearest))

    async def nearest(
        self, user_id: str, vector: list[float], limit: int, *, excluding: str
    ) -> Found:
        held = await self._current(user_id)
        near = _nearest(held.build(), vector, limit + 1, filed_only=True)
        near = [(i, s) for i, s in near if i != excluding][:limit]
        items = [held.items[i] for i, _ in near if i in held.items]
        return Found(items=items, ranked=True, similarity=dict(near))

    async def _current(self, user_id: str) -> _Held:
        """The user's held captures brought up to date: what was written since the last look
        (`_ts`: ids and ETags, then whatever changed, whole), and, where the count of the
        user's documents is not the count of those taken, what was removed since (the ids
        listed, and those gone let go). Every stored document is taken or was written since,
        so one taken and gone since makes the counts differ; the count and the `_ts` query
        run together, and a removal racing them is seen by the next call."""
        held = self._users.get(user_id)
        if held is None:
            held = self._users[user_id] = _Held()
        self._users.move_to_end(user_id)
        async with held.lock:
            if held.since == 0:  # the first look: every capture
                changed, counted = await asyncio.gather(
                    self._query(INBOX, user_id, *_docs_query(user_id, since=0, ids=None)),
                    self._query(INBOX, user_id, *_count_query(user_id)),
                )
            else:
                written, counted = await asyncio.gather(
                    self._query(INBOX, user_id, *_written_query(user_id, held.since)),
                    self._query(INBOX, user_id, *_count_query(user_id)),
                )
                stale = [str(w["id"]) for w in written if held.etags.get(w["id"]) != w["_etag"]]
                # Many (a backfill, an import): all that was written since, in one read.
                ids = stale if len(stale) <= LOCAL_CANDIDATES else None
                query = _docs_query(user_id, since=held.since, ids=ids)
                changed = await self._query(INBOX, user_id, *query) if stale else []
                held.since = max([held.since, *(int(w.get("_ts", 0)) for w in written)])
            for doc in changed:
                held.take(doc)
            if counted != [held.count()]:
                listed = set(await self._query(INBOX, user_id, *_ids_query(user_id)))
                # One written since the `_ts` query is read by the next one.
                for id_ in list(held.etags):
                    if id_ not in listed:
                        held.forget(id_)
            held.build()
        self._let_go(keeping=user_id)
        return held

    def _let_go(self, keeping: str) -> None:
        """The least recently searched users first, beyond LOCAL_USERS or LOCAL_CAPTURES."""
        while len(self._users) > 1 and (
            len(self._users) > LOCAL_USERS
            or sum(h.count() for h in self._users.values()) > LOCAL_CAPTURES
        ):
            oldest = next(iter(self._users))
            if oldest == keeping:
                break
            del self._users[oldest]


def _matching(built: _Built, terms: list[str], limit: int) -> list[InboxItem]:
    """The newest `limit` held captures whose lowercased text, title or an answer contains any
    of `terms` (contains_query's rule, run in this process)."""
    found: set[int] = set()
    words, starts = built.words, built.starts
    for term in terms:
        if not term or SEPARATOR in term:
            found.update(
                n for n, item in enumerate(built.newest) if any(term in f for f in _words_of(item))
            )
            continue
        at = words.find(term)
        while at >= 0:
            n = bisect_right(starts, at) - 1
            found.add(n)
            at = words.find(term, starts[n + 1])
    return [built.newest[n] for n in sorted(found)[:limit]]


def _nearest(
    built: _Built, vector: list[float], limit: int, *, filed_only: bool
) -> list[tuple[str, float]]:
    """The ids of the `limit` vectors nearest `vector` and their cosine similarity (the stored
    vectors are unit length), nearest first."""
    import numpy as np

    matrix, ids = built.matrix, built.ids
    if not ids or matrix.shape[1] != len(vector):
        return []
    similarity = matrix @ np.asarray(vector, dtype=np.float32)
    if filed_only:
        similarity = np.where(built.filed, similarity, -np.inf)
    count = min(limit, len(ids))
    top = np.argpartition(-similarity, count - 1)[:count]
    top = top[np.argsort(-similarity[top], kind="stable")]
    return [(ids[i], float(similarity[i])) for i in top if np.isfinite(similarity[i])]
