"""For the unit tests: the in-memory fakes of tests/fakes.py, the app's settings at their
defaults, and the network and child processes shut off."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from shared.settings import Settings
    from tests.fakes import Fakes


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
    from tests.fakes import Fakes

    made = Fakes()
    yield made
    await made.drain()
