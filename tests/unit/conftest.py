"""For the unit tests: the in-memory fakes of tests/fakes.py, the app's settings at their
defaults, and the network and child processes shut off."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from shared.settings import Settings
    from tests.fakes import Fakes


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


@pytest.fixture
def unit_settings() -> Iterator[Callable[..., Settings]]:
    """The app's settings at their defaults, whatever this process's environment holds, with a
    Cosmos endpoint that nothing answers (nothing calls it). Call the fixture's value with
    NAME="value" pairs to change some; the environment is restored afterwards."""
    from shared.settings import Settings, get_settings

    with pytest.MonkeyPatch.context() as env:
        for setting in Settings.model_fields.values():
            for name in getattr(setting.validation_alias, "choices", ()):
                env.delenv(name, raising=False)
        env.setenv("COSMOS_ENDPOINT", "https://cosmos.invalid")

        def use(**changes: str) -> Settings:
            for name, value in changes.items():
                env.setenv(name, value)
            get_settings.cache_clear()
            return get_settings()

        use()
        yield use
    get_settings.cache_clear()  # the environment is as it was: read it again when asked


@pytest.fixture
async def fakes(unit_settings: Callable[..., Settings], offline: list[str]) -> AsyncIterator[Fakes]:
    """A fresh set of fakes; work the services left running in the background (publishing an
    outcome, sending a check) is finished before the test ends."""
    from shared.services import background
    from tests.fakes import Fakes

    yield Fakes()
    await background.drain()
