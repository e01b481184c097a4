"""The two embedders: MiniLM for real (a paraphrase nearer than an unrelated capture, one loaded
model shared with the classifier, whose vector of the same words is reused), and the Azure
OpenAI one against the scripted server: the request, the answer read in order, and its faults
as EmbedderUnavailable."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from shared.adapters.embedder.openai_embeddings import OpenAIEmbedder
from shared.domain.errors import EmbedderUnavailable
from testkit.fake_openai import (
    EMBED,
    FakeOpenAI,
    delay,
    embeddings,
    http_error,
    raw,
    raw_text,
    word_vector,
)


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# -- MiniLM, for real ------------------------------------------------------------------------


async def test_minilm_puts_a_paraphrase_nearest() -> None:
    from shared.adapters.embedder.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    query, paraphrase, unrelated, other = await embedder.embed(
        [
            "bike commute",
            "cycling to work along the canal",
            "pay the council tax bill",
            "lunch with Priya about her new job",
        ]
    )
    assert len(query) == embedder.dimensions == 384
    assert math.isclose(math.sqrt(sum(x * x for x in query)), 1.0, abs_tol=1e-4)
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.2
    assert cosine(query, paraphrase) > cosine(query, other) + 0.2


async def test_minilm_puts_a_word_meaning_the_same_over_its_word_line() -> None:
    # The offline answer's soft word match (services/ask_soft.py): single words' cosines, the
    # words' vectors remembered (a second call embeds only the new word).
    from shared.adapters.embedder.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    line = embedder.word_line
    assert line is not None
    [[cycling, invoice, plane]] = await embedder.word_similarities(
        ["bike"], ["cycling", "invoice", "plane"]
    )
    assert cycling >= line > invoice and plane < line
    assert embedder.words.embedded == 4
    [[flight]] = await embedder.word_similarities(["plane"], ["flight"])
    assert flight >= line and embedder.words.embedded == 5


# A few examples a group: the classifier's index of them builds in a second (its own, 763
# examples, takes a minute on a busy machine and is not what this test is about).
SMALL_EXAMPLES = {
    "People": ["Sam is moving to Berlin", "Ana's birthday is on the 3rd", "call mum sunday"],
    "Projects": ["heron launch moved to the 5th", "finish the grant draft", "kitchen: tiles next"],
    "Ideas": ["podcast about repair cafes?", "what if the app had a map", "a bike library"],
    "Admin": ["pay the council tax", "book the dentist", "renew the passport"],
    "misunderstood": ["asdf qwer", "um so yeah", "thank you for watching"],
    "vague": ["the thing with Rob", "that idea", "Lucy"],
}


async def test_minilm_shares_the_classifiers_model_and_its_vector(tmp_path: Path) -> None:
    from shared.adapters.classifier.offline import OfflineClassifier
    from shared.adapters.embedder.minilm import MiniLMEmbedder
    from shared.adapters.encoders.minilm import get_encoder

    examples = tmp_path / "examples.json"
    examples.write_text(json.dumps(SMALL_EXAMPLES))
    text = "remember to oil the bike chain before the commute on monday"
    encoder = get_encoder()
    await OfflineClassifier(examples, encoder="minilm").classify(text)
    calls: list[list[str]] = []
    forward = encoder.encode

    def counted(texts: list[str]):  # type: ignore[no-untyped-def]
        calls.append(texts)
        return forward(texts)

    encoder.encode = counted  # type: ignore[method-assign]
    try:
        [vector] = await MiniLMEmbedder().embed([text])
        [fresh] = await MiniLMEmbedder().embed([text + " and the brakes"])
    finally:
        del encoder.encode  # the class's method again
    assert calls == [[text + " and the brakes"]]  # the classifier's vector reused: no pass
    assert get_encoder() is encoder
    assert [round(x, 6) for x in forward([text])[0].tolist()] == vector
    assert cosine(vector, fresh) > 0.8


async def test_the_classifier_and_the_embedder_at_once_make_one_pass(tmp_path: Path) -> None:
    """As filing asks them, side by side for the same words: one forward pass between them,
    whichever starts first."""
    import asyncio

    from shared.adapters.classifier.offline import OfflineClassifier
    from shared.adapters.embedder.minilm import MiniLMEmbedder
    from shared.adapters.encoders.minilm import get_encoder

    examples = tmp_path / "examples.json"
    examples.write_text(json.dumps(SMALL_EXAMPLES))
    classifier, embedder = OfflineClassifier(examples, encoder="minilm"), MiniLMEmbedder()
    await classifier.classify("warm the index up")
    encoder = get_encoder()
    calls: list[list[str]] = []
    forward = encoder.encode

    def counted(texts: list[str]):  # type: ignore[no-untyped-def]
        calls.append(texts)
        return forward(texts)

    encoder.encode = counted  # type: ignore[method-assign]
    try:
        for n in range(5):
            text = f"book the bike service before the long ride number {n}"
            guess, [vector] = await asyncio.gather(
                classifier.classify(text), embedder.embed([text])
            )
            assert guess.title and len(vector) == 384
    finally:
        del encoder.encode
    assert len(calls) == 5  # one pass a capture, not two


# -- Azure OpenAI, against the scripted server -----------------------------------------------


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


@asynccontextmanager
async def azure_embedder(fake: FakeOpenAI, dimensions: int = 8) -> AsyncIterator[OpenAIEmbedder]:
    client = fake.openai_client(azure=True, timeout_s=1.0)
    try:
        yield OpenAIEmbedder(client, "text-embedding-3-small", dimensions)
    finally:
        await client.close()


async def test_openai_embeds_on_the_deployment_at_its_dimension(fake: FakeOpenAI) -> None:
    async with azure_embedder(fake) as embedder:
        vectors = await embedder.embed(["bike commute", "cycling to work"])
        assert await embedder.embed([]) == []
    [request] = fake.requests
    assert request.path == "/openai/deployments/text-embedding-3-small/embeddings"
    assert request.json is not None
    assert request.json["input"] == ["bike commute", "cycling to work"]
    assert request.json["dimensions"] == 8
    assert [len(v) for v in vectors] == [8, 8]
    expected = word_vector("bike commute", 8)
    assert vectors[0] == [round(x, 6) for x in expected]


async def test_openai_compares_words_in_one_call_and_remembers_them(fake: FakeOpenAI) -> None:
    async with azure_embedder(fake) as embedder:
        rows = await embedder.word_similarities(["bike"], ["bike", "cycling"])
        await embedder.word_similarities(["bike"], ["cycling"])
    # Its words are not matched by the offline answer (no line measured for this model).
    assert embedder.word_line is None
    [request] = fake.requests
    assert request.json is not None and request.json["input"] == ["bike", "cycling"]
    assert rows[0][0] == pytest.approx(1.0, abs=1e-5)
    assert rows[0][1] == pytest.approx(
        cosine(word_vector("bike", 8), word_vector("cycling", 8)), abs=1e-5
    )


async def test_openai_answers_are_read_in_their_index_order_and_made_unit(
    fake: FakeOpenAI,
) -> None:
    body = {
        "object": "list",
        "model": "m",
        "usage": {"prompt_tokens": 2, "total_tokens": 2},
        "data": [
            {"object": "embedding", "index": 1, "embedding": [0.0, 2.0]},
            {"object": "embedding", "index": 0, "embedding": [3.0, 4.0]},
        ],
    }
    fake.enqueue(raw(body), kind=EMBED)
    async with azure_embedder(fake, 2) as embedder:
        first, second = await embedder.embed(["a", "b"])
    assert first == [0.6, 0.8] and second == [0.0, 1.0]


async def test_openai_dense_answers_are_unit_length_to_six_decimals(fake: FakeOpenAI) -> None:
    # A real model's vector: every float non-zero, and (from a compatible server) not unit.
    raw_vector = [math.sin(i * 0.7) * 3.0 + 0.01 for i in range(512)]
    fake.enqueue(embeddings([raw_vector]), kind=EMBED)
    async with azure_embedder(fake, 512) as embedder:
        [vector] = await embedder.embed(["a"])
    norm = math.sqrt(sum(x * x for x in raw_vector))
    # float32 on the wire (base64), then six decimals: the values within a millionth.
    assert all(abs(x - y / norm) <= 1.5e-6 for x, y in zip(vector, raw_vector, strict=True))
    assert all(x == round(x, 6) for x in vector)
    assert abs(math.sqrt(sum(x * x for x in vector)) - 1.0) < 1e-4


@pytest.mark.parametrize(
    "step",
    [
        http_error(429, retry_after_ms=10),
        http_error(500),
        http_error(401),
        raw_text("<html>bad gateway</html>", status=502),
        raw({"object": "list", "data": "nope"}),
        raw({"object": "list", "data": []}),
        embeddings([[1.0, 0.0, 0.0]]),  # not the dimension asked
        embeddings([[0.0] * 8, [0.0] * 8]),  # a zero vector
        delay(3.0),
    ],
    ids=["429", "500", "401", "html", "not-a-list", "none", "wrong-size", "zero", "timeout"],
)
async def test_openai_faults_are_embedder_unavailable(fake: FakeOpenAI, step) -> None:  # type: ignore[no-untyped-def]
    fake.enqueue(step, kind=EMBED)
    async with azure_embedder(fake) as embedder:
        with pytest.raises(EmbedderUnavailable):
            await embedder.embed(["bike commute", "cycling"])
