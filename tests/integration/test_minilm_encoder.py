"""The MiniLM encoder (all-MiniLM-L6-v2 in numpy; search's offline embedder, and the offline
classifier's with OFFLINE_CLASSIFIER_ENCODER=minilm): its vectors are sentence-transformers'."""

import numpy as np
import pytest

from shared.adapters.encoders.minilm import MiniLMEncoder, get_encoder


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    return get_encoder()


def test_embeddings_are_unit_norm_384d_float32_and_deterministic(encoder: MiniLMEncoder) -> None:
    texts = ["Call Sarah about the budget review", "pay the council tax", "x"]
    first = encoder.encode(texts)
    assert first.shape == (3, 384)
    assert first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(first, encoder.encode(texts))
    # Batching pads to the longest text: padding must not change anyone's embedding.
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    np.testing.assert_allclose(first, alone, atol=1e-5)


def test_matches_published_sentence_transformers_output(encoder: MiniLMEncoder) -> None:
    # Values printed by sentence-transformers for all-MiniLM-L6-v2 (model card examples).
    vec = encoder.encode(["This is an example sentence"])[0]
    expected = [0.06765693, 0.06349593, 0.04871314, 0.07930495, 0.03744806, 0.00265273]
    np.testing.assert_allclose(vec[:6], expected, atol=1e-5)
    weather = encoder.encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    sims = weather @ weather.T
    np.testing.assert_allclose(
        [sims[0, 1], sims[0, 2], sims[1, 2]], [0.6660, 0.1046, 0.1411], atol=1e-3
    )


def test_paraphrases_are_closer_than_unrelated_sentences(encoder: MiniLMEncoder) -> None:
    a, b, c = encoder.encode(
        [
            "Remind me to phone my mother on Sunday",
            "call mum this sunday",
            "quarterly VAT return is due for the business",
        ]
    )
    assert a @ b > 0.6
    assert a @ c < 0.3
    assert a @ b > a @ c + 0.3


def test_long_text_is_truncated_not_rejected(encoder: MiniLMEncoder) -> None:
    vec = encoder.encode(["word " * 1000])
    assert vec.shape == (1, 384)
    assert np.isfinite(vec).all()


def test_empty_batch(encoder: MiniLMEncoder) -> None:
    assert encoder.encode([]).shape == (0, 384)
