"""Function invocations as spans: one capture's trace across HTTP, blob, queue and worker, and
its capture id and user id on every log record written while handling it (never its text)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import threading
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

# Only the OpenTelemetry API (already loaded by the FastAPI extension); the SDK and the
# exporters load on the first invocation, and only when a setting asks for them.
import azure.functions as func
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from shared.settings import Settings, get_settings
from shared.tracing import (
    PROPAGATOR,
    Invocation,
    annotate,
    current_invocation,
    failed,
    tracer,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger(__name__)

_configure_lock = threading.Lock()
_configured = False

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def configure() -> None:
    """Once per process, on the first invocation: the log context, then the exporter."""
    global _configured
    if _configured:
        return
    with _configure_lock:
        if not _configured:
            _install_log_context()
            try:
                _install_tracing(get_settings())
            except Exception as exc:  # e.g. the OTLP exporter is local only, not deployed
                # Tracing must never stop a capture; say so once and go on without it.
                log.warning("tracing is off: its exporter could not be set up (%r)", exc)
            _configured = True


def _install_tracing(settings: Settings) -> None:
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        # Already set up, e.g. by the Functions worker itself when
        # PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY is true: a second setup exports twice.
        return
    if settings.applicationinsights_connection_string:
        from azure.monitor.opentelemetry import configure_azure_monitor

        # Spans, and log records with their extra fields as custom dimensions. With local auth
        # off (infra/), the exporter itself reads APPLICATIONINSIGHTS_AUTHENTICATION_STRING
        # ("ClientId=…;Authorization=AAD") and sends with that managed identity: passing any
        # `credential` here, even None, would turn that off.
        # Keep every trace unless OTEL_TRACES_SAMPLER says otherwise. The distro's default
        # samples at 5 traces/s from a rate estimate that starts at zero, so it drops most of
        # the traces just after a cold start, which is when one wants them; a person's
        # captures never come near that rate.
        sampling = {} if settings.otel_traces_sampler else {"sampling_ratio": 1.0}
        configure_azure_monitor(
            connection_string=settings.applicationinsights_connection_string.get_secret_value(),
            **sampling,
        )
        return
    exporter: SpanExporter
    if settings.otel_exporter_otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()  # reads OTEL_EXPORTER_OTLP_* (endpoint, headers, ...)
    elif (settings.otel_traces_exporter or "").strip().lower() == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        exporter = ConsoleSpanExporter()
    else:
        return  # tracing off; incoming trace context is still passed on (see continue_trace)
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # OTEL_BSP_* tune the batching; the provider flushes at process exit.
    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.otel_service_name})
    )
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)


def _install_log_context() -> None:
    # A record factory rather than a filter: filters on a logger miss records that propagate
    # from its children, and handlers come and go (the worker adds its own).
    previous = logging.getLogRecordFactory()

    def record_with_context(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        invocation = current_invocation.get()
        if invocation is not None:
            record.__dict__.update(invocation.fields)
        return record

    logging.setLogRecordFactory(record_with_context)


def traced(function: F) -> F:
    """Run a function entrypoint as a span of its capture's trace, continuing the trace its
    trigger carries: the request's `traceparent` header, the job's `traceparent`, or the
    blob's `traceparent` metadata. Put it under the trigger decorator."""

    @functools.wraps(function)
    async def invoke(*args: Any, **kwargs: Any) -> Any:
        configure()
        trigger = next((v for v in (*args, *kwargs.values()) if _is_trigger(v)), None)
        if isinstance(trigger, Request):
            return await _http(function, trigger, args, kwargs)
        name, kind, parent, links, attributes = _message_span(function.__name__, trigger)
        current = tracer.start_span(name, parent, kind, attributes, links)
        with _within(current):
            try:
                return await function(*args, **kwargs)
            except BaseException as exc:
                failed(current, exc)
                raise
            finally:
                current.end()

    return cast(F, invoke)  # functools.wraps keeps the signature; its type says otherwise


