"""Fixtures of the contract suites, which run one set of tests on a port's fake and on its
real adapter, so the fakes the unit tests use stay honest."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(params=[pytest.param("fake", marks=pytest.mark.unit), pytest.param("cosmos")])
def backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    """None for the fake (which must open no connection); for "cosmos", the local Cosmos
    server's sync client, set up here, outside the test's event loop."""
    if request.param == "fake":
        request.getfixturevalue("offline")
        yield None
    else:
        yield request.getfixturevalue("cosmos")
