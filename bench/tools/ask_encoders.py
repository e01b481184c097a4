"""`python -m bench.tools.ask_encoders`: the ask sets' retrieval by vector alone, per encoder.

For each question of the tuning parts (never `frozen` nor `ask3_*`), the corpus's captures are
ranked by the cosine of their vector (of `InboxItem.embedding_text()`, as filing stores it) to
the question's (a follow-up's: its own plus half its earlier question's, as services/ask.py
weighs a follow-up's meaning), and the expected captures' recall@1/@3/@5 is counted (the share
of expected captures among the first k, averaged over questions). A question with nothing to
find reports its best cosine as a z-score against its own cosines over the corpus
((best - mean) / std): the encoders' cosines sit in different ranges (e5's unrelated pairs
near 0.8, MiniLM's near 0.1), the z-scores compare. The expected captures' z-scores are given
beside them: the wider the gap, the better a floor separates "nothing here" from an answer.

Encoders: all-MiniLM-L6-v2 (the shipped embedder), multilingual-e5-small with "query: " on the
question and "passage: " on the capture (`e5-qp`, retrieval as e5 was trained for it), and
"query: " on both (`e5-qq`, e5's advice for symmetric tasks).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np

from bench.ask import DATA, HELD_OUT, TUNING_SETS, load

# The tuning parts only: the held-out ones (`frozen` of ask_questions.jsonl, all of ask3_*)
# are run by the lead, once.
SETS = TUNING_SETS[:4]
KS = (1, 3, 5)
# A follow-up's earlier question's weight in its meaning (services/ask.CARRIED_MEANING).
CARRIED = 0.5


def stored_text(row: dict[str, Any]) -> str:
    """What filing embeds for a corpus row (InboxItem.embedding_text)."""
    from shared.domain.retrieval import embedding_text

    return embedding_text(row["text"])


class Encoders:
    """name -> (encode questions, encode captures)."""

    def __init__(self) -> None:
        from shared.adapters.encoders.minilm import get_encoder
        from shared.adapters.encoders.multilingual_e5 import (
            PASSAGE,
            QUERY,
            MultilingualE5Encoder,
        )

        minilm = get_encoder()
        e5_query = MultilingualE5Encoder(prefix=QUERY)
        e5_passage = MultilingualE5Encoder(prefix=PASSAGE)
        self.by_name = {
            "minilm": (minilm.encode, minilm.encode),
            "e5-qp": (e5_query.encode, e5_passage.encode),
            "e5-qq": (e5_query.encode, e5_query.encode),
        }


def question_vectors(encode: Any, questions: list[dict[str, Any]]) -> np.ndarray:
    own = encode([q["question"] for q in questions])
    earlier = [(i, q["earlier"][-1]) for i, q in enumerate(questions) if q.get("earlier")]
    if earlier:
        before = encode([text for _, text in earlier])
        for (i, _), vector in zip(earlier, before, strict=True):
            own[i] = own[i] + CARRIED * vector
    return own / np.linalg.norm(own, axis=1, keepdims=True)


def measure(
    part: str, questions: list[dict[str, Any]], corpus: list[dict[str, Any]], enc: Any
) -> dict[str, Any]:
    encode_q, encode_c = enc
    ids = [row["id"] for row in corpus]
    caps = encode_c([stored_text(row) for row in corpus])
    qs = question_vectors(encode_q, questions)
    sims = qs @ caps.T
    recall: dict[int, list[float]] = {k: [] for k in KS}  # per question
    expected_z: list[float] = []
    nothing_z: list[float] = []
    misses: list[dict[str, Any]] = []
    for q, row in zip(questions, sims, strict=True):
        mean, std = float(row.mean()), float(row.std()) or 1.0
        order = [ids[i] for i in np.argsort(-row)]
        if q["nothing"]:
            nothing_z.append((float(row.max()) - mean) / std)
            continue
        want = set(q["cite"])
        for k in KS:
            recall[k].append(len(want & set(order[:k])) / len(want))
        for c in want:
            expected_z.append((float(row[ids.index(c)]) - mean) / std)
        if not want & set(order[:5]):
            misses.append({"id": q["id"], "question": q["question"], "top": order[:3]})
    return {
        "part": part,
        "questions": len(questions),
        **{f"recall@{k}": round(statistics.mean(v), 3) for k, v in recall.items()},
        "expected_z_median": round(statistics.median(expected_z), 2),
        "expected_z_p10": round(float(np.percentile(expected_z, 10)), 2),
        "nothing_best_z_median": round(statistics.median(nothing_z), 2),
        "nothing_best_z_max": round(max(nothing_z), 2),
        "corpus_cosine_mean": round(float(sims.mean()), 3),
        "corpus_cosine_std": round(float(sims.std()), 3),
        "missed_at_5": misses,
        "_raw": (recall, expected_z, nothing_z),
    }


def pooled(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The sets' questions together."""
    recall: dict[int, list[float]] = {k: [] for k in KS}
    expected_z: list[float] = []
    nothing_z: list[float] = []
    for r in results:
        per_k, e, n = r["_raw"]
        for k in KS:
            recall[k] += per_k[k]
        expected_z += e
        nothing_z += n
    return {
        "questions": sum(r["questions"] for r in results),
        **{f"recall@{k}": round(statistics.mean(v), 3) for k, v in recall.items()},
        "expected_z_median": round(statistics.median(expected_z), 2),
        "expected_z_p10": round(float(np.percentile(expected_z, 10)), 2),
        "nothing_best_z_median": round(statistics.median(nothing_z), 2),
        "nothing_best_z_max": round(max(nothing_z), 2),
    }


