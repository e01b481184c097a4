"""Start and stop the local stand-ins for Azure: Azurite and the Cosmos server launcher."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
AZURITE_ACCOUNT = "devstoreaccount1"
# Azurite's published development key: not a secret, the same on every machine.
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
# The Cosmos emulator's published key; the local Cosmos server accepts any key.
COSMOS_KEY = (
    "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Ports:
    blob: int = 10000
    queue: int = 10001
    table: int = 10002
    cosmos: int = 8081

    @classmethod
    def free(cls) -> Ports:
        return cls(blob=free_port(), queue=free_port(), table=free_port(), cosmos=free_port())

    @classmethod
    def from_env(cls) -> Ports:
        d = cls()
        return cls(
            blob=int(os.environ.get("AZURITE_BLOB_PORT", d.blob)),
            queue=int(os.environ.get("AZURITE_QUEUE_PORT", d.queue)),
            table=int(os.environ.get("AZURITE_TABLE_PORT", d.table)),
            cosmos=int(os.environ.get("COSMOS_PORT", d.cosmos)),
        )


def storage_connection_string(ports: Ports) -> str:
    base = "http://127.0.0.1"
    return (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint={base}:{ports.blob}/{AZURITE_ACCOUNT};"
        f"QueueEndpoint={base}:{ports.queue}/{AZURITE_ACCOUNT};"
        f"TableEndpoint={base}:{ports.table}/{AZURITE_ACCOUNT};"
    )


@dataclass
class Emulators:
    """Azurite and Cosmos as child processes; `app_settings` points the app at them."""

    data_dir: Path
    ports: Ports = field(default_factory=Ports)
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def app_settings(self) -> dict[str, str]:
        return {
            "AzureWebJobsStorage": storage_connection_string(self.ports),
            "COSMOS_ENDPOINT": f"https://127.0.0.1:{self.ports.cosmos}",
            "COSMOS_KEY": COSMOS_KEY,
        }

    def start(self, timeout: float = 60.0) -> None:
        # A port already taken would make us talk to someone else's emulator (or an old one).
        busy = [
            p
            for p in (self.ports.blob, self.ports.queue, self.ports.table, self.ports.cosmos)
            if _listening(p)
        ]
        if busy:
            raise RuntimeError(
                f"ports {busy} are already in use (another `make dev`?): stop it or set "
                "AZURITE_BLOB_PORT, AZURITE_QUEUE_PORT, AZURITE_TABLE_PORT, COSMOS_PORT"
            )
        azurite_dir = self.data_dir / "azurite"
        azurite_dir.mkdir(parents=True, exist_ok=True)
        bin_dir = REPO / "node_modules" / ".bin"
        if not (bin_dir / "azurite").exists():
            raise RuntimeError("node_modules missing: run `npm ci` (make does this for you)")
        log = open(self.data_dir / "emulators.log", "ab")  # noqa: SIM115  (lives with the processes)
        self._spawn(
            [
                str(bin_dir / "azurite"),
                "--silent",
                "--skipApiVersionCheck",
                "--disableTelemetry",
                "--location", str(azurite_dir),
                "--blobHost", "127.0.0.1", "--blobPort", str(self.ports.blob),
                "--queueHost", "127.0.0.1", "--queuePort", str(self.ports.queue),
                "--tableHost", "127.0.0.1", "--tablePort", str(self.ports.table),
            ],
            log,
        )  # fmt: skip
        self._spawn(
            [
                "node",
                str(REPO / "devhost" / "cosmos_launcher.js"),
                "--port",
                str(self.ports.cosmos),
            ],
            log,
        )
        deadline = time.monotonic() + timeout
        for port in (self.ports.blob, self.ports.queue, self.ports.cosmos):
            _wait_for_port(port, deadline, self)

    def _spawn(self, argv: list[str], log) -> None:
        # Own process group: stopping it stops node's children too, and a Ctrl-C meant
        # for the devhost does not kill the emulators before the devhost has shut down.
        self._procs.append(
            subprocess.Popen(argv, stdout=log, stderr=log, cwd=REPO, start_new_session=True)
        )

    def alive(self) -> bool:
        return all(p.poll() is None for p in self._procs)

    @property
    def pids(self) -> list[int]:
        """Azurite's and the Cosmos server's processes (for a bench that counts their CPU)."""
        return [p.pid for p in self._procs]

    def stop(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self._procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self._procs.clear()

    def __enter__(self) -> Emulators:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _wait_for_port(port: int, deadline: float, emulators: Emulators) -> None:
    while time.monotonic() < deadline:
        if not emulators.alive():
            raise RuntimeError(
                f"an emulator exited during start-up; see {emulators.data_dir / 'emulators.log'}"
            )
        if _listening(port):
            return
        time.sleep(0.05)
    emulators.stop()
    raise RuntimeError(f"port {port} did not open in time")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0
