"""What the offline classifier asks of a sentence encoder (`SentenceEncoder`), and the numpy
pieces both of its BERTs share: the exact GELU, layer norm, a layer's attention and
feed-forward, mean pooling, one BLAS thread a process."""

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


def attended(
    x: np.ndarray,
    qkv: tuple[np.ndarray, np.ndarray, np.ndarray],
    attn_bias: np.ndarray,
    block: dict[str, np.ndarray],
    eps: float,
) -> np.ndarray:
    """One BERT layer once its queries, keys and values are made (each model makes them its
    own way): attention over the unmasked keys, then the residuals, layer norms and
    feed-forward. `qkv` are (batch, heads, seq, head_dim)."""
    q, k, v = qkv
    batch, seq, hidden = x.shape
    scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(q.shape[-1])) + attn_bias
    scores -= scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
    b = block
    x = layer_norm(ctx @ b["out_w"] + b["out_b"] + x, b["ln1_w"], b["ln1_b"], eps)
    ff = gelu(x @ b["ff1_w"] + b["ff1_b"])
    return layer_norm(ff @ b["ff2_w"] + b["ff2_b"] + x, b["ln2_w"], b["ln2_b"], eps)


def mean_pooled(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean of the tokens' last states over the unmasked ones, at unit length."""
    summed = (x * mask[:, :, None]).sum(axis=1)
    pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return (pooled / norms).astype(np.float32)


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
