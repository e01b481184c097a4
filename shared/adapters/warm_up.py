"""The offline models load slowly (a minute on a busy machine): each is warmed once per
process on a thread of its own, and this module says how far that has got, for health."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel

# The devhost looks for threads of this name at shutdown (devhost/__main__.py).
THREAD_NAME = "warm-up"

log = logging.getLogger(__name__)


@runtime_checkable
class Warmable(Protocol):
    def warm_up(self) -> None:
        """Load now and run once, so the first real call runs at full speed."""


class ModelCheck(BaseModel):
    status: Literal["ok", "warming", "down"]
    # How long the warm-up took, or has been running so far.
    seconds: float
    error: str | None = None


class _Warming:
    def __init__(self, name: str, model: Warmable) -> None:
        self._name = name
        self._model = model
        self._started = time.monotonic()
        self._finished: float | None = None
        self._error: str | None = None
        self.thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)

    def _run(self) -> None:
        try:
            self._model.warm_up()
            log.info("%s warmed up in %.1f s", self._name, time.monotonic() - self._started)
        except Exception as exc:
            # Health shows the class name only; the log has the rest.
            self._error = type(exc).__name__
            log.exception("warming the %s failed", self._name)
        finally:
            self._finished = time.monotonic()

    def check(self) -> ModelCheck:
        end = self._finished if self._finished is not None else time.monotonic()
        seconds = round(end - self._started, 1)
        if self._finished is None:
            return ModelCheck(status="warming", seconds=seconds)
        if self._error is not None:
            return ModelCheck(status="down", seconds=seconds, error=self._error)
        return ModelCheck(status="ok", seconds=seconds)


_warming: dict[str, _Warming] = {}
_lock = threading.Lock()


def start(models: Mapping[str, object]) -> None:
    """Start warming each model that can be warmed, once per process and name; a model
    server's clients cannot, and have nothing to load."""
    with _lock:
        for name, model in models.items():
            if name in _warming or not isinstance(model, Warmable):
                continue
            warming = _warming[name] = _Warming(name, model)
            warming.thread.start()


def checks() -> dict[str, ModelCheck]:
    """Each model being warmed or warmed in this process, by name."""
    with _lock:
        return {name: w.check() for name, w in _warming.items()}


def in_progress() -> bool:
    with _lock:
        return any(w.thread.is_alive() for w in _warming.values())
