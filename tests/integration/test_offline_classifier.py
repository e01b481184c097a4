"""The offline classifier (over multilingual-e5-small, the app's default, or MiniLM): the
examples' kept vectors, held-out accuracy, edge cases and titles (MiniLM's own vectors:
test_minilm_encoder.py)."""

import asyncio
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.tools.month_examples import tuning_months
from shared.adapters.classifier import offline
from shared.adapters.classifier.offline import OfflineClassifier, _get_index, make_title
from shared.adapters.encoders.minilm import MiniLMEncoder, get_encoder
from shared.domain.classification import Bucket, Classification

LABELLED = Path(__file__).parents[1] / "data" / "labelled_captures.jsonl"
EXAMPLES = Path(__file__).parents[2] / "shared" / "adapters" / "classifier" / "examples.json"
EVAL_SET = Path(__file__).parents[2] / "bench" / "data" / "eval_captures.jsonl"
# Vague captures written apart from the vague examples, to check that group against.
MONTH_FROZEN = Path(__file__).parents[2] / "bench" / "data" / "month_frozen_captures.jsonl"
VAGUE_SET = Path(__file__).parents[2] / "bench" / "data" / "dev3_captures.jsonl"
LABELS = [*(b.value for b in Bucket), "misunderstood"]


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    return get_encoder()


@pytest.fixture(scope="module")
def classifier() -> OfflineClassifier:
    """The app's offline classifier, over its default encoder."""
    c = OfflineClassifier()
    c.warm_up()
    return c


@pytest.fixture(scope="module")
def minilm_classifier() -> OfflineClassifier:
    """The offline classifier over MiniLM (OFFLINE_CLASSIFIER_ENCODER=minilm)."""
    c = OfflineClassifier(encoder="minilm")
    c.warm_up()
    return c


def _labelled() -> list[dict[str, str]]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line]


# --- (a) the examples' vectors ------------------------------------------------------------


