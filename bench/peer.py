"""`python -m bench peer`: our devhost beside Microsoft Agent Framework's AG-UI FastAPI endpoint
(bench/peer_app.py, one uvicorn worker, in .venv-peer), the same client and the same scripted
model streaming its answer after 300 ms: first byte, time over the model in turn and 50 at once,
server CPU per capture and RSS, and our figure over the peer's for each (issue 32)."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil

from bench.measure import RunTiming, cpu_s, percentiles
from bench.stack import Stack
from bench.text import capture, capture_texts
from devhost.emulators import REPO, free_port
from testkit.fake_openai import classification

PEER_VENV = REPO / ".venv-peer"
PEER_REQUIREMENTS = REPO / "requirements-peer.txt"
MODEL_DELAY_S = 0.3
IN_TURN = 100
AT_ONCE = 50


def peer_python() -> Path:
    """The peer's interpreter, its venv made and requirements-peer.txt installed on first use."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    probe = [str(python), "-c", "import agent_framework_ag_ui, agent_framework_openai, uvicorn"]
    if subprocess.run(probe, capture_output=True).returncode != 0:
        install = ["-m", "pip", "install", "-q", "-r", str(PEER_REQUIREMENTS)]
        subprocess.run([str(python), *install], check=True)
    return python


@contextmanager
def peer_server(model_base_url: str, log: Path) -> Iterator[tuple[str, int]]:
    """The peer app on a free loopback port: (its base URL, its pid)."""
    port = free_port()
    cmd = [str(peer_python()), "-m", "uvicorn", "--factory", "bench.peer_app:create_app"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--log-level", "warning"]
    env = {**os.environ, "PEER_MODEL_BASE_URL": model_base_url}
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the peer exited early:\n{log.read_text()[-3000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the peer did not start listening in time")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _rss_mib(pid: int) -> float:
    root = psutil.Process(pid)
    rss = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
    return round(rss / 2**20, 1)


def measure(base_url: str, pid: int, warm_up: int = 10) -> dict:
    """The same client for both servers: `warm_up` runs, IN_TURN in turn, AT_ONCE at once."""
    texts = capture_texts()
    runs = 0
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for _ in range(warm_up):
            capture(client, next(texts))
        runs += warm_up
        before = cpu_s(pid)
        in_turn = [capture(client, next(texts)) for _ in range(IN_TURN)]
        cpu_ms = (cpu_s(pid) - before) * 1000 / IN_TURN
        runs += IN_TURN
    at_once = _at_once(base_url, [next(texts) for _ in range(AT_ONCE)])
    runs += AT_ONCE
    # More runs in turn, so the RSS is taken after as many as the (310).
    with httpx.Client(base_url=base_url, timeout=120) as client:
        while runs < 310:
            capture(client, next(texts))
            runs += 1
    over = [t.outcome_s - MODEL_DELAY_S for t in in_turn]
    return {
        "first_byte_ms": percentiles([t.first_byte_s for t in in_turn]),
        "over_model_in_turn_ms": percentiles(over),
        "cpu_per_capture_ms": round(cpu_ms, 2),
        "at_once_end_ms": percentiles([t.outcome_s for t in at_once]),
        "rss_mib": _rss_mib(pid),
        "runs": runs,
    }


def _at_once(base_url: str, texts: list[str]) -> list[RunTiming]:
    gate = threading.Barrier(len(texts))
    limits = httpx.Limits(max_connections=len(texts), max_keepalive_connections=len(texts))
    with httpx.Client(base_url=base_url, timeout=120, limits=limits) as client:

        def one(text: str) -> RunTiming:
            gate.wait()
            return capture(client, text)

        with ThreadPoolExecutor(max_workers=len(texts)) as pool:
            return list(pool.map(one, texts))


def run(s: Stack, repeat: int) -> dict:
    """Both servers side by side, `repeat` rounds, each round ours then the peer's."""
    s.model.set_default(classification(delay_s=MODEL_DELAY_S))
    rounds: list[dict] = []
    for number in range(1, repeat + 1):
        print(f"round {number} of {repeat} ...", file=sys.stderr, flush=True)
        with s.devhost(f"peer-ours-{number}", scripted=True) as host:
            ours = measure(host.base_url, host.pid)
        with peer_server(s.model.base_url, s.workdir / f"peer-{number}.log") as (url, pid):
            peer = measure(url, pid)
        rounds.append({"ours": ours, "peer": peer})
    return {"rounds": rounds, "ratios": ratios(rounds)}


FIGURES: tuple[tuple[str, Callable[[dict], float]], ...] = (
    ("first SSE byte p50", lambda f: f["first_byte_ms"]["p50"]),
    ("first SSE byte p95", lambda f: f["first_byte_ms"]["p95"]),
    ("time over the model, in turn, p50", lambda f: f["over_model_in_turn_ms"]["p50"]),
    ("time over the model, in turn, p95", lambda f: f["over_model_in_turn_ms"]["p95"]),
    ("server CPU per capture", lambda f: f["cpu_per_capture_ms"]),
    ("50 at once, end of stream, p50", lambda f: f["at_once_end_ms"]["p50"]),
    ("50 at once, end of stream, p95", lambda f: f["at_once_end_ms"]["p95"]),
    ("RSS after the runs (MiB)", lambda f: f["rss_mib"]),
)


def ratios(rounds: list[dict]) -> dict[str, list[float]]:
    """Per figure: ours, the peer's (each the median of the rounds), ours / the peer's."""
    out = {}
    for name, get in FIGURES:
        ours = statistics.median(get(r["ours"]) for r in rounds)
        peer = statistics.median(get(r["peer"]) for r in rounds)
        out[name] = [ours, peer, round(ours / peer, 2) if peer else float("inf")]
    return out


def table(summary: dict) -> str:
    lines = ["| measure | ours | Agent Framework | ours / peer |", "|---|---|---|---|"]
    for name, (ours, peer, ratio) in summary["ratios"].items():
        lines.append(f"| {name} | {ours} | {peer} | {ratio} |")
    return "\n".join(lines)
