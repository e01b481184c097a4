"""Open streams on one worker process, as one Flex Consumption instance runs them: text
captures against a model that answers in 300 ms or in 2 s, and idle events feeds, N at a time;
first byte and outcome at each N, and the process's CPU and peak memory."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import httpx

from bench.cosmos_count import cosmos_requests
from bench.measure import async_timed_run, percentiles
from bench.text import capture_texts
from testkit.support import KEY, run_input

LEVELS = (1, 8, 16, 32, 64, 128)
# A level whose outcome p95 is this many times the one at N = 1 is the last one taken.
EXPLODED = 10.0
# How long N idle feeds are held open: past the feed's fast first seconds, into its back-off.
FEED_HOLD_S = 15.0


class ProcessMeter:
    """CPU time and peak resident memory of one process over a span, from /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def __enter__(self) -> ProcessMeter:
        # Writing 5 to clear_refs resets the peak (VmHWM) to the present RSS: each span's own.
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")
        self._cpu, self._wall = self._cpu_s(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu_pct = round(
            100 * (self._cpu_s() - self._cpu) / (time.perf_counter() - self._wall), 1
        )
        self.peak_rss_mib = round(self._status_kib("VmHWM") / 1024, 1)

    def _cpu_s(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        # utime and stime (fields 14 and 15 of stat, counted from the pid), every thread's.
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _status_kib(self, key: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        raise RuntimeError(f"no {key} in /proc/{self.pid}/status")


def _client(base_url: str, n: int) -> httpx.AsyncClient:
    # A connection per stream, as many phones would open: a pooled one left idle past the
    # server's keep-alive (5 s) while other streams finish can be closed under a new request.
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=0)
    return httpx.AsyncClient(base_url=base_url, timeout=180, limits=limits)


async def _captures(base_url: str, pid: int, n: int, rounds: int) -> dict:
    """N clients, each sending `rounds` captures back to back, so N streams stay open."""
    texts = capture_texts()
    async with _client(base_url, n) as client:

        async def one_client() -> list:
            timings = []
            for _ in range(rounds):
                body = run_input(next(texts), thread_id=f"bench-{uuid.uuid4()}")
                timings.append(
                    await async_timed_run(client, "POST", "/api/capture", json=body, headers=KEY)
                )
            return timings

        await asyncio.gather(*(one_client() for _ in range(n)))  # connections open, warm
        started = time.perf_counter()
        with ProcessMeter(pid) as meter:
            per_client = await asyncio.gather(*(one_client() for _ in range(n)))
        timings = [t for ts in per_client for t in ts]
        took = time.perf_counter() - started
    return {
        "first_byte_ms": percentiles([t.first_byte_s for t in timings]),
        "outcome_ms": percentiles([t.outcome_s for t in timings]),
        "per_s": round(len(timings) / took, 1),
        "cpu_pct": meter.cpu_pct,
        "peak_rss_mib": meter.peak_rss_mib,
        "errors": sum(t.result.get("type") == "RUN_ERROR" for t in timings),
    }


def text_curve(
    base_url: str, pid: int, rounds: int, levels: tuple[int, ...], *, stop_early: bool
) -> dict[str, dict]:
    """`_captures` at each level; with `stop_early`, none after the first whose outcome p95
    exploded (later runs take the levels the first one reached, so the runs line up)."""
    curve: dict[str, dict] = {}
    for n in levels:
        curve[str(n)] = point = asyncio.run(_captures(base_url, pid, n, rounds))
        base = curve[str(levels[0])]["outcome_ms"]["p95"]
        if stop_early and point["outcome_ms"]["p95"] > EXPLODED * base:
            break
    return curve


async def _idle_feeds(base_url: str, cosmos_endpoint: str, pid: int, n: int) -> dict:
    """N voice notes whose audio never comes, each feed held open FEED_HOLD_S."""
    async with _client(base_url, n) as client:
        notes = [
            (
                await client.post(
                    "/api/voice-notes", json={"contentType": "audio/mp4"}, headers=KEY
                )
            ).json()
            for _ in range(n)
        ]
        first_bytes: list[float] = []

        async def hold(events_url: str) -> None:
            start = time.perf_counter()
            async with client.stream("GET", events_url, headers=KEY) as response:
                response.raise_for_status()
                chunks = response.aiter_raw()
                await anext(chunks)
                first_bytes.append(time.perf_counter() - start)
                try:
                    async with asyncio.timeout(FEED_HOLD_S):
                        async for _ in chunks:
                            pass
                except TimeoutError:
                    return
            raise RuntimeError("an idle feed ended early")

        before = cosmos_requests(cosmos_endpoint)
        with ProcessMeter(pid) as meter:
            await asyncio.gather(*(hold(note["eventsUrl"]) for note in notes))
        reads = cosmos_requests(cosmos_endpoint).get("read", 0) - before.get("read", 0)
    return {
        "first_byte_ms": percentiles(first_bytes),
        "cpu_pct": meter.cpu_pct,
        "peak_rss_mib": meter.peak_rss_mib,
        "cosmos_reads_per_feed": round(reads / n, 1),
        "held_s": FEED_HOLD_S,
    }


def _quiet(cosmos_endpoint: str, timeout_s: float = 120.0) -> None:
    """Until no Cosmos request comes for a second: work the captures before left behind (the
    push worker's outcome messages) would otherwise be counted as the feeds' reads."""
    deadline = time.monotonic() + timeout_s
    last = cosmos_requests(cosmos_endpoint)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = cosmos_requests(cosmos_endpoint)
        if now == last:
            return
        last = now
    raise RuntimeError("the app kept reading Cosmos: no quiet second to count feeds from")


def feed_curve(
    base_url: str, cosmos_endpoint: str, pid: int, levels: tuple[int, ...] = LEVELS
) -> dict[str, dict]:
    curve = {}
    for n in levels:
        _quiet(cosmos_endpoint)
        curve[str(n)] = asyncio.run(_idle_feeds(base_url, cosmos_endpoint, pid, n))
    return curve


def table(summary: dict) -> str:
    """The curves as rows: N, first byte p95, outcome p50/p95, CPU, peak RSS (and reads)."""
    lines = [
        f"{'curve':11} {'N':>4} {'1st byte p95':>13} {'outcome p50/p95':>17} {'CPU %':>6} "
        f"{'RSS MiB':>8} {'per s':>6} {'reads/feed':>10}"
    ]
    for name in ("text_300ms", "text_2s", "idle_feeds"):
        for n, p in summary.get(name, {}).items():
            outcome = p.get("outcome_ms")
            spread = f"{outcome['p50']:.0f}/{outcome['p95']:.0f}" if outcome else "-"
            lines.append(
                f"{name:11} {n:>4} {p['first_byte_ms']['p95']:>13.1f} {spread:>17} "
                f"{p['cpu_pct']:>6.1f} {p['peak_rss_mib']:>8.1f} {p.get('per_s', '-')!s:>6} "
                f"{p.get('cosmos_reads_per_feed', '-')!s:>10}"
            )
    return "\n".join(lines)
