"""What the benchmarks run against: the emulators on free ports, provisioned, the scripted
model server, and devhost processes serving the app, as `make dev` would but isolated."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from devhost.emulators import REPO, Emulators, Ports
from testkit.fake_openai import FakeOpenAI
from testkit.support import DEV_KEYS, DevhostProcess


@dataclass
class Stack:
    settings: dict[str, str]
    model: FakeOpenAI
    workdir: Path
    ports: Ports  # the emulators', for a bench that puts a tap in front of one
    emulator_pids: list[int]  # for a bench that counts the emulators' CPU

    @contextmanager
    def database(self) -> Iterator:
        """The bench database through a sync client, for looking at what the app stored."""
        import warnings

        from azure.cosmos import CosmosClient
        from urllib3.exceptions import InsecureRequestWarning

        # The local Cosmos server's self-signed certificate, on loopback: nothing to warn about.
        warnings.filterwarnings("ignore", category=InsecureRequestWarning)
        endpoint, key = self.settings["COSMOS_ENDPOINT"], self.settings["COSMOS_KEY"]
        with CosmosClient(endpoint, key, connection_verify=False) as client:
            yield client.get_database_client(self.settings["COSMOS_DATABASE"])

    @contextmanager
    def devhost(
        self, name: str, *, scripted: bool, cors: str | None = None, **env: str
    ) -> Iterator[DevhostProcess]:
        """The app in a devhost child process: the offline models, or the scripted server;
        `cors`: the origins it allows (the web app's)."""
        settings = {**self.settings, **env}
        if scripted:
            settings |= {"OPENAI_BASE_URL": self.model.base_url, "MODEL_MAX_RETRIES": "0"}
        log = self.workdir / f"{name}.log"
        host = DevhostProcess(REPO, settings, log, cors=cors).start(timeout=60)
        try:
            yield host
        finally:
            host.stop()


@contextmanager
def stack() -> Iterator[Stack]:
    with _left_on_sigterm(), tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        workdir = Path(tmp)
        with Emulators(data_dir=workdir / "emulators", ports=Ports.free()) as emulators:
            settings = {
                **emulators.app_settings,
                "COSMOS_DATABASE": "secondbrain-bench",
                "API_KEYS": DEV_KEYS,
                # The benchmark is one user firing far faster than a person.
                "RATE_LIMIT_PER_MINUTE": "0",
            }
            os.environ.update(settings)  # for provisioning and the in-process measurements
            _provision()
            with FakeOpenAI() as model:
                yield Stack(settings, model, workdir, emulators.ports, emulators.pids)


@contextmanager
def _left_on_sigterm() -> Iterator[None]:
    """A SIGTERM (`kill`, a job's timeout) leaves the stack as an exception would, so the
    emulators and hosts are stopped instead of outliving the benchmark."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _provision() -> None:
    from devhost.provision import provision
    from shared.settings import get_settings

    get_settings.cache_clear()
    asyncio.run(provision())
