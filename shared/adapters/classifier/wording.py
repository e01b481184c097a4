"""The offline classifier's second voter: a logistic regression on the words and letter groups
of the same labelled examples, for the cues a sentence embedding averages away ("maybe",
"renew", "buy", "what if")."""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline, make_union

# Inverse regularisation strength, picked with the mix in minilm.py by 5-fold log-loss over
# the examples: 10 and 30 scored alike, and the smaller regularises more.
_C = 10.0


class WordingModel:
    """Word 1-2 grams and character 2-4 grams (within words), tf-idf weighted."""

    def __init__(
        self, texts: list[str], labels: np.ndarray, weights: np.ndarray | None = None
    ) -> None:
        features = make_union(
            TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True),
        )
        self._model = make_pipeline(features, LogisticRegression(C=_C, max_iter=2000))
        self._model.fit(texts, labels, logisticregression__sample_weight=weights)

    def probabilities(self, texts: list[str]) -> np.ndarray:
        """Shape (len(texts), groups), in the order of the labels' values."""
        return self._model.predict_proba(texts).astype(np.float32)
