"""The host's admin endpoint for running a non-HTTP function by hand,
`POST /admin/functions/<name>` with `{"input": "..."}`, as `func start` serves it.

As the host's FunctionsController: the name is matched without regard to case, the input
goes to the trigger parameter as its binding converts a string (a queue message whose body
is the input; the blob at `container/name`; a timer's TimerRequest, not past due, with its
schedule status, which the run leaves as it was), and the answer is 202 before the function
runs, in the background, once, without retries or poison queues. As in Azure, the route needs
the host's master key, in `x-functions-key` or `?code=` (master_key.py: DEVHOST_MASTER_KEY);
without it the answer is 401 and nothing runs. `func start` lets every request through: then
anything on the machine could queue any job.

Stricter than the host, so that a wrong call shows at once: an unknown name is 404 naming the
functions there are, a body that is not a JSON object with a string, number or boolean
`input` is 400, and so is an HTTP function (call its route), a queue or blob function
without input, and a blob outside its trigger's path or not there (the host would answer
202 and fail the run).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

from azure.functions.queue import QueueMessage  # concrete; func.QueueMessage is abstract
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from .blobs import compile_blob_path, read_input_stream
from .invoke import Invoker
from .loader import LoadedFunction
from .master_key import HEADER, matches
from .storage import StorageClients
from .timers import TimerListener

log = logging.getLogger("devhost.admin")

PREFIX = "/admin/functions/"
MAX_BODY = 1024 * 1024


class BadInvocation(ValueError):
    """The request cannot run this function; the message says why."""


class AdminFunctions:
    """An ASGI app for `/admin/functions/<name>`."""

    def __init__(
        self,
        functions: list[LoadedFunction],
        invoker: Invoker,
        storage: StorageClients,
        timers: Mapping[str, TimerListener],
        master_key: str | None,
    ) -> None:
        self._functions = {f.name.lower(): f for f in functions}
        self._master_key = master_key
        self._invoker = invoker
        self._storage = storage
        self._timers = timers
        self._running: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._answer(Request(scope, receive))
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        name = request.url.path[len(PREFIX) :]
        if not name or "/" in name:
            return Response(status_code=404)
        given = request.headers.get(HEADER) or request.query_params.get("code")
        if not matches(given, self._master_key):
            # Before anything else, as the host's: a caller without the key learns nothing,
            # not even which functions there are.
            why = "" if self._master_key else " (this host has none: see DEVHOST_MASTER_KEY)"
            return _problem(401, f"the host's master key is needed in {HEADER}{why}")
        if request.method != "POST":
            return Response(status_code=405, headers={"Allow": "POST"})
        function = self._functions.get(name.lower())
        if function is None:
            names = ", ".join(sorted(f.name for f in self._functions.values()))
            return _problem(404, f"no function {name!r}; the functions are: {names}")
        try:
            value, binding_data = await self._trigger_value(function, _input(await request.body()))
        except BadInvocation as exc:
            return _problem(400, str(exc))
        task = asyncio.create_task(self._run(function, value, binding_data))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        log.info("admin: %s accepted for a run by hand", function.name)
        return Response(status_code=202)

    async def _trigger_value(
        self, function: LoadedFunction, given: str | None
    ) -> tuple[Any, dict[str, str]]:
        kind = function.trigger.type
        if kind == "timerTrigger":
            return await self._timers[function.name].manual_value(), {}
        if kind == "httpTrigger":
            raise BadInvocation(f"{function.name} is an HTTP function: call its route")
        if given is None:
            raise BadInvocation(f"{function.name} needs an input: {_NEEDS[kind]}")
        if kind == "queueTrigger":
            message = QueueMessage(body=given.encode("utf-8"), dequeue_count=0)
            return message, {"QueueTrigger": given}
        # A blob trigger: the input names the blob, container first, as the host reads it.
        container, _prefix, pattern = compile_blob_path(function.trigger.raw["path"])
        given_container, _, blob_name = given.partition("/")
        match = pattern.fullmatch(blob_name)
        if given_container != container or match is None:
            raise BadInvocation(
                f"{given!r} is not a blob on {function.name}'s path {function.trigger.raw['path']}"
            )
        connection = function.trigger.raw.get("connection") or "AzureWebJobsStorage"
        client = self._storage.blob_service(connection).get_container_client(container)
        try:
            stream = await read_input_stream(client, blob_name)
        except Exception as exc:
            raise BadInvocation(f"blob {given!r} cannot be read: {type(exc).__name__}") from exc
        return stream, {**match.groupdict(), "BlobTrigger": blob_name}

    async def _run(self, function: LoadedFunction, value: Any, data: dict[str, str]) -> None:
        try:
            await self._invoker.call(function, value, data)
            log.info("admin: %s ran", function.name)
        except Exception:
            log.exception("admin: %s failed on its run by hand", function.name)


_NEEDS = {
    "queueTrigger": 'the message, {"input": "<message text>"}',
    "blobTrigger": 'the blob, {"input": "<container>/<blob name>"}',
}


def _input(body: bytes) -> str | None:
    if len(body) > MAX_BODY:
        raise BadInvocation("the body is over 1 MB")
    try:
        payload = json.loads(body)
    except ValueError:
        raise BadInvocation('the body must be JSON: {"input": "..."}') from None
    if not isinstance(payload, dict):
        raise BadInvocation('the body must be a JSON object: {"input": "..."}')
    value = payload.get("input")
    if value is None:
        return None
    if isinstance(value, bool):
        return "True" if value else "False"  # as the host's JSON reader makes a string of it
    if isinstance(value, int | float | str):
        return str(value)
    raise BadInvocation("input must be a string, a number or a boolean")


def _problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse(
        {"type": "about:blank", "title": "Admin API", "status": status, "detail": detail},
        status_code=status,
        media_type="application/problem+json",
    )