def _is_trigger(value: Any) -> bool:
    return isinstance(value, Request | func.QueueMessage | func.InputStream)


async def _http(function: Callable, request: Request, args: tuple, kwargs: dict) -> Response:
    # Under the Functions host, the worker makes the host's request span current when
    # PYTHON_ENABLE_OPENTELEMETRY is set (itself a child of the caller's traceparent): nest
    # under it. Otherwise (devhost, setting off) continue the caller's header directly.
    host = trace.get_current_span().get_span_context()
    parent = None if host.is_valid else PROPAGATOR.extract(request.headers)
    current = tracer.start_span(
        f"{request.method} {function.__name__}",
        parent,
        SpanKind.SERVER,
        {"faas.trigger": "http", "http.request.method": request.method},
    )
    with _within(current) as invocation:
        if "id" in request.path_params and "/captures/" in request.url.path:
            annotate(capture_id=request.path_params["id"])  # not a push subscription's id
        try:
            response = await function(*args, **kwargs)
        except BaseException as exc:
            failed(current, exc)
            current.end()
            raise
    current.set_attribute("http.response.status_code", response.status_code)
    if response.status_code >= 500:
        current.set_status(Status(StatusCode.ERROR))
    if isinstance(response, StreamingResponse):
        # The run is streamed after the function returns: it stays in the span (and its
        # work, started while streaming, in the invocation) until the stream ends.
        response.body_iterator = _streamed(response.body_iterator, current, invocation)
    else:
        current.end()
    return response


def _message_span(
    function_name: str, trigger: Any
) -> tuple[str, SpanKind, otel_context.Context | None, list[Link], dict[str, Any]]:
    if isinstance(trigger, func.QueueMessage):
        carrier = _job_carrier(trigger.get_body())
        attributes = {"faas.trigger": "pubsub", "messaging.message.id": trigger.id or ""}
    elif isinstance(trigger, func.InputStream):
        carrier = {k.lower(): v for k, v in (trigger.metadata or {}).items()}  # type: ignore[attr-defined]  # the bound class has it
        attributes = {"faas.trigger": "datasource"}
    else:
        carrier, attributes = {}, {"faas.trigger": "other"}
    # The host starts a new trace for a queue message or a blob (Storage carries no trace
    # context for it): the capture's own trace is what the message carries; the host's
    # invocation, if the worker made it current, is linked.
    host = trace.get_current_span().get_span_context()
    carried = PROPAGATOR.extract(carrier)
    if trace.get_current_span(carried).get_span_context().is_valid:
        links = [Link(host)] if host.is_valid else []
        return function_name, SpanKind.CONSUMER, carried, links, attributes
    return function_name, SpanKind.CONSUMER, None, [], attributes


def _job_carrier(body: bytes) -> dict[str, str]:
    # Only the trace context; the function itself validates the job (and a bad one fails).
    try:
        job = json.loads(body)
    except ValueError:
        return {}
    value = job.get("traceparent") if isinstance(job, dict) else None
    return {"traceparent": value} if isinstance(value, str) else {}


@contextlib.contextmanager
def _within(current: Span, invocation: Invocation | None = None) -> Iterator[Invocation]:
    invocation = invocation or Invocation(current)
    token = current_invocation.set(invocation)
    try:
        # Failures are marked by _failed (type only), never recorded with their message.
        with trace.use_span(
            current, end_on_exit=False, record_exception=False, set_status_on_exception=False
        ):
            yield invocation
    finally:
        current_invocation.reset(token)


async def _streamed(
    body: AsyncIterable[Any], current: Span, invocation: Invocation
) -> AsyncIterator[Any]:
    chunks = aiter(body)  # a StreamingResponse's body may be any async iterable
    try:
        while True:
            with _within(current, invocation):
                try:
                    chunk = await anext(chunks)
                except StopAsyncIteration:
                    return
            yield chunk
    except BaseException as exc:
        if not isinstance(exc, GeneratorExit | asyncio.CancelledError):  # the client left
            failed(current, exc)
        raise
    finally:
        current.end()
