"""The offline classifier (`OfflineClassifier`, the default without a model server): a logistic
regression over the sentence embeddings of labelled example captures (`examples.json`) and of
the tuning months' captures (`months.json`), for each bucket, "misunderstood" and "vague",
mixed with a word-level model of the same examples (wording.py), sharpened, per encoder's
`Tuning`. The encoder is the setting OFFLINE_CLASSIFIER_ENCODER: multilingual-e5-small by
default (encoders/multilingual_e5.py), or all-MiniLM-L6-v2 (encoders/minilm.py, search's)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression

from shared.adapters.classifier.wording import WordingModel
from shared.adapters.encoders.minilm import get_encoder
from shared.adapters.encoders.sentence import SentenceEncoder, one_blas_thread
from shared.domain.classification import Bucket, Classification, cut_title
from shared.domain.outcomes import which_bucket_question
from shared.domain.people_words import KIN

# The classifier's encoders by name (the setting OFFLINE_CLASSIFIER_ENCODER).
EncoderName = Literal["minilm", "e5"]
_classifier_encoders: dict[str, SentenceEncoder] = {}
_encoder_lock = threading.Lock()


def classifier_encoder(name: EncoderName) -> SentenceEncoder:
    """The process-wide encoder called `name`, loaded on first use. MiniLM is the one search's
    embedder shares (get_encoder)."""
    if name == "minilm":
        return get_encoder()
    encoder = _classifier_encoders.get(name)
    if encoder is None:
        with _encoder_lock:
            encoder = _classifier_encoders.get(name)
            if encoder is None:
                from shared.adapters.encoders.multilingual_e5 import MultilingualE5Encoder

                encoder = _classifier_encoders[name] = MultilingualE5Encoder()
                one_blas_thread()
    return encoder


# --- Classifier -----------------------------------------------------------------------------

_EXAMPLES_PATH = Path(__file__).with_name("examples.json")
# The tuning months' captures (bench/data/MONTH_SET.md), by label, written by `python -m
# bench.tools.month_examples`: 5,950 real-life captures of 36 lives, each counting MONTH_WEIGHT
# beside a written example, so that the single-topic captures the examples were written for
# are filed as before. MiniLM's weight, picked with 17 months each left out in turn
# (`python -m bench classify --leave-one-out`) and the dev sets: at 1.0 a month is filed
# right / asked / wrong 0.874 / 0.073 / 0.053 but the dev sets' clear captures fall from
# 0.933 / 0.962 to 0.883 / 0.868; at 0.3, 0.854 / 0.094 / 0.052 and 0.933 / 0.887.
MONTHS_FILE = "months.json"
MONTH_WEIGHT = 0.3  # MiniLM's (Tuning.month_weight)
_MISUNDERSTOOD = "misunderstood"
# Captures too vague to file ("the thing with Rob", "Lucy and the idea"): nearest to these,
# a capture keeps its best bucket but is asked about.
_VAGUE = "vague"
_GROUPS: tuple[str, ...] = (*(b.value for b in Bucket), _MISUNDERSTOOD, _VAGUE)

# The embedding voter: a logistic regression on the examples' embeddings. It weighs each of
# the 384 dimensions, where a nearest-examples score weighs them all alike and so let a name
# alone pull a capture to People. Picked by 5-fold cross-validation on the tuning month
# (bench/data/month_dev_captures.jsonl, the other folds added to the examples): right bucket
# 0.847 (nearest examples and centroids) -> 0.890; C of 0.5, 1 and 2 scored alike.
_C = 1.0  # MiniLM's (Tuning.c)
# The two voters' mix, then a power that sharpens it (the average of two models is less sure
# than either): picked in the same cross-validation for the fewest wrongly filed at the
# server's line, 0.104 -> 0.043 of the month's captures.
_EMBEDDING_SHARE = 0.5  # MiniLM's (Tuning.embedding_share, .sharpen)
_SHARPEN = 2.0
_CONFIDENT = 0.6  # the server's "file it" line
# Reported with bucket=None: clearly under the server's 0.3 "misunderstood" line.
_GIBBERISH_CONFIDENCE = 0.25
# The encoder knows English words: text it must cut into many word pieces is mostly in another
# language, where its similarities mean little, so it is never filed as sure. English captures
# take at most 1.8 pieces per word (names left out; 99 % under 1.55), captures partly in
# Spanish or German 1.2-1.7 (the months, bench/data/MONTH_SET.md), whole captures in other
# languages 1.4-3.5. At 2.0 the months' code-switched captures are filed as English ones are
# (their buckets are as often right), and no whole other-language capture of the dev sets is
# filed wrongly (6 of 20 filed right, the rest asked; at 1.6, 2 of 20).
_UNFAMILIAR_PIECES_PER_WORD = 2.0  # MiniLM's (Tuning.unfamiliar_pieces_per_word)


@dataclass(frozen=True)
class Tuning:
    """One encoder's settings: the embedding voter's C, the months' weight, the two voters'
    mix and its sharpening, the unfamiliar-words cap (None: none), and how the voters are
    mixed: their probabilities averaged ("mean"), or their logarithms ("product": each
    voter's probabilities raised to its share and multiplied, a product of experts)."""

    c: float
    month_weight: float
    embedding_share: float
    sharpen: float
    unfamiliar_pieces_per_word: float | None
    mix: Literal["mean", "product"] = "mean"


TUNINGS: dict[str, Tuning] = {
    "minilm": Tuning(_C, MONTH_WEIGHT, _EMBEDDING_SHARE, _SHARPEN, _UNFAMILIAR_PIECES_PER_WORD),
    # multilingual-e5-small reads about 100 languages: no cap on unfamiliar words. Picked on
    # the 20 tuning months, each left out in turn (`python -m bench classify --leave-one-out
    # --encoder e5`), and checked on the dev sets; every setting tried and its figures are in
    # `python -m bench.tools.tune_classifier`'s docstring and bench/data/MONTH_SET.md.
    # - C 32: the README's "Call Sarah about the budget review" (tests and voice fixtures
    #   file it) stays People and filed, at 0.651; at C 16 it is asked about.
    # - The months at full weight: more lives taught the classifier more than any setting.
    # - The voters multiplied, not averaged: a voter sure a group is wrong vetoes it, so more
    #   are filed right at the same rate filed wrong. Share 0.4 is the ratio of the exponents
    #   fitted to the left-out months' log-loss (0.64 / 0.93); sharpened 1.1 tempers that
    #   surer mix until under 0.04 are filed wrong: filed right / asked / wrong 0.880 / 0.081
    #   / 0.039, where averaged (0.5, sharpened 1.5) gave 0.892 / 0.062 / 0.046. The price:
    #   the dev sets' short clean captures are asked about more (filed right 0.906 -> 0.866;
    #   the right bucket 0.969 either way).
    # - With 25 months (months 21-25 folded in) the same settings file a month left out right
    #   / asked / wrong 0.894 / 0.068 / 0.038 (20 of 25 months hold both bars; Sarah 0.633).
    #   C 16-64, months 0.5-2, share 0.5 and sharpenings 1-1.2 only trade filed right for
    #   filed wrong along the same line (sharpened 1: 0.885 / 0.080 / 0.034, Sarah 0.600, the
    #   dev sets filed right 0.872 -> 0.846), so they were kept.
    # - With 29 months (months 26-29 folded in, the same settings): 0.897 / 0.066 / 0.037, 21
    #   of 29 months hold both bars; Sarah 0.627. The dev sets file 2 more of their 149
    #   bucket captures wrongly (0.013 -> 0.027, both at 0.61) and 3 fewer clear captures in
    #   the right bucket (0.961 -> 0.953, all asked about). Names masked out of the word
    #   voter's text (when fitted and for a capture) filed 0.903 / 0.061 / 0.036, but wrong
    #   fell on 9 months and rose on 11 and the dev sets' right bucket fell to 0.946: not kept
    #   (bench/data/MONTH_SET.md).
    # - With 32 months (months 30-32 folded in, the same settings): 0.902 / 0.061 / 0.036, 23
    #   of 32 months hold both bars. The three lives alone took Sarah to 0.553 (asked: their
    #   project updates name people and budgets); four written People examples of the class
    #   the examples hold ("call Deepa about the project review") bring it to 0.713, the
    #   months' figure unchanged (3 of 5,433 more filed wrong) and the dev sets' right bucket
    #   held or up (dev2 0.962 -> 0.981).
    # - With 36 months (months 33-36 folded in, the same settings): 0.908 / 0.057 / 0.035, 29
    #   of 36 months hold both bars; Sarah 0.661. The dev sets file 0.879 / 0.101 / 0.020
    #   (0.886 / 0.087 / 0.027 with 32), their clear captures' right bucket 0.961 -> 0.953.
    "e5": Tuning(32.0, 1.0, 0.4, 1.1, None, mix="product"),
}
# Where vague, bare and unfamiliar captures are capped: the "plausible, ask" band.
_ASK_CONFIDENCE = 0.45
# Words that carry no subject: a capture with at most one word besides these ("passport",
# "the bank", "Sarah") names a thing but not what to do with it, so it is asked about. Of our
# 1,000-odd labelled captures only one clear one ("ironing") is that short.
_EMPTY_WORDS = {
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "this", "that", "these",
    "those", "some", "to", "of", "for", "on", "in", "at", "with", "and", "or", "again",
    "later", "now", "it", "um", "uh", "er", "so", "yeah", "ok", "okay",
}  # fmt: skip
# A kinship word or a title said before a name is part of the name ("grandad con", "uncle
# pete", "mrs abernethy"): two such words still name only a person, so they are asked about
# like "Sarah" is. Follow-ups of months 2-25 begin with 22 such captures: 5 were filed without
# a question, 3 of them in People (want Admin, Ideas); no month, dev or example capture is
# one. Not "dr" or "prof", said before a thing too ("dr appt").
_BEFORE_A_NAME = KIN | {"mr", "mrs", "ms", "mx", "herr", "frau", "sra"}

_CLARIFY = "I couldn't make that out — what did you want to capture?"
_NOTHING_TO_FILE = "That capture looks empty — what did you want to capture?"


def training_set(
    examples: dict[str, list[str]], months: dict[str, list[str]] | None, tuning: Tuning
) -> tuple[list[str], list[int], list[float]]:
    """The texts the classifier learns from, their groups' indexes and their weights (a
    written example 1, a month's capture `tuning.month_weight`)."""
    missing = [g for g in _GROUPS if not examples.get(g)]
    if missing:
        raise ValueError(f"examples.json has no examples for {missing}")
    months = months or {}
    texts: list[str] = []
    labels: list[int] = []
    weights: list[float] = []
    for i, group in enumerate(_GROUPS):
        for source, weight in ((examples, 1.0), (months, tuning.month_weight)):
            for text in source.get(group, []):
                texts.append(text)
                labels.append(i)
                weights.append(weight)
    return texts, labels, weights


class _ExampleIndex:
    """The examples per group, embedded, with a logistic regression over their embeddings and
    the word-level model of the same examples; the months' captures (`months`) count
    MONTH_WEIGHT each beside the written examples."""

    def __init__(
        self,
        examples: dict[str, list[str]],
        encoder: SentenceEncoder,
        months: dict[str, list[str]] | None = None,
        keep: bool = False,
        tuning: Tuning = TUNINGS["minilm"],
    ) -> None:
        texts, labels, weights = training_set(examples, months, tuning)
        y, w = np.array(labels), np.array(weights)
        # Balanced by weight: the misunderstood and vague groups hold a small share of the
        # examples, and count as much as a bucket.
        per_group = np.array([w[y == i].sum() for i in range(len(_GROUPS))])
        balanced = w * (w.sum() / (len(_GROUPS) * per_group))[y]
        self.fit_key = fit_key(encoder, tuning, texts, labels, weights)
        shipped = shipped_fit(encoder, self.fit_key) if keep else None
        if shipped is not None:
            self.embedded = shipped
        else:
            # Converged (sklearn's default tol of 1e-4 stops a weakly regularised fit early:
            # over e5, C=16, one capture's confidence moved by 0.005 between two encodings of
            # the same examples that differed by 8e-8).
            model = LogisticRegression(C=tuning.c, max_iter=3000, tol=1e-6)
            vectors = _embedded_examples(texts, encoder, keep)
            self.embedded = model.fit(vectors, y, sample_weight=balanced)
        self.wording = WordingModel(texts, y, w)

    def probabilities(self, query: np.ndarray, texts: list[str], tuning: Tuning) -> np.ndarray:
        """Per group, for `texts` and their embeddings `query`: the two voters mixed."""
        embedded = self.embedded.predict_proba(query).astype(np.float32)
        worded = self.wording.probabilities(texts)
        share = tuning.embedding_share
        if tuning.mix == "product":
            # In logarithms: a voter sure a group is wrong vetoes it, where an average would
            # still give it half of the other voter's probability.
            floor = np.float32(1e-9)
            logs = share * np.log(embedded + floor) + (1 - share) * np.log(worded + floor)
            sharpened = np.exp(tuning.sharpen * (logs - logs.max(axis=-1, keepdims=True)))
        else:
            mixed = share * embedded + (1 - share) * worded
            sharpened = mixed**tuning.sharpen
        return sharpened / sharpened.sum(axis=-1, keepdims=True)


# The embedding voter as fitted on the app's own examples, committed beside them (`python -m
# bench.tools.month_examples` writes it): a new clone's first start then encodes none of the
# 6,886 examples (two to three minutes of CPU on 2 cores), whatever the number of months. Used
# only while its key matches what the fit would be made from (the encoder and its version,
# scikit-learn's version, the settings, every example and its label and weight); otherwise
# the examples are encoded and fitted as before.
def fitted_path(encoder: SentenceEncoder) -> Path:
    """Where `encoder`'s fit is committed."""
    return _EXAMPLES_PATH.with_name(f"fitted-{encoder.name}.json")


def fit_key(
    encoder: SentenceEncoder,
    tuning: Tuning,
    texts: list[str],
    labels: list[int],
    weights: list[float],
) -> str:
    """What a fit is made from, as one hash."""
    lines = [encoder.key, sklearn.__version__, repr(tuning.c), repr(tuning.month_weight)]
    lines += [
        f"{label}\t{weight!r}\t{text}"
        for text, label, weight in zip(texts, labels, weights, strict=True)
    ]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def shipped_fit(encoder: SentenceEncoder, key: str) -> LogisticRegression | None:
    """The committed fit for `key`, or None (none for this encoder, or made from other
    examples)."""
    try:
        fit = json.loads(fitted_path(encoder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if fit.get("key") != key:
        return None
    model = LogisticRegression()
    model.classes_ = np.array(fit["classes"])
    # In the fit's own precision (float32 over float32 vectors), so it classifies the same.
    model.coef_ = np.array(fit["coef"], dtype=fit["dtype"])
    model.intercept_ = np.array(fit["intercept"], dtype=fit["dtype"])
    model.n_features_in_ = model.coef_.shape[1]
    return model


def write_fit(encoder_name: EncoderName = "e5") -> Path:
    """Fit the embedding voter on the app's own examples afresh and write it to
    `fitted_path`, to be committed; returns the path."""
    encoder = classifier_encoder(encoder_name)
    path = fitted_path(encoder)
    path.unlink(missing_ok=True)
    _indexes.pop((_EXAMPLES_PATH.resolve(), encoder_name), None)
    index = _get_index(_EXAMPLES_PATH.resolve(), encoder_name)
    model = index.embedded
    fit = {
        "key": index.fit_key,
        "classes": model.classes_.tolist(),
        "dtype": str(model.coef_.dtype),
        "intercept": model.intercept_.tolist(),
        "coef": model.coef_.tolist(),
    }
    path.write_text(json.dumps(fit, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


# Derived from the packages and the examples, never committed: the repo's git-ignored .models/.
_CACHE_DIR = Path(__file__).resolve().parents[3] / ".models"


def _embedded_examples(texts: list[str], encoder: SentenceEncoder, keep: bool = True) -> np.ndarray:
    """The examples' vectors. The app's own (`keep`) are encoded once per version of the
    examples and the model and kept in .models/: each process that classifies (the devhost,
    every test's host) loads them in milliseconds instead of spending seconds of CPU encoding
    a few thousand examples again. A benchmark's variations are not kept (_remembered)."""
    if not keep:
        return _remembered(texts, encoder)
    key = hashlib.sha256("\n".join([encoder.key, *texts]).encode()).hexdigest()[:16]
    path = _CACHE_DIR / f"{encoder.name}-examples-{key}.npy"
    with contextlib.suppress(OSError, ValueError):
        kept = np.load(path)
        if kept.shape == (len(texts), encoder.dim):
            return kept
    vectors = encoder.encode(texts)
    with contextlib.suppress(OSError):
        _CACHE_DIR.mkdir(exist_ok=True)
        # Written aside and renamed: a process loading it meanwhile sees all of it or none.
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        with partial.open("wb") as out:
            np.save(out, vectors)
        os.replace(partial, path)
    return vectors


# The vectors of every example a benchmark's variations had in this process, per encoder and
# text: leaving one month out in turn encodes each example once, not once a variation.
_example_vectors: dict[str, dict[str, np.ndarray]] = {}


def _remembered(texts: list[str], encoder: SentenceEncoder) -> np.ndarray:
    known = _example_vectors.setdefault(encoder.name, {})
    new = [t for t in dict.fromkeys(texts) if t not in known]
    if new:
        known.update(zip(new, encoder.encode(new), strict=True))
    return np.stack([known[t] for t in texts]) if texts else encoder.encode([])


_indexes: dict[tuple[Path, str], _ExampleIndex] = {}
_index_lock = threading.Lock()


def _get_index(path: Path, encoder_name: EncoderName = "minilm") -> _ExampleIndex:
    """The index of the examples at `path`, with the months' captures beside them (a
    `months.json` in the same folder, if there is one), over `encoder_name`'s vectors."""
    index = _indexes.get((path, encoder_name))
    if index is None:
        with _index_lock:
            index = _indexes.get((path, encoder_name))
            if index is None:
                examples = json.loads(path.read_text(encoding="utf-8"))
                months_path = path.with_name(MONTHS_FILE)
                months = (
                    json.loads(months_path.read_text(encoding="utf-8"))
                    if months_path.exists()
                    else None
                )
                index = _indexes[(path, encoder_name)] = _ExampleIndex(
                    examples,
                    classifier_encoder(encoder_name),
                    months,
                    keep=path == _EXAMPLES_PATH.resolve(),
                    tuning=TUNINGS[encoder_name],
                )
    return index


_WARM_UP_CAPTURE = "Call Sarah about the budget review"


class OfflineClassifier:
    """Offline classifier: the bucket of the labelled examples a capture's sentence embedding
    (over `encoder`, OFFLINE_CLASSIFIER_ENCODER) and its words are most like."""

    def __init__(self, examples_path: Path | None = None, encoder: EncoderName = "e5") -> None:
        self._examples_path = (examples_path or _EXAMPLES_PATH).resolve()
        self._encoder_name: EncoderName = encoder
        self.tuning = TUNINGS[encoder]

    def warm_up(self) -> None:
        """Load the model, embed the examples and classify one capture now, so the first
        real capture runs at full speed."""
        self.classify_sync(_WARM_UP_CAPTURE)

    async def classify(self, text: str, *, said_on: date | None = None) -> Classification:
        # It reads no dates (the rules do, from the capture's day), so `said_on` changes nothing.
        return await asyncio.to_thread(self.classify_sync, text)

    def classify_sync(self, text: str) -> Classification:
        text = text or ""
        if not _has_words(text):
            return Classification(
                bucket=None,
                confidence=0.0,
                title=make_title(text),
                question=_NOTHING_TO_FILE if not text.strip() else _CLARIFY,
            )
        index = _get_index(self._examples_path, self._encoder_name)
        encoder = classifier_encoder(self._encoder_name)
        probs = index.probabilities(encoder.encode_remembered([text]), [text], self.tuning)[0]
        real = probs[: len(Bucket)]
        ranked = [Bucket(_GROUPS[i]) for i in np.argsort(-real)]
        title = make_title(text)
        nearest = _GROUPS[int(np.argmax(probs))]
        if nearest == _MISUNDERSTOOD:
            confidence = min(float(real.max()), _GIBBERISH_CONFIDENCE)
            return Classification(
                bucket=None, confidence=round(confidence, 3), title=title, question=_CLARIFY
            )
        confidence = round(float(real.max()), 3)
        cap = self.tuning.unfamiliar_pieces_per_word
        if (
            nearest == _VAGUE
            or _says_too_little(text)
            or (cap is not None and _pieces_per_word(text, encoder) > cap)
        ):
            confidence = min(confidence, _ASK_CONFIDENCE)
        question, named = None, []
        if confidence < _CONFIDENT:
            named = ranked[:2]
            question = which_bucket_question(*named)
        return Classification(
            bucket=ranked[0],
            confidence=confidence,
            title=title,
            question=question,
            named_buckets=named,
        )

    def probabilities(self, text: str) -> dict[str, float]:
        """Calibrated probability per bucket, "misunderstood" and "vague" (for diagnostics)."""
        index = _get_index(self._examples_path, self._encoder_name)
        vectors = classifier_encoder(self._encoder_name).encode([text])
        probs = index.probabilities(vectors, [text], self.tuning)[0]
        return {g: float(p) for g, p in zip(_GROUPS, probs, strict=True)}


# --- Titles ---------------------------------------------------------------------------------

_TITLE_MAX = 60
_DASHES_AND_SPACE = " ,;:-\u2013\u2014"
_FILLERS = r"um+|uh+|erm*|hmm+|ah+|oh|ok(?:ay)?|so|like|right|well|yeah|hey|and|also"
_LEADS = (
    r"note to self|quick note|memo|todo|to-?do|reminder(?: to| that| about)?"
    r"|remind me(?: to| that| about)?|(?:don'?t|do not) forget(?: to| that| about)?"
    r"|remember (?:to|that)|i (?:need|have|want|must) to|i(?:'ve| have)? got to|i gotta"
    r"|i should|need to|have to|got to|gotta"
)
_LEADING_NOISE = re.compile(
    # (?![-']) keeps compounds and contractions whole: "well-being", "so-called", "ok'd".
    rf"^(?:(?:{_FILLERS}|{_LEADS})\b(?![-'\u2019])[\s,.;:!?\u2013\u2014-]*)+",
    re.IGNORECASE,
)


def _pieces_per_word(text: str, encoder: SentenceEncoder | None = None) -> float:
    """Word pieces per word (MiniLM's, unless another `encoder`), capitalised words after the
    first (names) left out; 0 for fewer than two words."""
    words = [w for i, w in enumerate(_WORD.findall(text)) if i == 0 or not w[0].isupper()]
    if len(words) < 2:
        return 0.0
    return (encoder or get_encoder()).word_pieces(words) / len(words)


_WORD = re.compile(r"\w+")


def _says_too_little(text: str) -> bool:
    said = [w for w in _WORD.findall(text.lower()) if w not in _EMPTY_WORDS]
    return len(said) <= 1 or (len(said) == 2 and said[0] in _BEFORE_A_NAME)


def _has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def make_title(text: str) -> str:
    """A short title: leading fillers and "remind me to"-style phrases dropped, first letter
    capitalised, at most 60 characters cut at a word boundary. Only the first line counts:
    after a follow-up it is the user's latest answer, which says best what the capture is."""
    lines = [line for line in (text or "").splitlines() if line.strip()]
    cleaned = " ".join((lines[0] if lines else "").split())
    if not _has_words(cleaned):
        return "Empty capture" if not cleaned else "Unclear capture"
    stripped = _LEADING_NOISE.sub("", cleaned).strip(_DASHES_AND_SPACE)
    if _has_words(stripped):
        cleaned = stripped
    cleaned = cleaned.rstrip(_DASHES_AND_SPACE + ".!?") or cleaned
    cleaned = cut_title(cleaned, _TITLE_MAX)
    first_word = cleaned.split(" ", 1)[0]
    if any(ch.isupper() for ch in first_word):
        return cleaned  # "iPhone", "eBay", "NHS": already cased on purpose
    return cleaned[0].upper() + cleaned[1:]
