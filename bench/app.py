"""The capture app (web/): the JavaScript it ships, gzipped, and the time from opening it to
the first outcome on screen, in headless Chromium against the devhost (tests/browser/drive.mjs,
scenario `timing`)."""

from __future__ import annotations

import gzip
import uuid

import httpx

from bench.measure import median
from testkit import webapp
from testkit.support import KEY, run_input

CPU_SLOWDOWN = 4  # a mid-range phone, as Lighthouse's mobile profile takes it


def js_shipped() -> dict:
    """Bytes of every script web/dist serves, raw and gzipped (level 9, as a static host's
    precompressed files would be)."""
    sizes = {}
    for name in ("app.js", "sw.js"):
        data = (webapp.DIST / name).read_bytes()
        sizes[name] = {"bytes": len(data), "gzip_bytes": len(gzip.compress(data, 9, mtime=0))}
    total = sum(s["gzip_bytes"] for s in sizes.values())
    return {"files": sizes, "gzip_bytes": total}


def open_to_outcome(api_url: str, app_origin: str, runs: int) -> dict:
    """`runs` fresh browsers (nothing cached), each opening the app set up, sending a capture,
    then reopening it (shell from the service worker) and sending another; medians in ms. The
    same again with the CPU slowed down. The first run of each is dropped (warm-up)."""
    chromium = webapp.find_chromium()
    if chromium is None:
        raise RuntimeError(webapp.NO_CHROMIUM)
    env = {
        "APP_URL": f"{app_origin}/",
        "API_URL": f"{api_url}/api",
        "API_KEY": KEY["X-API-Key"],
        "CHROMIUM": chromium,
        "AUDIO": str(webapp.SPEECH),
        "STEP_TIMEOUT_MS": "60000",
    }
    # The offline models load on the first capture: not the app's time.
    with httpx.Client(base_url=api_url, timeout=120) as client:
        body = run_input("Call Sarah about the budget review", thread_id=f"bench-{uuid.uuid4()}")
        client.post("/api/capture", json=body, headers=KEY).raise_for_status()
    result: dict = {"runs": runs}
    for label, slowdown in (("", None), (f"cpu_{CPU_SLOWDOWN}x_", CPU_SLOWDOWN)):
        extra = {"CPU_SLOWDOWN": str(slowdown)} if slowdown else {}
        seen = [webapp.drive("timing", {**env, **extra}) for _ in range(runs + 1)][1:]
        for visit in ("cold", "warm"):
            for mark in ("readyMs", "outcomeMs"):
                key = f"{label}{visit}_{'ready' if mark == 'readyMs' else 'outcome'}_ms"
                result[key] = round(median([s[visit][mark] for s in seen]), 1)
    return result