def test_the_examples_vectors_are_encoded_once_and_then_read_back(
    encoder: MiniLMEncoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(offline, "_CACHE_DIR", tmp_path)
    texts = ["book the dentist", "lark go-live moved to the 3rd", "what if we cycled"]

    first = offline._embedded_examples(texts, encoder)
    (kept,) = tmp_path.glob("minilm-examples-*.npy")
    np.testing.assert_array_equal(np.load(kept), first)
    np.testing.assert_array_equal(first, encoder.encode(texts))

    # Read back, not encoded: a file with other numbers in it is taken as it is...
    np.save(kept, np.zeros_like(first))
    np.testing.assert_array_equal(offline._embedded_examples(texts, encoder), 0.0)
    # ...other examples are another file; a broken one is encoded again and replaced.
    assert offline._embedded_examples(texts[:2], encoder).shape == (2, 384)
    assert len(list(tmp_path.glob("minilm-examples-*.npy"))) == 2
    kept.write_bytes(b"not numpy")
    np.testing.assert_array_equal(offline._embedded_examples(texts, encoder), first)
    np.testing.assert_array_equal(np.load(kept), first)
    assert not list(tmp_path.glob("*.partial"))


def test_the_committed_fit_is_the_fit_of_todays_examples() -> None:
    # A new clone's first start reads it instead of encoding every example: it must be made
    # from exactly the examples, months and settings the app would fit.
    encoder = offline.classifier_encoder("e5")
    tuning = offline.TUNINGS["e5"]
    examples = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    months = json.loads(EXAMPLES.with_name(offline.MONTHS_FILE).read_text(encoding="utf-8"))
    key = offline.fit_key(encoder, tuning, *offline.training_set(examples, months, tuning))
    assert offline.shipped_fit(encoder, key) is not None, (
        "shared/adapters/classifier/fitted-e5.json is stale: python -m bench.tools.month_examples"
    )


def test_a_written_fit_is_read_back_and_classifies_as_the_fit_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The app's examples moved to a small copy, so that fitting them is quick.
    examples = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    small = {group: texts[:12] for group, texts in examples.items()}
    (tmp_path / "examples.json").write_text(json.dumps(small), encoding="utf-8")
    monkeypatch.setattr(offline, "_EXAMPLES_PATH", tmp_path / "examples.json")
    monkeypatch.setattr(offline, "_CACHE_DIR", tmp_path / "models")
    monkeypatch.setattr(offline, "_indexes", {})
    texts = ["call Sarah about the budget review", "kestrel go-live moved to weds", "zzkq"]
    encoder = offline.classifier_encoder("minilm")
    query = encoder.encode(texts)

    fitted = offline.write_fit("minilm")
    assert fitted == tmp_path / "fitted-minilm.json"
    fresh = offline._indexes[(tmp_path / "examples.json", "minilm")]
    offline._indexes.clear()
    (kept,) = (tmp_path / "models").glob("minilm-examples-*.npy")
    kept.unlink()  # read back, it is not fitted again: no example is encoded
    monkeypatch.setattr(offline, "_embedded_examples", _must_not_encode)
    read = _get_index(tmp_path / "examples.json", "minilm")
    tuning = offline.TUNINGS["minilm"]
    np.testing.assert_array_equal(
        read.probabilities(query, texts, tuning), fresh.probabilities(query, texts, tuning)
    )

    # Other examples: the fit is not theirs, so they are encoded and fitted afresh.
    small["Ideas"].append("what if the shed had a green roof")
    (tmp_path / "examples.json").write_text(json.dumps(small), encoding="utf-8")
    offline._indexes.clear()
    with pytest.raises(AssertionError, match="encoded"):
        _get_index(tmp_path / "examples.json", "minilm")


def _must_not_encode(*_: object, **__: object) -> np.ndarray:
    raise AssertionError("the examples were encoded")


# --- (b) held-out labelled set ------------------------------------------------------------------


def test_labelled_set_is_separate_and_large_enough() -> None:
    rows = _labelled()
    counts = Counter(r["label"] for r in rows)
    assert set(counts) == set(LABELS)
    assert min(counts.values()) >= 25
    examples = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    seen = {t.strip().lower() for texts in examples.values() for t in texts}
    assert not [r["text"] for r in rows if r["text"].strip().lower() in seen]
    assert all(len(examples[label]) >= 40 for label in LABELS)


def _rows(path: Path) -> list[dict[str, Any]]:
    """A labelled set's rows (JSONL, blank lines skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_examples_hold_no_capture_of_the_frozen_evaluation_set() -> None:
    # Even a short one written the same way by chance ("um") would be a free hit there.
    frozen = {row["text"].strip().lower() for row in _rows(EVAL_SET)}
    examples = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    assert len(frozen) >= 300
    assert not [t for texts in examples.values() for t in texts if t.strip().lower() in frozen]


def test_examples_hold_no_capture_of_the_frozen_month() -> None:
    # Issue 40's frozen month is never tuned on. The tuning month is in the examples, as
    # labelled captures in the style of a real month (it is measured by cross-validation:
    # bench/data/MONTH_SET.md).
    month = {row["text"].strip().lower() for row in _rows(MONTH_FROZEN)}
    examples = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    assert len(month) >= 150
    assert not [t for texts in examples.values() for t in texts if t.strip().lower() in month]


def test_the_months_are_the_tuning_months_captures_and_none_of_the_frozen_ones() -> None:
    months = json.loads(EXAMPLES.with_name(offline.MONTHS_FILE).read_text(encoding="utf-8"))
    held = {t.strip().lower() for texts in months.values() for t in texts}
    tuning_paths = tuning_months()
    # The frozen sets, and every month written blind after the tuning months (held out).
    held_out = [
        EVAL_SET,
        *(p for p in MONTH_FROZEN.parent.glob("month*_captures.jsonl") if p not in tuning_paths),
    ]
    frozen = {row["text"].strip().lower() for path in held_out for row in _rows(path)}
    tuning = {
        row["text"].strip().lower(): row["label"] for path in tuning_paths for row in _rows(path)
    }
    assert MONTH_FROZEN in held_out and MONTH_FROZEN not in tuning_paths
    assert all(p.exists() for p in tuning_paths)
    assert set(months) == {b.value for b in Bucket}
    assert len(held) >= 2000 and not held & frozen
    # Each under its own label (`python -m bench.tools.month_examples` writes them).
    assert all(tuning.get(t.strip().lower()) == label for label, ts in months.items() for t in ts)


def test_the_months_count_beside_the_examples(encoder: MiniLMEncoder) -> None:
    examples = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    months = json.loads(EXAMPLES.with_name(offline.MONTHS_FILE).read_text(encoding="utf-8"))
    capture = ["tessa says the kiln firing moved to thurs, glaze tests after"]
    tuning = offline.TUNINGS["minilm"]
    without = offline._ExampleIndex(examples, encoder).probabilities(
        encoder.encode(capture), capture, tuning
    )
    beside = _get_index(EXAMPLES.resolve(), "minilm").probabilities(
        encoder.encode(capture), capture, tuning
    )
    # The months move this capture's probabilities by about 0.05. The same index built by
    # hand may read vectors encoded in other batches (the kept file, written by whichever
    # start encoded the examples first): float32 padding sums differ by ~1e-7 a vector, and
    # the fitted probabilities by a few 1e-6 (a fresh clone's run found 4e-6).
    assert np.abs(without - beside).max() > 0.01
    assert offline._ExampleIndex(examples, encoder, months).probabilities(
        encoder.encode(capture), capture, tuning
    ) == pytest.approx(beside, abs=1e-4)


@pytest.mark.parametrize(
    ("text", "bucket"),
    [
        # Issue 40: a person named in a project update or an errand is a link, not a reason
        # for People; what is about the person still is People. (Written for this test: in
        # neither the examples nor the month sets.)
        ("finch rollout slips to the 9th - omari's api work needs another week", Bucket.PROJECTS),
        ("patio job: dara can start laying slabs tues once the sand is delivered", Bucket.PROJECTS),
        ("book a table at the crown for bea's leaving drinks, fri 7pm", Bucket.ADMIN),
        ("collect nan's glasses from the optician before sat", Bucket.ADMIN),
        ("omari's wife had twins!! send a card", Bucket.PEOPLE),
        ("dara hates coriander and is allergic to nuts", Bucket.PEOPLE),
    ],
)
async def test_a_named_person_is_a_link_not_a_bucket(
    classifier: OfflineClassifier, text: str, bucket: Bucket
) -> None:
    assert (await classifier.classify(text)).bucket == bucket


async def test_accuracy_on_held_out_labelled_captures(classifier: OfflineClassifier) -> None:
    rows = _labelled()
    results: list[Classification] = [await classifier.classify(r["text"]) for r in rows]
    truth = [r["label"] for r in rows]
    predicted = [r.bucket.value if r.bucket else "misunderstood" for r in results]

    print("\nlabel          precision  recall   n")
    recalls = {}
    for label in LABELS:
        tp = sum(t == p == label for t, p in zip(truth, predicted, strict=True))
        n_true = truth.count(label)
        n_pred = predicted.count(label)
        recalls[label] = tp / n_true
        precision = tp / n_pred if n_pred else float("nan")
        print(f"{label:14} {precision:9.2f} {recalls[label]:7.2f} {n_true:3}")

    accuracy = sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(rows)
    flagged = [r.bucket is None or r.confidence < 0.3 for r in results]
    is_gibberish = [t == "misunderstood" for t in truth]
    gibberish_recall = sum(f for f, g in zip(flagged, is_gibberish, strict=True) if g) / sum(
        is_gibberish
    )
    false_alarms = sum(f for f, g in zip(flagged, is_gibberish, strict=True) if not g) / (
        len(rows) - sum(is_gibberish)
    )
    confident = [
        (p == t) for r, p, t in zip(results, predicted, truth, strict=True) if r.confidence >= 0.6
    ]
    print(f"accuracy {accuracy:.3f}  gibberish recall {gibberish_recall:.2f}  ", end="")
    print(f"false alarms {false_alarms:.3f}  ", end="")
    print(f"confident (>=0.6) {len(confident)}/{len(rows)} at {np.mean(confident):.2f} correct")
    for r, p, t, row in zip(results, predicted, truth, rows, strict=True):
        if p != t:
            print(f"  miss: {t} -> {p} ({r.confidence:.2f}) {row['text']!r}")

    assert accuracy >= 0.80
    for label in Bucket:
        assert recalls[label.value] >= 0.6, label
    assert gibberish_recall >= 0.8
    assert false_alarms <= 0.1


async def test_vague_captures_are_asked_about(classifier: OfflineClassifier) -> None:
    rows = [json.loads(line) for line in VAGUE_SET.read_text(encoding="utf-8").splitlines()]
    examples = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    seen = {t.strip().lower() for texts in examples.values() for t in texts}
    assert len(rows) >= 20 and not [r for r in rows if r["text"].strip().lower() in seen]
    results = [await classifier.classify(r["text"]) for r in rows]
    asked = [r for r in results if r.bucket is None or r.confidence < 0.6]
    # Without the vague examples 7 of these 25 were asked; with them, 21.
    assert len(asked) / len(rows) >= 0.75, [r.title for r in results if r not in asked]


# --- (c) specific behaviour ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        *["insurance", "the boiler", "Gareth", "my visa", "dentist"],
        *["grandad con", "Uncle Pete", "mrs abernethy"],
    ],
)
async def test_a_bare_word_or_name_is_asked_about_not_filed(
    classifier: OfflineClassifier, text: str
) -> None:
    # A bare word names a thing, not what to do with it. Without the rule, "insurance",
    # "the boiler" and "dentist" were filed in Admin as sure (0.68-1.0). A name with its
    # kinship word or title is still only a person, as "Gareth" is: the follow-ups' "grandad
    # con" was filed in People at 0.62 before its answer ("order the cake for grandad con's
    # 90th") was ever asked for.
    result = await classifier.classify(text)
    assert result.bucket is None or result.confidence < 0.6
    assert result.question is not None


async def test_two_words_that_say_what_to_do_are_still_filed(
    classifier: OfflineClassifier,
) -> None:
    result = await classifier.classify("renew insurance")
    assert result.bucket is Bucket.ADMIN and result.confidence >= 0.6


async def test_call_sarah_is_confidently_people(classifier: OfflineClassifier) -> None:
    result = await classifier.classify("Call Sarah, she sounded low on sunday")
    assert result.bucket is Bucket.PEOPLE
    assert result.confidence >= 0.6
    assert result.question is None


async def test_a_call_about_a_project_is_not_sure_people(classifier: OfflineClassifier) -> None:
    # Issue 40: the budget review, not Sarah, may be the point; before, this was sure People.
    result = await classifier.classify("Call Sarah about the budget review")
    assert result.bucket in (Bucket.PEOPLE, Bucket.PROJECTS)
    if result.confidence < 0.6:
        assert "People" in (result.question or "") and "Projects" in (result.question or "")


@pytest.mark.parametrize(
    "text",
    [
        # Without the check both were filed as sure: the first in the wrong bucket.
        "et si les musées ouvraient la nuit",
        "marcar consulta no oftalmologista",
        "Zahnarzttermin am Donnerstag um zehn",
    ],
)
async def test_a_capture_in_words_the_encoder_does_not_know_is_not_filed_as_sure(
    minilm_classifier: OfflineClassifier, text: str
) -> None:
    # MiniLM knows English: in another language cut into many word pieces, whatever
    # bucket it guesses, it asks. (A language close to English, in words it knows, is filed
    # like English: right or wrong, its similarities then mean something.)
    result = await minilm_classifier.classify(text)
    assert result.confidence < 0.6
    assert result.question


async def test_names_do_not_make_a_capture_look_foreign(
    minilm_classifier: OfflineClassifier,
) -> None:
    # (With 32 months, "… are coming on Saturday" reads People at only 0.43 over MiniLM, the
    # visit said by nothing else: this one says it.)
    text = "Aoife and Tadhg Ó Súilleabháin are visiting us on Saturday"
    result = await minilm_classifier.classify(text)
    assert result.bucket is Bucket.PEOPLE
    # Not held back as another language: the names are left out of the word pieces counted.
    assert offline._pieces_per_word(text) < offline._UNFAMILIAR_PIECES_PER_WORD
    assert result.confidence > offline._ASK_CONFIDENCE


async def test_keyboard_mash_is_misunderstood(classifier: OfflineClassifier) -> None:
    result = await classifier.classify("asdf jkl qwerty")
    assert result.bucket is None
    assert result.confidence < 0.3
    assert result.question


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "?!...", "🙃🙃🙃"])
async def test_empty_or_wordless_text_asks_what_was_meant(
    classifier: OfflineClassifier, text: str
) -> None:
    result = await classifier.classify(text)
    assert result.bucket is None
    assert result.confidence < 0.3
    assert result.question
    assert result.title


def _with_probabilities(
    monkeypatch: pytest.MonkeyPatch, classifier: OfflineClassifier, probs: list[float]
) -> None:
    """Pin the model's output so the mapping to bucket/confidence/question is tested alone."""
    index = _get_index(classifier._examples_path, classifier._encoder_name)
    monkeypatch.setattr(index, "probabilities", lambda *_: np.array([probs], dtype=np.float32))


@pytest.mark.parametrize(
    ("probs", "bucket", "confidence", "offered"),
    [
        # People, Projects, Ideas, Admin, misunderstood, vague
        ([0.90, 0.04, 0.03, 0.02, 0.01, 0.00], Bucket.PEOPLE, 0.9, None),
        ([0.10, 0.45, 0.40, 0.03, 0.02, 0.00], Bucket.PROJECTS, 0.45, ("Projects", "Ideas")),
        ([0.25, 0.05, 0.20, 0.28, 0.22, 0.00], Bucket.ADMIN, 0.28, ("Admin", "People")),
        ([0.20, 0.05, 0.05, 0.10, 0.60, 0.00], None, 0.2, None),
        ([0.45, 0.00, 0.00, 0.05, 0.50, 0.00], None, 0.25, None),
        # Nearest to the vague examples: the best bucket, in the band that asks.
        ([0.48, 0.01, 0.00, 0.01, 0.00, 0.50], Bucket.PEOPLE, 0.45, ("People", "Projects")),
        ([0.20, 0.10, 0.05, 0.05, 0.00, 0.60], Bucket.PEOPLE, 0.2, ("People", "Projects")),
    ],
)
def test_probabilities_map_to_bucket_confidence_and_question(
    monkeypatch: pytest.MonkeyPatch,
    classifier: OfflineClassifier,
    probs: list[float],
    bucket: Bucket | None,
    confidence: float,
    offered: tuple[str, str] | None,
) -> None:
    _with_probabilities(monkeypatch, classifier, probs)
    result = classifier.classify_sync("anything with words")
    assert result.bucket == bucket
    assert result.confidence == pytest.approx(confidence, abs=1e-3)
    if bucket is None:
        assert result.confidence < 0.3
        assert "couldn't make that out" in (result.question or "")
    elif offered is None:
        assert result.question is None
    else:
        assert result.question is not None
        assert result.question.index(offered[0]) < result.question.index(offered[1])
    # The buckets the question names, for the app's buttons: also below 0.3, where nothing
    # is filed even for now (issue 39).
    assert result.named_buckets == [Bucket(b) for b in offered or ()]


async def test_concurrent_calls_agree_with_sequential(classifier: OfflineClassifier) -> None:
    texts = ["call mum", "renew the car tax", "what if socks had pockets", "ummm", "fix the roof"]
    together = await asyncio.gather(*(classifier.classify(t) for t in texts))
    one_by_one = [await classifier.classify(t) for t in texts]
    assert together == one_by_one


def test_probabilities_sum_to_one(classifier: OfflineClassifier) -> None:
    probs = classifier.probabilities("book the boiler service")
    assert set(probs) == {*LABELS, "vague"}
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-4)
    assert max(probs, key=probs.__getitem__) == "Admin"


