"""`python -m bench ask`: the ask agent's quality on a question set, and its speed.

Quality (`--set bench/data/ask_questions.jsonl`, `--corpus bench/data/ask_corpus.jsonl`): the
corpus is stored in the local Cosmos server as the pipeline files it (each capture's inbox item
settled by a classification carrying the corpus's bucket, title, people and due date, and the
filed item `placement.filed_item_for` makes of it: the same documents filing writes, without
asking a model to guess the bucket), then each question is asked offline through the use case
(`services/ask.ask` over the app's own Cosmos adapters and search), and scored per part
(tuning, frozen): every expected capture cited (`all_cited`), at least one cited
(`one_cited`), every fact in the answer (`facts`), nothing cited where nothing answers
(`nothing_clean`).

Speed (`--speed`): one user with 10,000 captures (bench/recall.py's seeding), a devhost with the
offline models: `GET /api/ask` p50/p95 over 60 questions, and, over POST /api/ask runs, the time
from the last TOOL_CALL_RESULT to the first TEXT_MESSAGE_CONTENT as the client reads them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
QUESTIONS = DATA / "ask_questions.jsonl"
CORPUS = DATA / "ask_corpus.jsonl"
# The parts no tuning may read: their misses are never looked at, only their aggregates
# (ASK_SETS.md says which set was written when and promoted when).
HELD_OUT = frozenset(
    {
        "frozen",
        "frozen3",
        "frozen13",
        "frozen14",
        "frozen15",
        "frozen16",
        "frozen20",
        "frozen21",
        "frozen22",
        "frozen23",
        "frozen24",
        "frozen25",
        "frozen26",
        "frozen27",
    }
)
# The tuning parts, oldest first, each one life: (part, questions file, corpus file). The
# measuring tools in bench/tools take the first four, six or all of them.
TUNING_SETS = [
    ("tuning", "ask_questions.jsonl", "ask_corpus.jsonl"),
    *(
        (f"tuning{n}", f"ask{n}_questions.jsonl", f"ask{n}_corpus.jsonl")
        for n in (2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 17, 18, 19)
    ),
]
FIGURES = ("all_cited", "one_cited", "facts", "nothing_clean")


def mean_figures(scored: dict[str, dict[str, Any]], parts: tuple[str, ...]) -> dict[str, float]:
    """Each figure's mean over `parts`, and the four figures' mean."""
    out = {f: round(sum(scored[p][f] for p in parts) / len(parts), 3) for f in FIGURES}
    out["overall"] = round(sum(out[f] for f in FIGURES) / len(FIGURES), 3)
    return out


# The corpus's day 0, and when its questions are asked (the evening after its last day).
START = datetime(2026, 11, 2, 9, tzinfo=UTC)
ASKED_AT = datetime(2026, 11, 30, 18, tzinfo=UTC)
USER = "bench-ask"


def capture_id(row_id: str, user: str = USER) -> str:
    """A corpus row's capture id: a UUID, as the app makes them (get_capture reads no other)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{user}/{row_id}"))


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# The embedders `--embedder` chooses among: (the one a question is embedded by, the one a stored
# capture is). e5 reads a prefix ("query: " on a question, "passage: " on a stored text, or
# "query: " on both for symmetric tasks); its floor (min_similarity) is set from the tuning
# sets' spread as MiniLM's 0.3 sits there: about 1.45 standard deviations over the mean cosine
# of a question to a capture (MiniLM 0.13 + 1.45 x 0.12; e5 0.79 + 1.45 x 0.032, 0.787 + 1.45
# x 0.030: bench/tools/ask_encoders.py).
EMBEDDERS = ("minilm", "e5-qp", "e5-qq")


class E5Embedder:
    """multilingual-e5-small as an `Embedder` for this bench (not the app's: it did not win,
    bench/data/ASK_SETS.md), `prefix` put on every text it is given."""

    model = "multilingual-e5-small"
    dimensions = 384

    def __init__(self, encoder: Any, prefix: str, min_similarity: float) -> None:
        self.encoder, self.prefix, self.min_similarity = encoder, prefix, min_similarity

    async def embed(self, texts: list[str]) -> list[list[float]]:
        from shared.adapters.embedder.minilm import DECIMALS

        vectors = await asyncio.to_thread(
            self.encoder.encode, [self.prefix + text for text in texts]
        )
        return [[round(x, DECIMALS) for x in row] for row in vectors.tolist()]


