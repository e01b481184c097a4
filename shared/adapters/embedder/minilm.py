"""Offline embeddings: all-MiniLM-L6-v2 (384 dimensions), the same loaded model the offline
classifier uses (one per process: classifier/minilm.get_encoder), reusing the vector the
classifier just made of the same words."""

from __future__ import annotations

import asyncio

from shared.adapters.classifier.minilm import get_encoder

# Six decimals: cosine similarity moves by under 1e-5, and a stored vector is about 4 KB.
DECIMALS = 6


class MiniLMEmbedder:
    model = "all-minilm-l6-v2"
    dimensions = 384
    # Measured on our captures: paraphrases 0.45-0.75 ("bike commute" / "cycling to work"
    # 0.45), unrelated ones under 0.27.
    min_similarity = 0.3

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        vectors = get_encoder().encode_remembered(texts)
        return [[round(float(x), DECIMALS) for x in row] for row in vectors]
