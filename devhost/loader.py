"""Import the function app once and check it the way the Python worker would before serving."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import azure.functions as func
from azure.functions import meta
from azure.functions.decorators.function_app import Function
from starlette.requests import Request as StarletteRequest
from starlette.responses import Response as StarletteResponse

from .ncrontab import ScheduleError
from .timer_schedule import TimerSpec

TRIGGERS = (
    "httpTrigger",
    "queueTrigger",
    "blobTrigger",
    "timerTrigger",
    "mcpToolTrigger",
    "mcpResourceTrigger",
    "mcpPromptTrigger",
)


class AppLoadError(Exception):
    """The app would not load on the real Python worker; the message says why."""


@dataclass(frozen=True)
class Binding:
    name: str
    type: str
    direction: str  # "IN", "OUT" or "INOUT", as the worker serialises it
    raw: dict[str, Any]

    @property
    def is_output(self) -> bool:
        return self.direction == "OUT"


@dataclass(frozen=True)
class LoadedFunction:
    name: str
    callable: typing.Callable[..., Any]
    trigger: Binding
    outputs: tuple[Binding, ...]
    wants_context: bool
    is_async: bool


def import_app(app_dir: Path, module: str = "function_app") -> list[LoadedFunction]:
    """Import `module` from `app_dir`, take its functions once and validate every one."""
    path = app_dir / f"{module}.py"
    if not path.exists():
        raise AppLoadError(f"{path} not found")
    if str(app_dir) not in sys.path:
        sys.path.insert(0, str(app_dir))
    spec = importlib.util.spec_from_file_location(module, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # the worker reports import errors as indexing failures
        raise AppLoadError(f"importing {path.name} failed: {exc!r}") from exc

    apps = [v for v in vars(mod).values() if isinstance(v, func.FunctionRegister)]
    if len(apps) != 1:
        raise AppLoadError(f"{path.name} must define exactly one FunctionApp, found {len(apps)}")
    try:
        functions = apps[0].get_functions()  # callable only once: it validates names as it goes
    except ValueError as exc:
        raise AppLoadError(str(exc)) from exc
    if not functions:
        raise AppLoadError(f"{path.name} registers no functions")
    return [validate(f) for f in functions]


def validate(function: Function) -> LoadedFunction:
    name = function.get_function_name()
    if name is None:  # get_functions() names each one; the SDK's type allows none
        raise AppLoadError("a function has no name")
    user_fn = function.get_user_function()
    bindings = [_binding(json.loads(raw)) for raw in function.get_raw_bindings()]
    triggers = [b for b in bindings if b.type.endswith("Trigger")]
    if len(triggers) != 1:
        raise AppLoadError(f"function {name!r}: expected one trigger, found {len(triggers)}")
    trigger = triggers[0]

    try:
        hints = typing.get_type_hints(user_fn)
    except Exception as exc:
        raise AppLoadError(f"function {name!r}: cannot resolve annotations: {exc!r}") from exc
    params = inspect.signature(user_fn).parameters
    named = {b.name: b for b in bindings if b.name != "$return"}

    for pname in params:
        if pname == "context":
            continue
        if pname not in named:
            raise AppLoadError(
                f"function {name!r}: parameter {pname!r} has no binding of that name "
                f"(bindings: {sorted(named)})"
            )
    for bname, binding in named.items():
        if bname not in params:
            raise AppLoadError(
                f"function {name!r}: binding {bname!r} has no parameter of that name"
            )
        annotation = hints.get(bname)
        if binding.is_output:
            _check_output(name, binding, annotation)
        else:
            _check_input(name, binding, annotation)

    if trigger.type == "httpTrigger":
        _check_http(name, trigger, hints)
    outputs = tuple(b for b in bindings if b.is_output and b.name != "$return")
    for out in outputs:
        if out.type not in ("queue", "blob"):
            raise AppLoadError(
                f"function {name!r}: output binding type {out.type!r} is not supported"
            )
    if trigger.type not in TRIGGERS:
        raise AppLoadError(f"function {name!r}: trigger {trigger.type!r} is not supported here")
    if trigger.type == "timerTrigger":
        try:  # as the host indexes it: a schedule it cannot read keeps the app from starting
            TimerSpec.from_binding(trigger.raw)
        except ScheduleError as exc:
            raise AppLoadError(f"function {name!r}: {exc}") from exc
    loaded = LoadedFunction(
        name=name,
        callable=user_fn,
        trigger=trigger,
        outputs=outputs,
        wants_context="context" in params,
        is_async=inspect.iscoroutinefunction(user_fn),
    )
    if trigger.type.startswith("mcp"):
        from .mcp_webhook import CHECKS  # the mcp SDK, only for an app with MCP functions

        try:  # as the extension registers it: a binding it refuses keeps the app from starting
            CHECKS[trigger.type](loaded)
        except (ValueError, KeyError) as exc:
            raise AppLoadError(f"function {name!r}: {exc}") from exc
    return loaded


def _binding(raw: dict[str, Any]) -> Binding:
    return Binding(name=raw["name"], type=raw["type"], direction=str(raw["direction"]), raw=raw)


def _check_output(fn: str, binding: Binding, annotation: Any) -> None:
    # The worker only sets output bindings through func.Out[T] parameters.
    if typing.get_origin(annotation) is not func.Out:
        raise AppLoadError(
            f"function {fn!r}: binding {binding.name!r} has the 'out' direction, "
            f"but its annotation is {annotation!r}, not azure.functions.Out[...]"
        )
    (inner,) = typing.get_args(annotation)
    converter = meta.get_binding_registry().get(binding.type)
    if converter is None or not converter.check_output_type_annotation(inner):
        raise AppLoadError(
            f"function {fn!r}: type {inner!r} of output binding {binding.name!r} "
            f"does not match its binding type {binding.type!r}"
        )


def _check_input(fn: str, binding: Binding, annotation: Any) -> None:
    if binding.type == "httpTrigger":
        return  # checked with the FastAPI extension's rules in _check_http
    if annotation is None:
        return  # the worker accepts unannotated inputs and passes its default type
    converter = meta.get_binding_registry().get(binding.type)
    if (
        converter is None
        or not isinstance(annotation, type)
        or not converter.check_input_type_annotation(annotation)
    ):
        raise AppLoadError(
            f"function {fn!r}: type {annotation!r} of parameter {binding.name!r} "
            f"does not match its binding type {binding.type!r}"
        )


def _check_http(fn: str, trigger: Binding, hints: dict[str, Any]) -> None:
    # Streaming needs the FastAPI extension: its Request in, a starlette Response out.
    req = hints.get(trigger.name)
    if not (isinstance(req, type) and issubclass(req, StarletteRequest)):
        raise AppLoadError(
            f"function {fn!r}: HTTP parameter {trigger.name!r} must be annotated with "
            f"azurefunctions.extensions.http.fastapi.Request (got {req!r})"
        )
    ret = hints.get("return")
    if not (isinstance(ret, type) and issubclass(ret, StarletteResponse)):
        raise AppLoadError(
            f"function {fn!r}: HTTP functions must return an "
            f"azurefunctions.extensions.http.fastapi Response type (got {ret!r})"
        )
