"""Timing one streamed run from the client's side, and summarising many timings."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil


def cpu_s(*pids: int) -> float:
    """User + system CPU seconds of some processes and any children they run."""
    total = 0.0
    for pid in pids:
        root = psutil.Process(pid)
        for proc in [root, *root.children(recursive=True)]:
            try:
                times = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
    return total


@dataclass
class RunTiming:
    first_byte_s: float
    outcome_s: float
    result: dict  # RUN_FINISHED's result (or RUN_ERROR's fields)


def timed_run(client: httpx.Client, method: str, path: str, **kwargs) -> RunTiming:
    """Send a request answered by an SSE run: time to its first body byte, and to its last
    event (RUN_FINISHED or RUN_ERROR)."""
    start = time.perf_counter()
    first = None
    raw = b""
    with client.stream(method, path, **kwargs) as response:
        response.raise_for_status()
        for chunk in response.iter_raw():
            if first is None:
                first = time.perf_counter() - start
            raw += chunk
    return _ended(raw, first, time.perf_counter() - start)


async def async_timed_run(client: httpx.AsyncClient, method: str, path: str, **kwargs) -> RunTiming:
    """`timed_run` for many runs at once from one event loop."""
    start = time.perf_counter()
    first = None
    raw = b""
    async with client.stream(method, path, **kwargs) as response:
        response.raise_for_status()
        async for chunk in response.aiter_raw():
            if first is None:
                first = time.perf_counter() - start
            raw += chunk
    return _ended(raw, first, time.perf_counter() - start)


def _ended(raw: bytes, first: float | None, outcome: float) -> RunTiming:
    last = json.loads(raw.decode().strip().rsplit("data: ", 1)[1])
    if last["type"] not in ("RUN_FINISHED", "RUN_ERROR"):
        raise RuntimeError(f"the run ended with {last['type']}")
    return RunTiming(first or outcome, outcome, last.get("result") or last)


def percentiles(values: list[float], scale: float = 1000.0) -> dict[str, float]:
    """p50/p95/p99/max (and n), in milliseconds by default."""
    ordered = sorted(values)

    def at(p: float) -> float:
        # Nearest rank: the smallest value with at least p% of the values at or below it.
        index = max(0, min(len(ordered) - 1, int(-(-p * len(ordered) // 100)) - 1))
        return round(ordered[index] * scale, 2)

    return {
        "n": len(ordered),
        "p50": at(50),
        "p95": at(95),
        "p99": at(99),
        "max": round(ordered[-1] * scale, 2),
    }


def median(values: list[float]) -> float:
    return statistics.median(values)


def machine() -> dict:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cpu": _cpu_model(),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()
