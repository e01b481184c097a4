"""The benchmarks' stack stops what it started when the benchmark is killed (SIGTERM), as it
does when it ends: no emulator outlives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HOLD = """
import json, time
from bench.stack import stack
with stack() as s:
    print(json.dumps(s.emulator_pids), flush=True)
    time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_killed_benchmark_stops_its_emulators() -> None:
    bench = subprocess.Popen(
        [sys.executable, "-c", HOLD], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert bench.stdout is not None
        pids = json.loads(bench.stdout.readline())
        assert pids and all(_alive(p) for p in pids)
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=60) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 30
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)  # reaped by their own parents' exit
        assert not [p for p in pids if _alive(p)]
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
