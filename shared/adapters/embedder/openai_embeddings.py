"""Embeddings from Azure OpenAI (or any OpenAI-compatible server): one `embeddings.create` call
a batch, at the dimension asked for (`dimensions`: text-embedding-3-small's are 1536 long,
the app asks for 512, EMBEDDING_DIMENSIONS). Failed calls raise `EmbedderUnavailable`."""

from __future__ import annotations

import logging
import math

import openai

from shared.adapters.embedder.words import WordVectors
from shared.adapters.model_failures import unavailable_as
from shared.domain.errors import EmbedderUnavailable

log = logging.getLogger(__name__)

# Six decimals, as the offline embedder: a stored vector stays small, similarity unchanged.
DECIMALS = 6
_PER_UNIT = 10**DECIMALS
# Azure OpenAI takes up to 2048 inputs a request; a backfill page is far smaller.
MAX_BATCH = 256


class OpenAIEmbedder:
    def __init__(
        self,
        client: openai.AsyncOpenAI,
        deployment: str,
        dimensions: int,
        min_similarity: float = 0.3,
    ) -> None:
        self._client = client
        self.model = deployment
        self.dimensions = dimensions
        self.min_similarity = min_similarity
        self.words = WordVectors(self.embed)

    # The offline answer's soft word match is measured on MiniLM's single words only: on Azure
    # it runs only as the model's fallback, and this model's words are not compared.
    word_line: float | None = None

    async def word_similarities(self, terms: list[str], words: list[str]) -> list[list[float]]:
        return await self.words.similarities(terms, words)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), MAX_BATCH):
            vectors.extend(await self._batch(texts[start : start + MAX_BATCH]))
        return vectors

    async def _batch(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        try:
            with unavailable_as(EmbedderUnavailable, "embedder"):
                answer = await self._client.embeddings.create(
                    model=self.model, input=texts, dimensions=self.dimensions
                )
        except (AttributeError, ValueError, TypeError) as err:  # not an embeddings list
            raise EmbedderUnavailable("response was not an embeddings list") from err
        try:
            ordered = sorted(answer.data, key=lambda d: d.index)
            vectors = [_unit(d.embedding) for d in ordered]
        except (AttributeError, TypeError, ValueError) as err:
            raise EmbedderUnavailable("response was not an embeddings list") from err
        if len(vectors) != len(texts) or any(len(v) != self.dimensions for v in vectors):
            log.warning("embedder: %d vectors for %d texts, or not of dimension %d",
                        len(vectors), len(texts), self.dimensions)  # fmt: skip
            raise EmbedderUnavailable("response did not match the request")
        return vectors


def _unit(vector: list[float]) -> list[float]:
    """Unit length (OpenAI's are already; a compatible server's may not be), six decimals.
    On every capture's path: the norm in C (`hypot`), each float rounded as an integer of
    millionths (a third of `round(x, 6)`'s time; the same values)."""
    norm = math.hypot(*vector)
    if not norm or not math.isfinite(norm):
        raise ValueError("a zero or non-finite vector")
    scale = _PER_UNIT / norm
    return [round(x * scale) / _PER_UNIT for x in vector]
