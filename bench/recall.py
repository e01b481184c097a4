"""`python -m bench recall`: one user with 10,000 captures, each with its MiniLM vector (made
in this process, its CPU time measured: the backfill's offline cost), seeded straight through
the repository into the local Cosmos server, then the recall routes timed through a real
devhost with the offline models: a bucket's first and next pages, a person's first and next
pages (20 items, as the app asks), the people list, search (hybrid: words and meaning fused
by RRF, one and two words, and phrases that share no word with the captures) and related
items (p50/p95 over 60 requests each, the median of `--repeat` rounds), and the export
(seconds, size, and the devhost's peak RSS while it streams)."""

from __future__ import annotations

import asyncio
import io
import random
import sys
import time
import uuid
import zipfile
from datetime import timedelta
from pathlib import Path

import httpx

from bench.concurrency import ProcessMeter
from bench.measure import percentiles
from bench.stack import Stack
from testkit.support import KEY

CAPTURES = 10_000
REQUESTS = 60
SEED_CONCURRENCY = 32
USER = "dev"  # the dev key's user (tests/support.KEY)

_NAMES = [
    "Ana", "Ben", "Chen", "Dara", "Elif", "Femi", "Greta", "Hamid", "Ines", "Jonas", "Kemal",
    "Lena", "Marek", "Niamh", "Olu", "Priya", "Quentin", "Rosa", "Sven", "Tomasz", "Uma",
    "Vikram", "Wen", "Ximena", "Yusuf", "Zoë", "Pedro Alves", "Hannah Kowalski", "Leila Haddad",
]  # fmt: skip
_WORDS = [
    "budget", "tiles", "garden", "invoice", "passport", "podcast", "kitchen", "bike", "insurance",
    "newsletter", "recipe", "workshop", "mortgage", "holiday", "dentist", "website", "fence",
    "library", "grant", "wedding", "camera", "laptop", "boiler", "vet", "council", "tax",
]  # fmt: skip
# Searched for by meaning: words the captures never use.
_TOPICS = [
    "cycling", "money owed", "appointment", "trip away", "house repairs", "family news",
    "paperwork", "celebration", "gadgets", "pets", "home loan", "renovation", "lunch plans",
]  # fmt: skip
_TEMPLATES = {
    "People": ["Lunch w/ {name} about the {w1}", "{name}'s {w1} news, ask about the {w2}",
               "call {name} re the {w1} on friday"],
    "Projects": ["{w1} project: ask {name} about the {w2} by the {day}th",
                 "Finish the {w1} plan, then the {w2}"],
    "Ideas": ["What if the {w1} had a {w2}", "Idea from {name}: a {w1} for the {w2}"],
    "Admin": ["Pay the {w1} bill by the {day}th", "Renew the {w1}", "Book the {w1} with {name}"],
}  # fmt: skip


