"""`python -m bench.search_profile [--requests N]`: where a hybrid search's and a related list's
milliseconds go, in this process over the local Cosmos server with `bench recall`'s 10,000
captures (seeded the same way): the query's embedding (MiniLM), each Cosmos query the search
adapter makes, and the rest (numpy, word matching and ranking, shaping the answer), as the
recall bench's distinct queries ask them. p50 / p95 of each part, and of the whole use case."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

from bench import recall
from bench.measure import percentiles
from bench.stack import stack


async def _profile(requests: int) -> dict:
    from shared import bootstrap
    from shared.services import recall as service

    print(f"seeding {recall.CAPTURES} captures ...", file=sys.stderr, flush=True)
    await recall._seed(recall.CAPTURES)
    adapters = bootstrap.adapters()
    search, embedder = adapters.search, adapters.embedder
    held = await _held_bytes(search)
    spent: dict[str, float] = defaultdict(float)

    def timed(name: Callable[..., str], call: Callable[..., Awaitable[Any]]) -> Callable:
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await call(*args, **kwargs)
            finally:
                spent[name(*args, **kwargs)] += time.perf_counter() - start

        return wrapped

    def query_name(container: str, user: str, query: str, parameters: Any) -> str:
        return "cosmos: " + query[:60]

    search._query = timed(query_name, search._query)  # type: ignore[attr-defined]
    embedder.embed = timed(lambda texts: "embed the query (MiniLM)", embedder.embed)  # type: ignore[method-assign]

    rng = random.Random(11)
    words, topics = recall._WORDS, recall._TOPICS
    kinds = {
        "one word": lambda: rng.choice(words),
        "two words": lambda: f"{rng.choice(words)} {rng.choice(words)}",
        "by meaning": lambda: f"{rng.choice(topics)} {rng.choice(words)}",
    }
    # Warm: the model loaded, the stand-in's first full read.
    await service.search(recall.USER, service.SearchQuery(q="warm"), search, embedder)
    await service.related(
        recall.USER, recall.bench_id(1), service.RelatedQuery(), bootstrap.adapters()
    )
    result: dict = {}
    for kind, make in kinds.items():
        parts: dict[str, list[float]] = defaultdict(list)
        for _ in range(requests):
            spent.clear()
            start = time.perf_counter()
            await service.search(recall.USER, service.SearchQuery(q=make()), search, embedder)
            whole = time.perf_counter() - start
            parts["whole"].append(whole)
            for name, seconds in spent.items():
                parts[name].append(seconds)
            parts["the rest (numpy, words, shaping)"].append(whole - sum(spent.values()))
        result[f"search, {kind}"] = {k: percentiles(v) for k, v in parts.items()}
    parts = defaultdict(list)
    for _ in range(requests):
        spent.clear()
        capture = recall.bench_id(rng.randrange(recall.CAPTURES))
        start = time.perf_counter()
        await service.related(recall.USER, capture, service.RelatedQuery(), adapters)
        whole = time.perf_counter() - start
        parts["whole"].append(whole)
        for name, seconds in spent.items():
            parts[name].append(seconds)
        parts["the rest (numpy, shaping; the capture's point read)"].append(
            whole - sum(spent.values())
        )
    result["related"] = {k: percentiles(v) for k, v in parts.items()}
    result["held by the stand-in"] = held
    await bootstrap.reset()
    return result


async def _held_bytes(search: Any) -> dict:
    """What the stand-in holds for the user (Python's own count of the bytes still allocated
    after its first full read, the read's JSON freed), and how long that first read took."""
    import gc
    import tracemalloc

    from shared.adapters.search import LocalHybridSearch

    if not isinstance(search, LocalHybridSearch):
        return {}
    fresh = LocalHybridSearch(search._db, rank_words=search._rank_words)
    start = time.perf_counter()
    await fresh._current(recall.USER)
    first_read_s = time.perf_counter() - start
    fresh = LocalHybridSearch(search._db, rank_words=search._rank_words)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    await fresh._current(recall.USER)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    captures = fresh._users[recall.USER].count()
    return {
        "captures": captures,
        "mib": round(held / 2**20, 1),
        "bytes_per_capture": round(held / captures),
        "first_read_s": round(first_read_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.search_profile")
    parser.add_argument("--requests", type=int, default=60, help="searches of each kind")
    args = parser.parse_args(argv)
    with stack():
        print(json.dumps(asyncio.run(_profile(args.requests)), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
