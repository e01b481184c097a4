"""`python -m bench.long_voice [--hours 2]`: what a long voice note costs the host. A silent
WebM as the app records it (no duration in its headers) is uploaded the way the phone does,
through the offline models, and the host's resident memory (its process tree, sampled every
20 ms) and the time from the upload to the run's end are printed, after a short note has
warmed the models up. With MAX_VOICE_SECONDS at its 600 s default the run must end
AUDIO_TOO_LONG; before decoding was bounded the whole file was transcribed."""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time

import httpx
import psutil

from bench.measure import timed_run
from bench.stack import stack
from bench.voice import CLIP
from testkit.audio import silent_webm
from testkit.support import KEY


def _tree_rss_mb(pid: int) -> float:
    root = psutil.Process(pid)
    total = 0
    for process in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += process.memory_info().rss
    return total / 2**20


def _voice_note(base_url: str, data: bytes, content_type: str, pid: int) -> dict:
    with httpx.Client(base_url=base_url, timeout=600) as client:
        upload = client.post(
            "/api/voice-notes", json={"contentType": content_type}, headers=KEY
        ).json()
        ended: dict = {}

        def follow() -> None:
            ended["run"] = timed_run(client, "GET", upload["eventsUrl"], headers=KEY)
            ended["at"] = time.perf_counter()

        feed = threading.Thread(target=follow)
        feed.start()
        time.sleep(0.2)  # the feed is open before the upload, as the app does it
        before = peak = _tree_rss_mb(pid)
        start = time.perf_counter()
        put = httpx.put(upload["uploadUrl"], content=data, headers=upload["uploadHeaders"])
        put.raise_for_status()
        while feed.is_alive():
            peak = max(peak, _tree_rss_mb(pid))
            feed.join(timeout=0.02)
        result = ended["run"].result
        return {
            "bytes": len(data),
            "seconds": round(ended["at"] - start, 2),
            "rss_before_mb": round(before),
            "rss_peak_mb": round(peak),
            "end": result.get("code") or result.get("outcome") or result,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.long_voice", description=__doc__)
    parser.add_argument("--hours", type=float, default=2.0)
    args = parser.parse_args(argv)
    long_note = silent_webm(args.hours * 3600)
    with stack() as s, s.devhost("long-voice", scripted=False) as host:
        pid = host.pid
        warm = _voice_note(host.base_url, CLIP.read_bytes(), "audio/mp4", pid)
        long = _voice_note(host.base_url, long_note, "audio/webm", pid)
    print(json.dumps({"warm_up": warm, f"webm_{args.hours:g}h": long}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
