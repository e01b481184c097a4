"""`python -m bench.profile_run [--worker] [OUT]`: py-spy on a devhost while 100 text captures
run in turn against the 300 ms scripted model (issue 32), or with `--worker` while its classify
worker drains 500 queued captures; then the top entries, by own and by total samples.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench import worker
from bench.stack import stack
from bench.text import capture, capture_texts
from testkit.fake_openai import classification

_NO_PUSH = {"AzureWebJobs.push_worker.Disabled": "true"}
_PREFIXES = re.compile(r"\S*/site-packages/|\S*/lib/python3\.\d+/|\S*/h\d+/|/work/main/")


def _spy(pid: int, out: Path) -> subprocess.Popen:
    spy = [sys.prefix + "/bin/py-spy", "record", "--pid", str(pid), "--format", "raw"]
    spy += ["--rate", "200", "--nonblocking", "-o", str(out)]
    return subprocess.Popen(spy, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def record(out: Path, captures: int = 100) -> None:
    with stack() as s:
        s.model.set_default(classification(delay_s=0.3))
        with s.devhost("profile", scripted=True) as host:
            texts = capture_texts()
            with httpx.Client(base_url=host.base_url, timeout=60) as client:
                for _ in range(10):
                    capture(client, next(texts))
                proc = _spy(host.pid, out)
                time.sleep(2)  # py-spy attached
                for _ in range(captures):
                    capture(client, next(texts))
                proc.send_signal(2)
                proc.wait(60)


def record_worker(out: Path, captures: int = 500) -> None:
    with stack() as s:
        s.model.set_default(classification(delay_s=0.3))

        @contextmanager
        def host() -> Iterator:
            with s.devhost("profile-worker", scripted=True, **_NO_PUSH) as started:
                spy = _spy(started.pid, out)
                yield started
                spy.send_signal(2)
                spy.wait(60)

        worker.drain(host, s.settings["AzureWebJobsStorage"], captures)


def top(raw: Path, count: int = 15) -> str:
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in raw.read_text().splitlines():
        stack_text, _, n = line.rpartition(" ")
        frames = [_PREFIXES.sub("", f) for f in stack_text.split(";")]
        samples += int(n)
        own[frames[-1]] += int(n)
        for frame in set(frames):
            total[frame] += int(n)
    lines = [f"{samples} samples", "own:"]
    lines += [f"  {n / samples:6.1%} {f}" for f, n in own.most_common(count)]
    lines.append("total, the app's and the host's code:")
    ours = [(f, n) for f, n in total.most_common() if "(shared/" in f or "(devhost/" in f]
    lines += [f"  {n / samples:6.1%} {f}" for f, n in ours[:count]]
    return "\n".join(lines)


if __name__ == "__main__":
    paths = [a for a in sys.argv[1:] if a != "--worker"]
    target = Path(paths[0] if paths else "bench/results/profile.raw")
    target.parent.mkdir(exist_ok=True)
    if "--worker" in sys.argv:
        record_worker(target)
    else:
        record(target)
    print(top(target))
