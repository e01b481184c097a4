"""What the offline classifier asks of a sentence encoder (`SentenceEncoder`), and the numpy
pieces both of its BERTs share: the exact GELU, layer norm, one BLAS thread a process."""

from __future__ import annotations

from typing import Protocol

import numpy as np


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26, abs error < 1.5e-7: numpy has no erf, and BERT's GELU is
    the exact erf form (the tanh approximation moves embeddings by up to ~4e-4)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x * np.float32(1.0 / np.sqrt(2.0))))).astype(np.float32)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class SentenceEncoder(Protocol):
    """What the classifier asks of a sentence encoder: minilm.py's, or multilingual_e5.py's."""

    name: str  # "minilm" or "e5": the file name of the examples' kept vectors starts with it
    key: str  # the model and its version: kept vectors are per key
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...

    def encode_remembered(self, texts: list[str]) -> np.ndarray:
        """`encode`, reusing the vectors of texts encoded here lately."""
        ...

    def word_pieces(self, words: list[str]) -> int:
        """How many word pieces `words` take, each alone (the unfamiliar-words cap)."""
        ...


def one_blas_thread() -> None:
    """One BLAS thread for the process: a capture's or a query's matrices are a few dozen rows,
    too small to share, and OpenBLAS's second thread spin-waits for the first. On a busy
    2-core machine one query took 350-1,000 ms with two threads, 13 ms with one (issue 42)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
