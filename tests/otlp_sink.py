"""A tiny OTLP/HTTP trace receiver on 127.0.0.1: decodes the exporter's protobuf requests with
opentelemetry.proto and keeps the spans, so tests can look at a real export."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

_DECODE: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.decompress,
    "deflate": zlib.decompress,
    "": bytes,
}


@dataclass(frozen=True)
class SpanRecord:
    name: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    kind: str  # SERVER, CONSUMER, PRODUCER, INTERNAL, CLIENT
    attributes: dict[str, Any]
    links: tuple[tuple[str, str], ...]  # (trace id, span id)
    service: str
    status: str  # UNSET, OK, ERROR


class OtlpSink:
    """`with OtlpSink() as sink:` then point OTEL_EXPORTER_OTLP_ENDPOINT at `sink.endpoint`."""

    def __init__(self) -> None:
        self._spans: list[SpanRecord] = []
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/traces":
                    self.send_error(404)
                    return
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                request = ExportTraceServiceRequest.FromString(_DECODE[encoding](body))
                sink._add(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the spans are what tests look at

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"  # type: ignore[str-bytes-safe]  # an IPv4 host is a str

    def spans(self, trace_id: str | None = None) -> list[SpanRecord]:
        with self._lock:
            return [s for s in self._spans if trace_id is None or s.trace_id == trace_id]

    def _add(self, request: ExportTraceServiceRequest) -> None:
        found = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(_record(span, str(resource.get("service.name", ""))))
        with self._lock:
            self._spans.extend(found)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _record(span: ProtoSpan, service: str) -> SpanRecord:
    return SpanRecord(
        name=span.name,
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex(),
        kind=ProtoSpan.SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
        attributes=_attributes(span.attributes),
        links=tuple((link.trace_id.hex(), link.span_id.hex()) for link in span.links),
        service=service,
        status=span.status.StatusCode.Name(span.status.code).removeprefix("STATUS_CODE_"),
    )


def _attributes(pairs) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None