def cpu_per_embed(encoders: Encoders, texts: list[str]) -> dict[str, float]:
    """CPU ms per single text embedded (one at a time, one BLAS thread), median over `texts`."""
    out = {}
    for name, (_, encode_c) in encoders.by_name.items():
        encode_c(texts[:3])  # warm
        times = []
        for text in texts:
            start = time.process_time()
            encode_c([text])
            times.append(time.process_time() - start)
        out[name] = round(statistics.median(times) * 1000, 1)
    return out


def ask_figures(names: list[str], floor: float | None) -> dict[str, Any]:
    """`python -m bench ask`'s four figures per tuning part, per embedder, in one stack (each
    set and embedder its own user: bench/ask.py's seeding and asking, the embedder chosen as
    its --embedder chooses it)."""
    import asyncio

    from bench import ask
    from bench.stack import stack

    out: dict[str, Any] = {}
    with stack():
        for name in names:
            asking, storing = ask.embedders(name, floor)
            together: list[dict[str, Any]] = []
            for part, questions_file, corpus_file in SETS:
                assert part not in HELD_OUT
                questions = [q for q in load(DATA / questions_file) if q["part"] == part]
                corpus = load(DATA / corpus_file)
                user = f"bench-ask-{name}-{part}"
                answered = asyncio.run(_asked(questions, corpus, user, asking, storing))
                together += answered
                out.setdefault(part, {})[name] = ask.score(answered)
            out.setdefault("together", {})[name] = ask.score(together)
    return out


async def _asked(
    questions: list[dict[str, Any]],
    corpus: list[dict[str, Any]],
    user: str,
    asking: Any,
    storing: Any,
) -> list[dict[str, Any]]:
    from bench import ask
    from shared import bootstrap

    try:
        ask.use_embedder(asking)
        await ask.seed(corpus, user, embedder=storing)
        return await ask.ask_all(questions, corpus, user)
    finally:
        await bootstrap.reset()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tools.ask_encoders", description=__doc__)
    parser.add_argument("--cpu", action="store_true", help="also CPU per embed (one thread)")
    parser.add_argument("--misses", action="store_true", help="list the questions missed at 5")
    parser.add_argument(
        "--ask", nargs="+", metavar="EMBEDDER", help="bench ask's figures with these embedders"
    )
    parser.add_argument("--floor", type=float, help="with --ask: the embedders' min_similarity")
    args = parser.parse_args(argv)
    if args.ask:
        figures = ask_figures(args.ask, args.floor)
        if not args.misses:
            for by_name in figures.values():
                for scored in by_name.values():
                    scored.pop("misses")
        print(json.dumps(figures, indent=1, ensure_ascii=False))
        return 0
    encoders = Encoders()
    report: dict[str, Any] = {"sets": {}}
    texts: list[str] = []
    for part, questions_file, corpus_file in SETS:
        assert part not in HELD_OUT
        questions = [q for q in load(DATA / questions_file) if q["part"] == part]
        corpus = load(DATA / corpus_file)
        texts += [stored_text(row) for row in corpus]
        for name, enc in encoders.by_name.items():
            result = measure(part, questions, corpus, enc)
            report["sets"].setdefault(part, {})[name] = result
    for name in encoders.by_name:
        results = [report["sets"][part][name] for part, _, _ in SETS]
        report["sets"].setdefault("together", {})[name] = pooled(results)
        for result in results:
            result.pop("_raw")
            if not args.misses:
                result.pop("missed_at_5")
    if args.cpu:
        report["cpu_ms_per_embed_median"] = cpu_per_embed(encoders, texts[::4])
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
