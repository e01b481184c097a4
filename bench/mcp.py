"""`python -m bench mcp`: what a tool call over MCP costs beyond the same use case's HTTP route,
through a real devhost (the MCP extension's webhook served by the `mcp` SDK's streamable HTTP
server, the tool function invoked as the host would) over one user's seeded captures.

Two pairs, each the same use case for the same user with the same arguments: `search` (the
`search` tool against `GET /api/search?q=`) and `list_bucket` (the tool against `GET
/api/buckets/{bucket}?limit=20`). Per run, REQUESTS calls of each door, interleaved (HTTP,
MCP, HTTP, ...) so that drift on a shared machine falls on both alike, on one keep-alive HTTP
client and one initialized MCP client session; p50/p95 of each, and the overhead (MCP minus
HTTP). The figures are the median of `--repeat` runs; the load average is recorded with them."""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import time
from typing import Any

import httpx

from bench.measure import percentiles
from bench.recall import _WORDS, _seed
from bench.stack import Stack
from testkit.mcp_client import mcp_client
from testkit.support import KEY

CAPTURES = 1_000
REQUESTS = 100


def run(s: Stack, repeat: int) -> dict:
    print(f"seeding {CAPTURES} captures ...", file=sys.stderr, flush=True)
    asyncio.run(_seed(CAPTURES))
    only_http = {
        "AzureWebJobs.push_worker.Disabled": "true",
        "AzureWebJobs.classify_worker.Disabled": "true",
    }
    runs = []
    with s.devhost("mcp", scripted=True, **only_http) as host:
        for n in range(repeat):
            runs.append(asyncio.run(_one_run(host.base_url, seed=n)))
            print(f"run {n + 1}/{repeat}: {_line(runs[-1])}", file=sys.stderr, flush=True)
    return {
        "captures": CAPTURES,
        "requests_each": REQUESTS,
        "runs": repeat,
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        **{pair: _median(runs, pair) for pair in ("search", "list_bucket")},
        "each_run": runs,
    }


async def _one_run(base_url: str, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    words = [rng.choice(_WORDS) for _ in range(REQUESTS)]
    buckets = [rng.choice(("people", "projects", "ideas", "admin")) for _ in range(REQUESTS)]
    async with (
        httpx.AsyncClient(base_url=base_url, headers=KEY, timeout=60) as http,
        mcp_client(base_url, KEY) as mcp,
    ):
        # First calls load the app's modules and open the Cosmos client: not what is timed.
        (await http.get("/api/search", params={"q": "budget"})).raise_for_status()
        await mcp.call_tool("search", {"query": "budget"})
        pairs = {
            "search": (
                [lambda w=w: http.get("/api/search", params={"q": w}) for w in words],
                [lambda w=w: mcp.call_tool("search", {"query": w}) for w in words],
            ),
            "list_bucket": (
                [lambda b=b: http.get(f"/api/buckets/{b}?limit=20") for b in buckets],
                [lambda b=b: mcp.call_tool("list_bucket", {"bucket": b}) for b in buckets],
            ),
        }
        result: dict[str, Any] = {"load_average": [round(v, 2) for v in os.getloadavg()]}
        for pair, (over_http, over_mcp) in pairs.items():
            http_s: list[float] = []
            mcp_s: list[float] = []
            for a, b in zip(over_http, over_mcp, strict=True):
                http_s.append(await _timed(a))
                mcp_s.append(await _timed(b))
            h, m = percentiles(http_s), percentiles(mcp_s)
            result[pair] = {
                "http_ms": h,
                "mcp_ms": m,
                "overhead_p50_ms": round(m["p50"] - h["p50"], 2),
                "overhead_p95_ms": round(m["p95"] - h["p95"], 2),
            }
    return result


async def _timed(call: Any) -> float:
    start = time.perf_counter()
    answer = await call()
    elapsed = time.perf_counter() - start
    if isinstance(answer, httpx.Response):
        answer.raise_for_status()
    elif answer.is_error:  # a tool error is a failed call, not a fast one
        raise RuntimeError(f"tool error: {answer.content}")
    return elapsed


def _median(runs: list[dict], pair: str) -> dict[str, float]:
    def med(door: str, p: str) -> float:
        return round(statistics.median(r[pair][door][p] for r in runs), 2)

    figures = {
        f"{door}_{p}_ms": med(f"{door}_ms", p) for door in ("http", "mcp") for p in ("p50", "p95")
    }
    figures["overhead_p50_ms"] = round(figures["mcp_p50_ms"] - figures["http_p50_ms"], 2)
    figures["overhead_p95_ms"] = round(figures["mcp_p95_ms"] - figures["http_p95_ms"], 2)
    return figures


def _line(run: dict) -> str:
    return ", ".join(
        f"{pair} http p50 {run[pair]['http_ms']['p50']} ms, mcp p50 {run[pair]['mcp_ms']['p50']} ms"
        for pair in ("search", "list_bucket")
    )