class _Voter:
    """A voter that gives the same probabilities whatever it is asked (the mix under test)."""

    def __init__(self, probs: list[float]) -> None:
        self.probs = np.array([probs], dtype=np.float32)

    def predict_proba(self, _query: np.ndarray) -> np.ndarray:
        return self.probs

    def probabilities(self, _texts: list[str]) -> np.ndarray:
        return self.probs


def test_in_the_product_mix_a_voter_sure_a_group_is_wrong_vetoes_it() -> None:
    index = offline._ExampleIndex.__new__(offline._ExampleIndex)
    # The embedding is sure of People, then Projects; the words all but rule People out.
    index.embedded = _Voter([0.90, 0.05, 0.02, 0.01, 0.01, 0.01])  # type: ignore[assignment]
    index.wording = _Voter([0.01, 0.45, 0.45, 0.07, 0.01, 0.01])  # type: ignore[assignment]
    query = np.zeros((1, 4), dtype=np.float32)
    tuning = offline.TUNINGS["e5"]
    assert tuning.mix == "product"
    mean = index.probabilities(query, ["x"], replace(tuning, mix="mean"))[0]
    product = index.probabilities(query, ["x"], tuning)[0]
    # Averaged, People keeps the embedding's share of its 0.90 and wins; multiplied, the
    # words' veto holds, and the group both voters find plausible wins.
    assert int(np.argmax(mean)) == 0
    assert int(np.argmax(product)) == 1
    assert product.sum() == pytest.approx(1.0, abs=1e-5)
    # Without sharpening, an even product is the normalised geometric mean of the two.
    even = replace(tuning, embedding_share=0.5, sharpen=1.0)
    geometric = np.sqrt(index.embedded.probs[0] * index.wording.probs[0])
    assert index.probabilities(query, ["x"], even)[0] == pytest.approx(
        geometric / geometric.sum(), abs=1e-5
    )


