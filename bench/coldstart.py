"""Cold start we control: `import function_app` against importing every SDK it uses, each in a
fresh interpreter, alternating, in the same run."""

from __future__ import annotations

import subprocess
import sys

from bench.measure import median
from devhost.emulators import REPO

# What the app reaches Azure with; the app loads them lazily, on first use.
SDKS = [
    "azure.cosmos.aio",
    "azure.storage.blob.aio",
    "azure.storage.queue.aio",
    "azure.identity.aio",
    "openai",
]
# Loaded on the first invocation when Application Insights is configured.
TELEMETRY = ["azure.monitor.opentelemetry"]


def _import_seconds(modules: list[str]) -> float:
    code = (
        "import time; t = time.perf_counter(); "
        + "; ".join(f"import {m}" for m in modules)
        + "; print(time.perf_counter() - t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip())


def cold_start(runs: int) -> dict:
    app, sdks, with_telemetry = [], [], []
    for _ in range(runs):
        app.append(_import_seconds(["function_app"]))
        sdks.append(_import_seconds(SDKS))
        with_telemetry.append(_import_seconds(SDKS + TELEMETRY))
    app_ms, sdk_ms, tel_ms = (round(median(v) * 1000, 1) for v in (app, sdks, with_telemetry))
    return {
        "runs": runs,
        "import_function_app_ms": app_ms,
        "import_sdks_ms": sdk_ms,
        "ratio": round(app_ms / sdk_ms, 2),
        "import_sdks_and_telemetry_ms": tel_ms,
        "ratio_with_telemetry": round(app_ms / tel_ms, 2),
    }
