"""Retrieval by meaning: what text of a capture is embedded, how a stored vector is known to be
current, and reciprocal rank fusion (RRF), the one way two rankings are merged."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from shared.domain.classification import excerpt_to_classify

# RRF's constant (Cormack et al. 2009, and Cosmos DB's RRF): a hit at rank r adds 1/(k + r).
RRF_K = 60


def embedding_text(words: str) -> str:
    """What is embedded for a capture: its words (the text or a voice note's transcript, with
    the clarification answers first, as `InboxItem.text_to_classify` gives them), cut as the
    classifier reads a long one: exactly what the classifier is asked, so that the two run
    side by side inside the model's wait (and, where the offline classifier runs on MiniLM
    too, its own vector is the one stored: shared/adapters/encoders/minilm.py). The title is
    not embedded: a model's is a summary of these words, and any title is matched by its
    words (the full-text ranking)."""
    return excerpt_to_classify(words.strip())


def embedding_key(model: str, text: str) -> str:
    """Which model embedded which text: a stored vector is current while this is unchanged."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{model}:{digest}"


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of rankings of ids (best first): each id scores the sum over the
    rankings of 1/(k + rank), rank counted from 1. Best first; ties keep the order in which
    the ids were first met (the first ranking's first)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, id_ in enumerate(dict.fromkeys(ranking), start=1):
            scores[id_] = scores.get(id_, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)
