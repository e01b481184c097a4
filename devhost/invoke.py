"""Calling one function the way the worker does, then writing its output bindings."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import re
import threading
import uuid
from collections.abc import Callable
from typing import Any

import azure.functions as func
from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError

from .loader import Binding, LoadedFunction
from .storage import StorageClients, encode_message

_EXPRESSION = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")


class OutValue(func.Out):
    def __init__(self) -> None:
        self._value: Any = None

    def set(self, val: Any) -> None:
        self._value = val

    def get(self) -> Any:
        return self._value


class InvocationContext(func.Context):
    def __init__(self, function: LoadedFunction, invocation_id: str) -> None:
        self._function = function
        self._invocation_id = invocation_id
        self._local = threading.local()

    @property
    def invocation_id(self) -> str:
        return self._invocation_id

    @property
    def thread_local_storage(self) -> threading.local:  # type: ignore[override]  # the SDK's abstract type says the class; the worker gives an instance
        return self._local

    @property
    def function_name(self) -> str:
        return self._function.name

    @property
    def function_directory(self) -> str:
        return ""

    @property
    def trace_context(self) -> Any:
        return None

    @property
    def retry_context(self) -> Any:
        return None


class Invoker:
    """Runs functions: async ones on the host loop, sync ones on worker threads."""

    def __init__(
        self,
        storage: StorageClients,
        message_encoding: str,
        on_enqueue: Callable[[str], None] = lambda queue: None,
    ) -> None:
        self._storage = storage
        self._encoding = message_encoding
        self._on_enqueue = on_enqueue

    async def call(
        self, function: LoadedFunction, trigger_value: Any, binding_data: dict[str, str]
    ) -> Any:
        invocation_id = str(uuid.uuid4())
        kwargs: dict[str, Any] = {function.trigger.name: trigger_value}
        outs = {b.name: OutValue() for b in function.outputs}
        kwargs.update(outs)
        if function.wants_context:
            kwargs["context"] = InvocationContext(function, invocation_id)
        if function.is_async:
            result = await function.callable(**kwargs)
        else:
            ctx = contextvars.copy_context()
            call = functools.partial(ctx.run, function.callable, **kwargs)
            result = await asyncio.get_running_loop().run_in_executor(None, call)
        # Like the host, outputs are written only when the function succeeded.
        for binding in function.outputs:
            value = outs[binding.name].get()
            if value is not None:
                await self._write_output(binding, value, binding_data)
        return result

    async def _write_output(self, binding: Binding, value: Any, data: dict[str, str]) -> None:
        connection = binding.raw.get("connection") or "AzureWebJobsStorage"
        if binding.type == "queue":
            queue_name = resolve(binding.raw["queueName"], data)
            queue = self._storage.queue_service(connection).get_queue_client(queue_name)
            for item in value if isinstance(value, list) else [value]:
                message = encode_message(_as_bytes(item), self._encoding)
                try:
                    await queue.send_message(message)
                except ResourceNotFoundError:  # the host creates the queue on first use
                    with contextlib.suppress(ResourceExistsError):
                        await queue.create_queue()
                    await queue.send_message(message)
            self._on_enqueue(queue_name)
        elif binding.type == "blob":
            container, _, name = resolve(binding.raw["path"], data).partition("/")
            blob = self._storage.blob_service(connection).get_blob_client(container, name)
            try:
                await blob.upload_blob(_as_bytes(value), overwrite=True)
            except ResourceNotFoundError:  # likewise for the container
                with contextlib.suppress(ResourceExistsError):
                    await self._storage.blob_service(connection).create_container(container)
                await blob.upload_blob(_as_bytes(value), overwrite=True)


def resolve(template: str, data: dict[str, str]) -> str:
    """Fill binding expressions like {name} from trigger data; {rand-guid} as the host does."""

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key == "rand-guid":
            return str(uuid.uuid4())
        if key not in data:
            raise ValueError(f"binding expression {{{key}}} has no value")
        return data[key]

    return _EXPRESSION.sub(sub, template)


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, func.QueueMessage):
        return value.get_body()
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if hasattr(value, "read"):
        return value.read()
    raise TypeError(f"cannot write {type(value).__name__} to an output binding")
