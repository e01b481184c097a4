"""The offline models' warm-up as health reports it: warming while it runs, ok once done,
down (with the exception's class only) when it fails, and started once per process."""

from __future__ import annotations

import threading
import uuid

import pytest

from shared.adapters import warm_up
from testkit.support import eventually


class Model:
    def __init__(self, error: Exception | None = None) -> None:
        self.release = threading.Event()
        self.calls = 0
        self._error = error

    def warm_up(self) -> None:
        self.calls += 1
        self.release.wait(timeout=30)
        if self._error is not None:
            raise self._error


@pytest.fixture
def name() -> str:
    return f"model-{uuid.uuid4()}"  # the module's state is the process's


def test_a_model_is_warming_until_its_warm_up_returns_then_ok(name: str) -> None:
    model = Model()
    warm_up.start({name: model})
    assert warm_up.checks()[name].status == "warming"
    assert warm_up.in_progress()
    model.release.set()
    check = eventually(lambda: warm_up.checks()[name].status == "ok" and warm_up.checks()[name])
    assert check.error is None and check.seconds >= 0


def test_a_failed_warm_up_is_down_naming_the_class_only(name: str) -> None:
    model = Model(RuntimeError("cannot load /secret/path"))
    model.release.set()
    warm_up.start({name: model})
    check = eventually(
        lambda: warm_up.checks()[name].status != "warming" and warm_up.checks()[name]
    )
    assert check.status == "down" and check.error == "RuntimeError"
    assert "secret" not in check.model_dump_json()


def test_each_model_is_warmed_once_and_a_model_server_not_at_all(name: str) -> None:
    model = Model()
    model.release.set()
    warm_up.start({name: model, f"{name}-client": object()})
    warm_up.start({name: model})
    eventually(lambda: warm_up.checks()[name].status == "ok")
    assert model.calls == 1
    assert f"{name}-client" not in warm_up.checks()