def embedders(name: str, floor: float | None = None) -> tuple[Any, Any]:
    """(question embedder, stored-text embedder) for `name`."""
    from shared.adapters.embedder.minilm import MiniLMEmbedder
    from shared.adapters.encoders.multilingual_e5 import PASSAGE, QUERY, MultilingualE5Encoder

    if name == "minilm":
        minilm = MiniLMEmbedder()
        if floor is not None:
            minilm.min_similarity = floor
        return minilm, minilm
    least = floor if floor is not None else (0.84 if name == "e5-qp" else 0.83)
    encoder = _e5_encoder(MultilingualE5Encoder)
    query = E5Embedder(encoder, QUERY, least)
    return query, (E5Embedder(encoder, PASSAGE, least) if name == "e5-qp" else query)


_E5: list[Any] = []


def _e5_encoder(make: Any) -> Any:
    """One e5 encoder per process (about 150 MB), adding no prefix of its own."""
    if not _E5:
        _E5.append(make(prefix=""))
    return _E5[0]


def use_embedder(embedder: Any) -> None:
    """The root's adapters with `embedder` for the questions (the bench's choice)."""
    from dataclasses import replace

    from shared import bootstrap

    root = bootstrap.root()
    root.__dict__["adapters"] = replace(root.adapters, embedder=embedder)


async def seed(corpus: list[dict[str, Any]], user: str = USER, embedder: Any = None) -> None:
    """The corpus as filing stores it, in the local Cosmos server (vectors by `embedder`, or
    the root's)."""
    from datetime import date

    from shared import bootstrap
    from shared.domain.capture import InboxItem
    from shared.domain.classification import Bucket, Classification
    from shared.services.embedding import with_embedding
    from shared.services.placement import filed_item_for

    adapters = bootstrap.root().adapters
    repo = adapters.repo
    for n, row in enumerate(corpus):
        item = InboxItem(
            id=capture_id(row["id"], user),
            user_id=user,
            source="text",
            text=row["text"],
            thread_id=f"t-{row['id']}",
            run_id=f"r-{row['id']}",
            created_at=START + timedelta(days=row["day"], minutes=n),
        )
        guess = Classification(
            bucket=Bucket(row["bucket"]),
            confidence=0.9,
            title=row["title"],
            people=row.get("people") or [],
            due_date=date.fromisoformat(row["due"]) if row.get("due") else None,
        )
        # With its vector, as filing writes it (the offline MiniLM's, or `embedder`'s).
        settled = await with_embedding(item.classified(guess), embedder or adapters.embedder)
        await repo.put_filed(filed_item_for(settled))
        await repo.add(settled)


async def ask_all(
    questions: list[dict[str, Any]], corpus: list[dict[str, Any]], user: str = USER
) -> list[dict[str, Any]]:
    from shared import bootstrap
    from shared.services.ask import AskLimits, answer_of, ask, new_question

    adapters = bootstrap.root().adapters
    row_of = {capture_id(row["id"], user): row["id"] for row in corpus}
    out = []
    for q in questions:
        earlier = []
        for before in q.get("earlier") or []:
            earlier.append(("user", before))
            said = await answer_of(ask(user, new_question(before), ASKED_AT, AskLimits(), adapters))
            earlier.append(("assistant", said.answer.answer))
        question = new_question(q["question"], earlier)
        done = await answer_of(ask(user, question, ASKED_AT, AskLimits(), adapters))
        cited = [row_of.get(c.capture_id, c.capture_id) for c in done.answer.citations]
        out.append({**q, "answer": done.answer.answer, "cited": cited})
    return out


def score(answered: list[dict[str, Any]]) -> dict[str, Any]:
    """The four figures over one part's questions."""
    finding = [a for a in answered if not a["nothing"]]
    nothing = [a for a in answered if a["nothing"]]

    def share(hits: list[bool]) -> float | None:
        return round(sum(hits) / len(hits), 3) if hits else None

    folded = [(a, a["answer"].casefold()) for a in finding]
    return {
        "questions": len(answered),
        "all_cited": share([set(a["cite"]) <= set(a["cited"]) for a in finding]),
        "one_cited": share([bool(set(a["cite"]) & set(a["cited"])) for a in finding]),
        "facts": share([all(f.casefold() in text for f in a["facts"]) for a, text in folded]),
        "nothing_clean": share([not a["cited"] for a in nothing]),
        "misses": [
            {"id": a["id"], "cited": a["cited"], "answer": a["answer"][:300]}
            for a in answered
            if (a["nothing"] and a["cited"])
            or (
                not a["nothing"]
                and (
                    not set(a["cite"]) <= set(a["cited"])
                    or not all(f.casefold() in a["answer"].casefold() for f in a["facts"])
                )
            )
        ],
    }