def bench_id(i: int) -> str:
    """The i-th capture's id: a canonical UUID, as every capture id is (the routes refuse
    anything else before reading)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-{i}"))


def run(s: Stack, repeat: int) -> dict:
    print(f"seeding {CAPTURES} captures ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    embedding = asyncio.run(_seed(CAPTURES))
    seeded_s = round(time.perf_counter() - started, 1)
    only_http = {
        "AzureWebJobs.push_worker.Disabled": "true",
        "AzureWebJobs.classify_worker.Disabled": "true",
    }
    result: dict = {
        "captures": CAPTURES,
        "seeding_s": seeded_s,
        "requests_each": REQUESTS,
        "embedding": embedding,
    }
    # The offline models: search embeds its query with MiniLM, as a machine with no model
    # account runs it.
    with s.devhost("recall", scripted=False, **only_http) as host:
        pid = host.proc.pid if host.proc else 0
        with httpx.Client(base_url=host.base_url, headers=KEY, timeout=120) as client:
            _warm(client)
            rounds = [_pages(client, seed) for seed in range(max(1, repeat))]
            result |= _median_rounds(rounds)
            result["rounds"] = len(rounds)
            rss = ProcessMeter(pid)
            before = _rss_mib(pid)
            with rss:
                exports = [_export(client) for _ in range(repeat)]
            result["export"] = {
                "seconds": sorted(e["seconds"] for e in exports)[len(exports) // 2],
                "runs_s": [e["seconds"] for e in exports],
                "zip_mib": exports[0]["zip_mib"],
                "files": exports[0]["files"],
                "devhost_peak_rss_mib": rss.peak_rss_mib,
                "devhost_rss_before_mib": before,
            }
    return result


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS in /proc/{pid}/status")


def _warm(client: httpx.Client) -> None:
    """First calls load the app's modules, the model and the stand-in's vectors, and open the
    Cosmos client: not what is timed."""
    paths = (
        "/api/buckets/admin",
        "/api/people/Ana",
        "/api/search?q=budget",
        "/api/people",
        f"/api/captures/{bench_id(1)}/related",
    )
    for path in paths:
        client.get(path).raise_for_status()


def _median_rounds(rounds: list[dict]) -> dict:
    """Each figure's median over the rounds (p50 and p95 each), and every round's p95."""
    merged: dict = {}
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        merged[key] = {
            stat: sorted(v[stat] for v in values)[len(values) // 2] for stat in values[0]
        }
        merged[key]["p95_rounds"] = [v["p95"] for v in values]
    return merged


def _timed(client: httpx.Client, paths: list[str]) -> dict:
    timings = []
    for path in paths:
        start = time.perf_counter()
        response = client.get(path)
        timings.append(time.perf_counter() - start)
        response.raise_for_status()
    return percentiles(timings)


def _pages(client: httpx.Client, seed: int = 0) -> dict:
    rng = random.Random(7 + seed)
    buckets = ["people", "projects", "ideas", "admin"]
    first = [f"/api/buckets/{buckets[i % 4]}?limit=20" for i in range(REQUESTS)]
    # A page further on: the keyset from the first page's token.
    tokens = {
        b: client.get(f"/api/buckets/{b}?limit=20").json()["continuationToken"] for b in buckets
    }
    nxt = [
        f"/api/buckets/{buckets[i % 4]}?limit=20&continuationToken={tokens[buckets[i % 4]]}"
        for i in range(REQUESTS)
    ]
    filtered = [
        f"/api/buckets/admin?limit=20&done=false&person={rng.choice(_NAMES)}"
        for _ in range(REQUESTS)
    ]
    people = [f"/api/people/{rng.choice(_NAMES).lower()}" for _ in range(REQUESTS)]
    # A person's second page: the keyset from their first page's token.
    person_tokens = {
        n: client.get(f"/api/people/{n.lower()}").json()["continuationToken"] for n in _NAMES
    }
    people_next = [
        f"/api/people/{n.lower()}?continuationToken={person_tokens[n]}"
        for n in (rng.choice(_NAMES) for _ in range(REQUESTS))
    ]
    search = [f"/api/search?q={rng.choice(_WORDS)}" for _ in range(REQUESTS)]
    two_words = [
        f"/api/search?q={rng.choice(_WORDS)}%20{rng.choice(_WORDS)}" for _ in range(REQUESTS)
    ]
    meaning = [
        f"/api/search?q={rng.choice(_TOPICS)}%20{rng.choice(_WORDS)}" for _ in range(REQUESTS)
    ]
    related = [
        f"/api/captures/{bench_id(rng.randrange(CAPTURES))}/related" for _ in range(REQUESTS)
    ]
    return {
        "bucket_first_page_ms": _timed(client, first),
        "bucket_next_page_ms": _timed(client, nxt),
        "bucket_person_filter_ms": _timed(client, filtered),
        "person_page_ms": _timed(client, people),
        "person_next_page_ms": _timed(client, people_next),
        "people_list_ms": _timed(client, ["/api/people"] * REQUESTS),
        "search_one_word_ms": _timed(client, search),
        "search_two_words_ms": _timed(client, two_words),
        "search_by_meaning_ms": _timed(client, meaning),
        "related_ms": _timed(client, related),
    }


def _export(client: httpx.Client) -> dict:
    start = time.perf_counter()
    size, body = 0, io.BytesIO()
    with client.stream("GET", "/api/export") as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            size += len(chunk)
            body.write(chunk)
    seconds = round(time.perf_counter() - start, 2)
    files = len(zipfile.ZipFile(body).namelist())
    return {"seconds": seconds, "zip_mib": round(size / 2**20, 2), "files": files}


async def _seed(n: int) -> dict:
    """`n` captures of one user, filed in all four buckets over the past year, each with its
    MiniLM vector, written through the app's own repository and filing code (inbox item and
    filed item, as filing writes). What embedding them cost: CPU seconds in this process
    (the backfill's offline cost), per capture and per 10,000."""
    from shared import bootstrap
    from shared.adapters.embedder.minilm import MiniLMEmbedder
    from shared.adapters.repository import CosmosCaptureRepository
    from shared.domain.capture import InboxItem
    from shared.domain.classification import Bucket, Classification
    from shared.domain.documents import utcnow
    from shared.services.embedding import embed_all
    from shared.services.placement import filed_item_for

    repo = CosmosCaptureRepository(bootstrap.root().clients.cosmos_database())
    rng = random.Random(2026)
    now = utcnow()
    gate = asyncio.Semaphore(SEED_CONCURRENCY)

    def made(i: int) -> InboxItem:
        bucket = Bucket(rng.choice(list(_TEMPLATES)))
        text = rng.choice(_TEMPLATES[bucket.value]).format(
            name=rng.choice(_NAMES),
            w1=rng.choice(_WORDS),
            w2=rng.choice(_WORDS),
            day=rng.randint(4, 28),
        )
        item = InboxItem(
            id=bench_id(i),
            user_id=USER,
            source="voice" if i % 5 == 0 else "text",
            text=text,
            thread_id=f"t{i}",
            run_id=f"r{i}",
            created_at=now - timedelta(minutes=i * 50),
        )
        return item.classified(Classification(bucket=bucket, confidence=0.9, title=text[:40]))

    items = [made(i) for i in range(n)]
    embedder = MiniLMEmbedder()
    await embedder.embed(["warm the model up"])  # loading it is not embedding
    cpu, wall = time.process_time(), time.perf_counter()
    embedded = await embed_all(items, embedder)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall

    async def one(settled: InboxItem) -> None:
        async with gate:
            await repo.put_filed(filed_item_for(settled))
            await repo.add(settled)

    await asyncio.gather(*(one(i) for i in embedded))
    await bootstrap.reset()
    return {
        "captures": len(embedded),
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "cpu_ms_per_capture": round(cpu * 1000 / len(embedded), 2),
        "cpu_s_per_10000": round(cpu * 10_000 / len(embedded), 1),
    }