# --- (d) titles ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("remind me to call the plumber", "Call the plumber"),
        ("note to self: renew passport", "Renew passport"),
        ("um so, uh, remind me to ring Tom", "Ring Tom"),
        ("don't forget to pay the gas bill!", "Pay the gas bill"),
        ("Reminder: dentist at 3pm.", "Dentist at 3pm"),
        ("  call   Sarah  ", "Call Sarah"),
        ("iPhone app idea", "iPhone app idea"),
        ("the NHS letter", "The NHS letter"),
        ("well-being check for mum", "Well-being check for mum"),
        ("so-called quick fix for the gate", "So-called quick fix for the gate"),
        ("Idea - a museum of smells", "Idea - a museum of smells"),
        ("um", "Um"),
        ("", "Empty capture"),
        ("🙃🙃", "Unclear capture"),
    ],
)
def test_title(text: str, title: str) -> None:
    assert make_title(text) == title


def test_long_title_is_cut_at_a_word_boundary() -> None:
    text = (
        "so I was thinking we could build a little app that tells you which of the "
        "vegetables in the fridge will go off first"
    )
    title = make_title(text)
    assert len(title) <= 60
    assert "…" not in title  # the title is data: a screen marks a cut itself
    assert title.startswith("I was thinking")
    assert text.find(title) != -1  # no word was split
    assert text[text.find(title) + len(title)] == " "


async def test_classification_title_fits_the_protocol(classifier: OfflineClassifier) -> None:
    result = await classifier.classify("note to self: " + "very long capture " * 40)
    assert 0 < len(result.title) <= 60