def quality(
    questions_path: Path,
    corpus_path: Path,
    parts: list[str],
    embedder: str = "minilm",
    floor: float | None = None,
) -> dict[str, Any]:
    from shared import bootstrap

    questions = load(questions_path)
    corpus = load(corpus_path)
    asking, storing = embedders(embedder, floor)

    async def go() -> list[dict[str, Any]]:
        try:
            use_embedder(asking)
            await seed(corpus, embedder=storing)
            return await ask_all([q for q in questions if q["part"] in parts], corpus)
        finally:
            await bootstrap.reset()

    answered = asyncio.run(go())
    return {part: score([a for a in answered if a["part"] == part]) for part in parts}


# -- tokens on the model path ------------------------------------------------------------------

# What an answer of two or three sentences with its ids takes.
ANSWER_TOKENS = 90


def tokens(questions_path: Path) -> dict[str, Any]:
    """Prompt and completion tokens per question on the model path, estimated (the app's own
    estimator: prose at 4 characters a token, JSON at 3, the larger of that and 4/3 a word) for
    the loop a question most often takes: one turn that calls search with the question's
    words, its real answer over the corpus, one turn that answers. The loop's bound (4 turns,
    12,000 tokens) caps the rest."""
    from shared import bootstrap
    from shared.adapters.ask_model import PROMPT, wire_tool
    from shared.adapters.classifier.openai_chat import _estimate_tokens
    from shared.services.ask import new_question, tool_specs
    from shared.services.ask_words import read_question
    from shared.services.tools import SEARCH_TOOL

    questions = load(questions_path)
    tools_json = json.dumps([wire_tool(t) for t in tool_specs()])

    async def go() -> list[int]:
        adapters = bootstrap.root().adapters
        totals = []
        for q in questions:
            asked = read_question(new_question(q["question"]))
            query = " ".join(asked.words)[:200] or q["question"][:200]
            found = await SEARCH_TOOL.call(USER, {"query": query, "limit": 20}, adapters)
            result = json.dumps(found.to_json(), ensure_ascii=False)
            first = (
                _estimate_tokens(PROMPT, chars_per_token=4)
                + _estimate_tokens(tools_json, chars_per_token=3)
                + _estimate_tokens(q["question"], chars_per_token=4)
                + 3 * 4
            )
            call = 30  # the assistant's tool call
            second = first + call + _estimate_tokens(result, chars_per_token=3) + 4
            totals.append(first + call + second + ANSWER_TOKENS)
        await bootstrap.reset()
        return totals

    totals = sorted(asyncio.run(go()))
    return {
        "questions": len(totals),
        "two_turn_tokens_median": totals[len(totals) // 2],
        "two_turn_tokens_max": totals[-1],
        "bound_tokens": 12000,
    }


# -- speed -----------------------------------------------------------------------------------

SPEED_QUESTIONS = [
    "who is doing the {w} now?",
    "what did {n} say about the {w}?",
    "when is the {w} due?",
    "how many times did I mention the {w}?",
    "what's the latest on the {w}?",
    "do I owe {n} money?",
]


def speed(s: Any, requests: int = 60) -> dict[str, Any]:
    import httpx

    from bench import recall
    from bench.measure import percentiles
    from testkit.support import KEY

    print(f"seeding {recall.CAPTURES} captures with vectors ...", file=sys.stderr, flush=True)
    started = time.perf_counter()
    asyncio.run(_seed_embedded(recall.CAPTURES))
    seeded_s = round(time.perf_counter() - started, 1)
    rng = random.Random(42)
    asked = [
        rng.choice(SPEED_QUESTIONS).format(w=rng.choice(recall._WORDS), n=rng.choice(recall._NAMES))
        for _ in range(requests)
    ]
    only_http = {
        "AzureWebJobs.push_worker.Disabled": "true",
        "AzureWebJobs.classify_worker.Disabled": "true",
    }
    with (
        s.devhost("ask", scripted=False, **only_http) as host,
        httpx.Client(base_url=host.base_url, headers=KEY, timeout=120) as client,
    ):
        for q in asked[:5]:  # the first calls load the app's modules and open Cosmos
            client.get("/api/ask", params={"q": q}).raise_for_status()
        timings, cited = [], []
        for q in asked:
            start = time.perf_counter()
            response = client.get("/api/ask", params={"q": q})
            timings.append(time.perf_counter() - start)
            response.raise_for_status()
            cited.append(len(response.json()["citations"]))
        gaps = [_first_token_gap(client, q) for q in asked[:30]]
    return {
        "captures": recall.CAPTURES,
        "seeding_s": seeded_s,
        "requests": requests,
        "get_ask_ms": percentiles(timings),
        "citations_median": sorted(cited)[len(cited) // 2],
        "first_token_after_last_tool_ms": percentiles([g for g in gaps if g is not None]),
    }


async def _seed_embedded(n: int) -> None:
    """bench/recall.py's 10,000 captures of one user, each inbox item with its vector as
    filing writes it (the offline MiniLM's, embedded a page of 256 at a time)."""
    from bench import recall
    from shared import bootstrap
    from shared.domain.capture import InboxItem
    from shared.domain.classification import Bucket, Classification
    from shared.domain.documents import utcnow
    from shared.services.embedding import embed_all
    from shared.services.placement import filed_item_for

    adapters = bootstrap.root().adapters
    rng = random.Random(2026)
    now = utcnow()
    gate = asyncio.Semaphore(recall.SEED_CONCURRENCY)
    settled = []
    for i in range(n):
        bucket = Bucket(rng.choice(list(recall._TEMPLATES)))
        text = rng.choice(recall._TEMPLATES[bucket.value]).format(
            name=rng.choice(recall._NAMES),
            w1=rng.choice(recall._WORDS),
            w2=rng.choice(recall._WORDS),
            day=rng.randint(4, 28),
        )
        item = InboxItem(
            id=f"bench-{i:05d}",
            user_id=recall.USER,
            source="text",
            text=text,
            thread_id=f"t{i}",
            run_id=f"r{i}",
            created_at=now - timedelta(minutes=i * 50),
        )
        guess = Classification(bucket=bucket, confidence=0.9, title=text[:40])
        settled.append(item.classified(guess))

    async def one(item: Any) -> None:
        async with gate:
            await adapters.repo.put_filed(filed_item_for(item))
            await adapters.repo.add(item)

    for at in range(0, n, 256):
        page = await embed_all(settled[at : at + 256], adapters.embedder)
        await asyncio.gather(*(one(item) for item in page))
    await bootstrap.reset()


def _first_token_gap(client: Any, question: str) -> float | None:
    """Seconds between the last TOOL_CALL_RESULT and the first TEXT_MESSAGE_CONTENT, as read."""
    body = {
        "threadId": "bench",
        "runId": f"r-{time.monotonic_ns()}",
        "messages": [{"id": "m1", "role": "user", "content": question}],
    }
    last_tool = first_text = None
    with client.stream("POST", "/api/ask", json=body) as response:
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            kind = json.loads(line[6:])["type"]
            if kind == "TOOL_CALL_RESULT":
                last_tool = time.perf_counter()
            elif kind == "TEXT_MESSAGE_CONTENT" and first_text is None:
                first_text = time.perf_counter()
    if last_tool is None or first_text is None:
        return None
    return first_text - last_tool


def main(argv: list[str]) -> int:
    from bench.measure import machine
    from bench.stack import stack

    parser = argparse.ArgumentParser(prog="python -m bench ask", description=__doc__)
    parser.add_argument("--set", type=Path, default=QUESTIONS, help="the questions (JSONL)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the captures (JSONL)")
    parser.add_argument(
        "--part", action="append", help="tuning and/or frozen (default: both)", default=None
    )
    parser.add_argument("--speed", action="store_true", help="also 10,000 captures' speed")
    parser.add_argument(
        "--embedder", choices=EMBEDDERS, default="minilm", help="for the quality figures"
    )
    parser.add_argument("--floor", type=float, help="the embedder's min_similarity (measuring)")
    parser.add_argument(
        "--no-tokens", action="store_true", help="skip the model path's token estimate"
    )
    args = parser.parse_args(argv)
    parts = args.part or ["tuning", "frozen"]
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "command": "python -m bench ask " + " ".join(argv),
    }
    with stack() as s:
        report["quality"] = quality(args.set, args.corpus, parts, args.embedder, args.floor)
        if not args.no_tokens:
            report["model_path_tokens"] = tokens(args.set)
        if args.speed:
            report["speed"] = speed(s)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0
