"""Queue worker throughput: captures queued in advance, one devhost draining them with a model
that answers in a fixed 300 ms; captures per second and the host's peak memory."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from azure.storage.queue import QueueClient

from bench.measure import cpu_s
from bench.text import capture_texts
from testkit.support import DevhostProcess, clear_queue


async def _prefill(count: int) -> None:
    """`count` stored captures, each with its job on captures-classify, as runs whose model
    was down would leave them."""
    from shared.bootstrap import adapters, reset
    from shared.domain.capture import InboxItem
    from shared.services.worker import queue_for_worker

    app, texts = adapters(), capture_texts()

    async def one() -> None:
        capture_id = str(uuid.uuid4())
        item = InboxItem(
            id=capture_id,
            user_id="dev",
            source="text",
            text=next(texts),
            thread_id=f"bench-{capture_id}",
            run_id=capture_id,
        )
        stored, _ = await app.repo.add(item)
        await queue_for_worker(stored, app)

    for start in range(0, count, 25):
        await asyncio.gather(*(one() for _ in range(min(25, count - start))))
    await reset()


def drain(
    start_host: Callable[[], AbstractContextManager[DevhostProcess]],
    storage: str,
    count: int,
    emulator_pids: Sequence[int] = (),
) -> dict:
    """Drain `count` queued captures; with `emulator_pids`, also the CPU each side spent a
    capture (the devhost's one core against the emulators', which share the machine)."""
    for queue in ("captures-classify", "captures-outcomes"):
        clear_queue(storage, queue)
    asyncio.run(_prefill(count))
    outcomes = QueueClient.from_connection_string(storage, "captures-outcomes")
    with start_host() as host:
        ready = time.perf_counter()
        host_cpu, emulator_cpu = cpu_s(host.pid), cpu_s(*emulator_pids)
        first = None
        while True:
            done = outcomes.get_queue_properties().approximate_message_count or 0
            now = time.perf_counter()
            if done and first is None:
                first = now
            if done >= count:
                break
            if now - ready > 600:
                raise RuntimeError(f"only {done} of {count} captures filed in 10 minutes")
            time.sleep(0.05)
        peak_kib = _peak_rss_kib(host.pid)
        host_cpu = cpu_s(host.pid) - host_cpu
        emulator_cpu = cpu_s(*emulator_pids) - emulator_cpu
    assert first is not None  # set when the first capture was filed
    result = {
        "captures": count,
        "per_s_from_ready": round(count / (now - ready), 1),
        "per_s_steady": round((count - 1) / (now - first), 1),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "devhost_cpu_ms_per_capture": round(host_cpu * 1000 / count, 2),
    }
    if emulator_pids:
        result["emulators_cpu_ms_per_capture"] = round(emulator_cpu * 1000 / count, 2)
    return result


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc status")
