"""Cold start we control: `import function_app` against importing every SDK it uses, each in a
fresh interpreter, alternating, in the same run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.measure import median
from devhost.emulators import REPO

# The Functions programming model itself: every Python app that streams HTTP imports these.
FRAMEWORK = ["azure.functions", "azurefunctions.extensions.http.fastapi"]
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


def _import_seconds(modules: list[str], deployed: Path | None = None) -> float:
    """Seconds to import `modules` in a fresh interpreter; with `deployed`, from that folder of
    installed requirements alone (no site-packages: `-S`), as an instance would find them."""
    code = (
        "import time; t = time.perf_counter(); "
        + "; ".join(f"import {m}" for m in modules)
        + "; print(time.perf_counter() - t)"
    )
    command, env = [sys.executable, "-c", code], None
    if deployed is not None:
        command.insert(1, "-S")
        env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{deployed}"}
    out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True, env=env)
    return float(out.stdout.strip())


def cold_start(runs: int) -> dict:
    """Medians over `runs` fresh interpreters of each set, taken in turn so drift hits all."""
    sets = {
        "function_app": ["function_app"],
        "framework": FRAMEWORK,
        "sdks": SDKS,
        "framework_and_sdks": FRAMEWORK + SDKS,
        "framework_sdks_and_telemetry": FRAMEWORK + SDKS + TELEMETRY,
    }
    seconds: dict[str, list[float]] = {name: [] for name in sets}
    for _ in range(runs):
        for name, modules in sets.items():
            seconds[name].append(_import_seconds(modules))
    ms = {name: round(median(v) * 1000, 1) for name, v in seconds.items()}
    app = ms["function_app"]
    return {
        "runs": runs,
        "import_ms": ms,
        # The bar's ratio, against every SDK the app uses (the Functions framework included),
        # and, stricter, against the data and model SDKs alone.
        "ratio_all_sdks": round(app / ms["framework_and_sdks"], 2),
        "ratio_all_sdks_and_telemetry": round(app / ms["framework_sdks_and_telemetry"], 2),
        "ratio_data_sdks_only": round(app / ms["sdks"], 2),
    }


def package(runs: int = 5) -> dict:
    """What a deployment ships, as the remote build would install it: requirements.txt into a
    fresh target folder, compiled to .pyc as pip does by default (its size and file count),
    beside the app's own files; and the import time of function_app from that folder alone,
    the first thing a cold instance pays for (the first import, which finds no .pyc for the
    app's own modules, is left out of the median)."""
    with tempfile.TemporaryDirectory(prefix="bench-package-") as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
                tmp,
                "-r",
                str(REPO / "requirements.txt"),
            ],
            check=True,
        )
        sizes: dict[str, int] = {}
        files = 0
        for f in Path(tmp).rglob("*"):
            if f.is_file():
                top = f.relative_to(tmp).parts[0]
                sizes[top] = sizes.get(top, 0) + f.stat().st_size
                files += 1
        seconds = [_import_seconds(["function_app"], Path(tmp)) for _ in range(runs + 1)][1:]
        # Zipped, as the deployment package carries them (with the app) to a new instance.
        archive = Path(shutil.make_archive(tmp, "zip", tmp))  # beside the folder, not in it
        zipped = archive.stat().st_size
        archive.unlink()
    app = [f for f in (REPO / "shared").rglob("*.py")] + [REPO / "function_app.py"]
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:8]
    return {
        "dependencies_mib": round(sum(sizes.values()) / 2**20, 1),
        "dependency_files": files,
        "largest_mib": {name: round(size / 2**20, 1) for name, size in largest},
        "zip_mib": round(zipped / 2**20, 1),
        "app_kib": round(sum(f.stat().st_size for f in app) / 1024, 1),
        "import_function_app_ms": round(median(seconds) * 1000, 1),
        "import_runs": runs,
    }
