"""The plain-JSON door's ask threads in Cosmos DB (container `AskThreads`, partition /userId):
one small document a thread, read by id and written under its ETag; Cosmos DB forgets it by
its `ttl` (the local Cosmos server keeps it: a thread is a convenience, never a record)."""

from __future__ import annotations

from shared.adapters.cosmos_documents import CosmosStore
from shared.domain.chat import AskThread
from shared.settings import ASK_THREADS


class CosmosAskThreads(CosmosStore):
    async def get(self, user_id: str, thread_id: str) -> AskThread | None:
        doc = await self._read(ASK_THREADS, user_id, thread_id)
        return AskThread.model_validate(doc) if doc else None

    async def save(self, thread: AskThread) -> AskThread:
        saved = await self._write_guarded(ASK_THREADS, thread.to_json(), thread.etag)
        return AskThread.model_validate(saved)
