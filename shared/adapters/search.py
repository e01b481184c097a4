"""Searching the caller's captures in the Inbox container, two ways: Cosmos DB's full-text engine
(FullTextContainsAny, ranked by ORDER BY RANK over BM25) where the account has the index
(COSMOS_FULL_TEXT, set by infra/), else CONTAINS over lowercased fields, which the local server
also runs, newest matches first (the service scores them)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pydantic import ValidationError

from shared.adapters.cosmos_documents import CosmosStore, Parameters
from shared.domain.capture import InboxItem, Status
from shared.domain.ports import Found
from shared.settings import INBOX, STORAGE_TIMEOUT_S

if TYPE_CHECKING:
    from azure.cosmos.aio import DatabaseProxy

log = logging.getLogger(__name__)

# Without a ranking engine, the newest this many matches are returned for the caller to score.
LOCAL_CANDIDATES = 100


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
        f"SELECT TOP {int(limit)} * FROM c WHERE c.userId = @user AND c.status != @deleting "
        f"AND ({matches}) ORDER BY c.createdAt DESC"
    )
    return query, [*_base(user_id), *parameters]


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
        items = []
        for doc in await self._query(INBOX, user_id, query, parameters):
            try:
                items.append(InboxItem.model_validate(doc))
            except ValidationError:
                log.warning("inbox item %r cannot be read; left out", doc.get("id"))
        return Found(items=items, ranked=self._full_text)
