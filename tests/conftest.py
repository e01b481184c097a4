"""Session-wide real emulators (Azurite, the Cosmos server) on free ports of their own."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from devhost.emulators import Emulators, Ports
from devhost.llama_server import LlamaServer
from testkit.fake_openai import FakeOpenAI
from testkit.support import DEV_KEYS


@pytest.fixture(scope="session")
def emulators(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulators]:
    data_dir = tmp_path_factory.mktemp("emulators")
    with Emulators(data_dir=data_dir, ports=Ports.free()) as stack:
        yield stack


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A real OpenAI-compatible server (llama.cpp, SmolLM2-135M) for the whole session: about
    250 MB and a few seconds to start, so one, and only for the tests that ask for it."""
    log_dir = tmp_path_factory.mktemp("llama")
    with LlamaServer(log_dir / "llama.log") as server:
        yield server


@pytest.fixture(scope="session")
def vapid_keys() -> tuple[str, str]:
    """The tests' own VAPID key pair (public, private), whatever local.settings.json holds."""
    from shared.adapters.vapid import generate_keys

    return generate_keys()


@pytest.fixture(scope="session")
def app_env(emulators: Emulators, vapid_keys: tuple[str, str]) -> Iterator[dict[str, str]]:
    """App settings pointing at the test emulators, also exported to this process."""
    env = {
        **emulators.app_settings,
        "COSMOS_DATABASE": "secondbrain-tests",
        # Tests fire requests far faster than a person; the limit has tests of its own.
        "RATE_LIMIT_PER_MINUTE": "0",
        # Every capture sends the worker a delayed check; the tests about it set their own
        # delay, the others keep theirs from firing into later modules.
        "RECOVERY_DELAY_S": "3600",
        "VAPID_PUBLIC_KEY": vapid_keys[0],
        "VAPID_PRIVATE_KEY": vapid_keys[1],
        "VAPID_SUBJECT": "mailto:tests@example.com",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    from shared.settings import get_settings

    get_settings.cache_clear()
    yield env
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    get_settings.cache_clear()


@pytest.fixture
def storage_conn(app_env: dict[str, str]) -> str:
    return app_env["AzureWebJobsStorage"]


@pytest.fixture
def record_file(tmp_path: Path) -> Path:
    return tmp_path / "records.jsonl"


@pytest.fixture(scope="session")
async def provisioned(app_env: dict[str, str]) -> dict[str, str]:
    """The database, containers, queues and blob container the app expects."""
    from devhost.provision import provision

    await provision()
    return app_env


@pytest.fixture(scope="session")
def cosmos(provisioned: dict[str, str]):
    """A sync client on the test database, for looking at what the app stored."""
    from azure.cosmos import CosmosClient

    with CosmosClient(
        provisioned["COSMOS_ENDPOINT"], provisioned["COSMOS_KEY"], connection_verify=False
    ) as client:
        yield client.get_database_client(provisioned["COSMOS_DATABASE"])


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    """The scripted OpenAI-compatible server, in a thread, for a module's devhost or app."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def scripted_env(provisioned: dict[str, str], fake: FakeOpenAI) -> dict[str, str]:
    """App settings for a devhost whose model is the scripted server, failing fast."""
    return {
        **provisioned,
        "API_KEYS": DEV_KEYS,
        "OPENAI_BASE_URL": fake.base_url,
        "MODEL_MAX_RETRIES": "0",
        "MODEL_TIMEOUT_S": "2",
    }


@pytest.fixture
def client(host: str, fake: FakeOpenAI) -> Iterator[httpx.Client]:
    """An HTTP client on the module's `host` fixture, with the scripted model reset."""
    fake.reset()
    with httpx.Client(base_url=host, timeout=30) as c:
        yield c


@pytest.fixture
def offline() -> Iterator[list[str]]:
    """No connection and no child process from this test: an attempt fails it (there, and at
    teardown too, in case the code under test swallowed the error). Other threads (a server
    another module left running, an exporter) are not this test's and go on as they were.
    The value lists the attempts."""
    attempts: list[str] = []
    test_thread = threading.get_ident()

    def refuse(what: str, original: Callable[..., object]) -> Callable[..., object]:
        def guarded(*args: object, **kwargs: object) -> object:
            if threading.get_ident() != test_thread:
                return original(*args, **kwargs)
            attempts.append(what)
            raise AssertionError(f"a unit test tried to {what}")

        return guarded

    with pytest.MonkeyPatch.context() as patch:
        for owner, name, what in [
            (socket.socket, "connect", "connect"),
            (socket.socket, "connect_ex", "connect"),
            (subprocess.Popen, "__init__", "start a process"),
        ]:
            patch.setattr(owner, name, refuse(what, getattr(owner, name)))
        yield attempts
    assert not attempts, f"a unit test tried to {', '.join(attempts)}"


# The kind of a test is its folder: tests/unit, tests/integration, tests/e2e, tests/browser
# (`-m unit` etc.).
KINDS = ("unit", "integration", "e2e", "browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        kind = item.path.parent.name
        if kind in KINDS:
            item.add_marker(kind)
