"""`python -m bench embedding`: what a text capture's vector costs on its own path with the Azure
path's embedder (OpenAI-compatible: the scripted server), in this process: the embeddings call
(the request, the SDK's parse, made unit length) and the inbox save by the vector's length,
against the local Cosmos server. Asked beside the classifier, the call is inside the model's
wait; the save, after it, is the vector's only share of a capture's time over the model."""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import time

from bench.stack import Stack
from testkit.fake_openai import EMBED, embeddings

DIMENSIONS = (512, 1536)
SAVED_LENGTHS = (0, 512, 1536)
CALLS = 500
SAVES = 400
WARM_UP = 50
TEXT = "call Priya about the kitchen tiles before Thursday"


def _dense(n: int, rng: random.Random) -> list[float]:
    """A model's vector: every float non-zero, unit length, six decimals."""
    v = [rng.gauss(0, 1) for _ in range(n)]
    norm = math.hypot(*v)
    return [round(x / norm, 6) for x in v]


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


async def _calls(s: Stack, dimensions: int, rng: random.Random) -> dict:
    """The embeddings call's CPU in this thread (the scripted server answers from its own) and
    wall time, a call, median of CALLS."""
    from shared.adapters.embedder.openai_embeddings import OpenAIEmbedder

    s.model.set_default(embeddings([_dense(dimensions, rng)]), kind=EMBED)
    client = s.model.openai_client(azure=True, timeout_s=10.0)
    try:
        embedder = OpenAIEmbedder(client, "text-embedding-3-small", dimensions)
        cpu, wall = [], []
        for i in range(WARM_UP + CALLS):
            t, c = time.perf_counter(), time.thread_time()
            await embedder.embed([TEXT])
            if i >= WARM_UP:
                cpu.append(time.thread_time() - c)
                wall.append(time.perf_counter() - t)
    finally:
        await client.close()
    return {"cpu_ms": _ms(cpu), "wall_ms": _ms(wall)}


async def _saves(rng: random.Random) -> dict:
    """The inbox save (CosmosCaptureRepository.save, ETag-guarded) of one capture carrying no
    vector or one of each length, the lengths taken in turn: CPU in this thread and wall time
    (the local server's parse and answer included), a save, median of SAVES."""
    from shared import bootstrap
    from shared.adapters.repository import CosmosCaptureRepository
    from shared.domain.capture import InboxItem

    repo = CosmosCaptureRepository(bootstrap.root().clients.cosmos_database())
    items = {}
    for n in SAVED_LENGTHS:
        item = InboxItem(
            id=f"bench-embedding-{n}",
            user_id="bench-embedding",
            source="text",
            text=TEXT,
            thread_id="bench",
            run_id=f"bench-embedding-{n}",
        )
        stored, _ = await repo.add(item)
        items[n] = stored.embedded(_dense(n, rng), "bench") if n else stored
    cpu: dict[int, list[float]] = {n: [] for n in SAVED_LENGTHS}
    wall: dict[int, list[float]] = {n: [] for n in SAVED_LENGTHS}
    for i in range(WARM_UP + SAVES):
        for n in SAVED_LENGTHS:
            t, c = time.perf_counter(), time.thread_time()
            saved = await repo.save(items[n])
            if i >= WARM_UP:
                cpu[n].append(time.thread_time() - c)
                wall[n].append(time.perf_counter() - t)
            items[n] = items[n].model_copy(update={"etag": saved.etag})
    await bootstrap.reset()
    return {str(n): {"cpu_ms": _ms(cpu[n]), "wall_ms": _ms(wall[n])} for n in SAVED_LENGTHS}


def run(s: Stack, repeat: int) -> dict:
    """Each measure `repeat` times; the median of the runs."""
    rng = random.Random(42)
    runs = []
    for _ in range(repeat):
        run: dict = {f"call_{d}": asyncio.run(_calls(s, d, rng)) for d in DIMENSIONS}
        run["save"] = asyncio.run(_saves(rng))
        runs.append(run)
    out: dict = {}
    for key in runs[0]:
        if key == "save":
            out[key] = {
                n: {m: statistics.median(r[key][n][m] for r in runs) for m in ("cpu_ms", "wall_ms")}
                for n in runs[0][key]
            }
        else:
            out[key] = {
                m: statistics.median(r[key][m] for r in runs) for m in ("cpu_ms", "wall_ms")
            }
    # The vector's own share of a capture's CPU: the call, and the save's over one with none.
    none = out["save"]["0"]
    for d in DIMENSIONS:
        share = out["save"][str(d)]
        out[f"per_capture_{d}"] = {
            "cpu_ms": round(out[f"call_{d}"]["cpu_ms"] + share["cpu_ms"] - none["cpu_ms"], 3),
            "over_the_model_ms": round(share["wall_ms"] - none["wall_ms"], 3),
        }
    return {**out, "runs": runs}
