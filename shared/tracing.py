"""Spans and capture ids for the work of one capture: what services and adapters mark, with
nothing but the OpenTelemetry API (shared/telemetry.py wraps the function invocations)."""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from shared.settings import get_settings

# W3C trace context only: it is what job messages and blob metadata carry (`traceparent`).
PROPAGATOR = TraceContextTextMapPropagator()
tracer = trace.get_tracer("shared")


@dataclass
class Invocation:
    """What one function invocation is about; shared (not copied) by the tasks it starts."""

    span: Span
    fields: dict[str, str] = field(default_factory=dict)


current_invocation: contextvars.ContextVar[Invocation | None] = contextvars.ContextVar(
    "capturecurrent_invocation", default=None
)


def annotate(
    *,
    capture_id: str | None = None,
    user_id: str | None = None,
    outcome: str | None = None,
) -> None:
    """Say which capture and user this work is for (and how it ended): on the current span,
    the invocation's span and every later log record of the invocation. Never pass text."""
    attributes = {
        key: value
        for key, value in (
            ("capture.id", capture_id),
            ("user.id", user_id),
            ("capture.outcome", outcome),
        )
        if value
    }
    trace.get_current_span().set_attributes(attributes)
    invocation = current_invocation.get()
    if invocation is None:
        return
    invocation.span.set_attributes(attributes)
    if capture_id:
        invocation.fields["capture_id"] = capture_id
    if user_id:
        invocation.fields["user_id"] = user_id


@contextlib.contextmanager
def span(name: str, kind: SpanKind = SpanKind.INTERNAL) -> Iterator[Span]:
    """A child span of the current one. Exceptions mark it failed by type only: their
    messages may quote what the user said."""
    with tracer.start_as_current_span(
        name, kind=kind, record_exception=False, set_status_on_exception=False
    ) as current:
        try:
            yield current
        except BaseException as exc:
            failed(current, exc)
            raise


def trace_carrier() -> dict[str, str]:
    """The current trace context as W3C headers (`traceparent`, `tracestate` if any), for a
    message or blob metadata to carry."""
    carrier: dict[str, str] = {}
    PROPAGATOR.inject(carrier)
    return carrier


def traceparent() -> str | None:
    return trace_carrier().get("traceparent")


def log_capture_text(logger: logging.Logger, what: str, capture_id: str, text: str) -> None:
    """Capture text in the logs only when LOG_CAPTURE_TEXT asks for it (debugging)."""
    if get_settings().log_capture_text:
        logger.info("%s of capture %s: %r", what, capture_id, text)


def failed(current: Span, exc: BaseException) -> None:
    current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
    current.set_attribute("error.type", type(exc).__qualname__)


__all__ = ["SpanKind", "annotate", "log_capture_text", "span", "trace_carrier", "traceparent"]
