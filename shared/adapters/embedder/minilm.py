"""Offline embeddings: all-MiniLM-L6-v2 (384 dimensions), one loaded model per process
(encoders/minilm.get_encoder); when the offline classifier runs on MiniLM too
(OFFLINE_CLASSIFIER_ENCODER=minilm) it reuses the vector the classifier just made of the same
words."""

from __future__ import annotations

import asyncio

import numpy as np

from shared.adapters.embedder.words import WordVectors
from shared.adapters.encoders.minilm import get_encoder, loaded_encoder

# Six decimals: cosine similarity moves by under 1e-5, and a stored vector is about 4 KB.
DECIMALS = 6


class MiniLMEmbedder:
    model = "all-minilm-l6-v2"
    dimensions = 384
    # Measured on our captures: paraphrases 0.45-0.75 ("bike commute" / "cycling to work"
    # 0.45), unrelated ones under 0.27.
    min_similarity = 0.3
    # Single words (measured on the ask tuning sets, bench/tools/ask_soft_words.py): the same
    # thing 0.45-0.92 (bike/cycling 0.74, wiring/electrics 0.47), unrelated mostly under 0.45.
    word_line: float | None = 0.45

    def __init__(self) -> None:
        self.words = WordVectors(self.embed)

    def warm_up(self) -> None:
        """Load the model and embed one text, so a capture's first vector runs at full speed
        (the classifier loads it too only when it runs on MiniLM)."""
        self.embed_sync(["Call Sarah about the budget review"])

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        # The classifier's vector of the same words, on a capture's path: no thread, no pass.
        # (Loading the model, where it is not loaded yet, is for the thread below.)
        encoder = loaded_encoder()
        known = encoder.remembered(texts) if encoder is not None else None
        if known is not None:
            return _rounded(known)
        return await asyncio.to_thread(self.embed_sync, texts)

    async def word_similarities(self, terms: list[str], words: list[str]) -> list[list[float]]:
        return await self.words.similarities(terms, words)

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        return _rounded(get_encoder().encode_remembered(texts))


def _rounded(vectors: np.ndarray) -> list[list[float]]:
    return [[round(x, DECIMALS) for x in row] for row in vectors.tolist()]
