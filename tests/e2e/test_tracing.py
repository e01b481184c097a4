"""Tracing and log context end to end: the devhost exports to a real OTLP/HTTP receiver, and
one capture is one trace from its request through the blob trigger and the queue worker."""

from __future__ import annotations

import json
import logging
import re
import secrets
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testkit import fake_openai
from testkit.support import KEY, REPO, clear_queue, eventually, run_input, running_devhost
from tests.otlp_sink import OtlpSink, SpanRecord
from tests.sse import assert_valid_run, post_run, post_voice_capture

AUDIO = Path(__file__).parents[1] / "data" / "audio"


@pytest.fixture(scope="module")
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def devhost_log(
    scripted_env: dict[str, str], sink: OtlpSink, tmp_path_factory
) -> Iterator[tuple[str, Path]]:
    clear_queue(scripted_env["AzureWebJobsStorage"], "captures-outcomes")
    log_dir = tmp_path_factory.mktemp("tracing")
    env = {
        **scripted_env,
        "OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # export within a tenth of a second, not five
        "SSE_KEEPALIVE_S": "0.5",
    }
    with running_devhost(env, log_dir) as url:
        yield url, log_dir / "devhost.log"


@pytest.fixture(scope="module")
def host(devhost_log: tuple[str, Path]) -> str:
    return devhost_log[0]


def entry_spans(sink: OtlpSink, capture_id: str, names: set[str]) -> dict[str, SpanRecord]:
    """The named spans tagged with this capture, once every one of them has arrived."""

    def arrived() -> dict[str, SpanRecord] | None:
        found = {
            s.name: s
            for s in sink.spans()
            if s.name in names and s.attributes.get("capture.id") == capture_id
        }
        return found if set(found) == names else None

    return eventually(arrived, timeout=30)


def the_span(spans: list[SpanRecord], name: str, parent: SpanRecord) -> SpanRecord:
    (found,) = [s for s in spans if s.name == name and s.parent_id == parent.span_id]
    return found


def queued_capture(client: httpx.Client, fake, text: str, **headers: str) -> str:
    """A text capture whose model is down: stored, queued, filed later by the worker."""
    fake.enqueue(fake_openai.http_error(503))
    fake.set_default(fake_openai.classification("Admin", 0.9, "Queued capture"))
    run = post_run(client, "/api/capture", run_input(text), headers={**KEY, **headers})
    assert_valid_run(run)
    assert run.last()["result"]["status"] == "queued"
    return run.last()["result"]["inboxItemId"]


def test_a_voice_note_is_one_trace_from_upload_url_to_worker(client, fake, sink) -> None:
    fake.set_default(
        fake_openai.transcription("Call Sarah about the budget"), fake_openai.TRANSCRIBE
    )
    fake.set_default(fake_openai.classification("People", 0.92, "Call Sarah"))
    r = client.post("/api/voice-notes", json={"contentType": "audio/mp4"}, headers=KEY)
    assert r.status_code == 201, r.text
    upload = r.json()
    capture_id = upload["captureId"]
    assert re.fullmatch(
        r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}",
        upload["uploadHeaders"].get("x-ms-meta-traceparent", ""),
    )
    # The phone's PUT, with exactly the headers it was given, through the create-only SAS.
    audio = (AUDIO / "call_sarah.m4a").read_bytes()
    put = httpx.put(upload["uploadUrl"], content=audio, headers=upload["uploadHeaders"])
    assert put.status_code == 201, put.text

    names = {"POST voice_notes", "voice_note_uploaded", "classify_worker"}
    entries = entry_spans(sink, capture_id, names)
    http, blob, worker = (
        entries[n] for n in ("POST voice_notes", "voice_note_uploaded", "classify_worker")
    )
    assert http.kind == "SERVER" and http.parent_id == ""  # no traceparent came in: a root
    assert {blob.trace_id, worker.trace_id} == {http.trace_id}
    # The blob trigger continues the span that signed the upload URL (blob metadata) ...
    assert blob.kind == "CONSUMER" and blob.parent_id == http.span_id
    # ... and the worker the span that sent its job (the job's traceparent).
    spans = sink.spans(http.trace_id)  # children end, and are exported, before their parents
    send = the_span(spans, "send captures-classify", blob)
    assert send.kind == "PRODUCER" and worker.parent_id == send.span_id
    assert the_span(spans, "transcribe", blob).status != "ERROR"
    assert the_span(spans, "classify", worker)
    # Once, or again after the blob trigger's save of the kept recording made it stale.
    filed = [s for s in spans if s.name == "file capture" and s.parent_id == worker.span_id]
    assert filed and filed[-1].attributes["capture.outcome"] == "CLASSIFIED"
    for entry in (http, blob, worker):
        assert entry.attributes["user.id"] == "dev"
    assert worker.attributes["capture.outcome"] == "CLASSIFIED"
    assert all(s.service == "capture-pipeline" for s in spans)


def test_a_one_request_voice_capture_puts_its_trace_in_the_blob(client, fake, sink) -> None:
    fake.set_default(
        fake_openai.transcription("Call Sarah about the budget"), fake_openai.TRANSCRIBE
    )
    audio = (AUDIO / "call_sarah.m4a").read_bytes()
    run = post_voice_capture(client, "note.m4a", audio, "audio/mp4", headers=KEY)
    assert_valid_run(run)
    capture_id = run.custom()["value"]["inboxItemId"]
    names = {"POST voice_capture", "voice_note_uploaded", "classify_worker"}
    entries = entry_spans(sink, capture_id, names)
    http, blob = entries["POST voice_capture"], entries["voice_note_uploaded"]
    # Our own upload set the blob's metadata from the request's span.
    assert blob.trace_id == http.trace_id and blob.parent_id == http.span_id
    assert entries["classify_worker"].trace_id == http.trace_id


def test_a_queued_text_capture_continues_in_the_worker(client, fake, sink) -> None:
    capture_id = queued_capture(client, fake, "renew the passport before june")
    entries = entry_spans(sink, capture_id, {"POST capture", "classify_worker"})
    http, worker = entries["POST capture"], entries["classify_worker"]
    assert http.parent_id == "" and worker.trace_id == http.trace_id
    spans = sink.spans(http.trace_id)
    # The failed model call and the deferral, under the request; the job continues it.
    (first_try,) = [s for s in spans if s.name == "classify" and s.status == "ERROR"]
    assert first_try.attributes.get("error.type")
    # Two jobs go out: the delayed check sent before the capture is stored, and the
    # deferral; the worker continues the deferral's.
    sends = [s for s in spans if s.name == "send captures-classify"]
    assert len(sends) == 2
    (send,) = [s for s in sends if s.span_id == worker.parent_id]
    assert worker.kind == "CONSUMER"
    by_id = {s.span_id: s for s in spans}
    assert ancestors(send, by_id)[-1] == http
    assert http.attributes["capture.outcome"] == "queued"
    assert worker.attributes["capture.outcome"] == "CLASSIFIED"


def test_an_incoming_traceparent_is_continued(client, fake, sink) -> None:
    trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
    fake.set_default(fake_openai.classification("Ideas", 0.9, "Solar tiles"))
    run = post_run(
        client,
        "/api/capture",
        run_input("solar roof tiles for the shed"),
        headers={**KEY, "traceparent": f"00-{trace_id}-{parent_id}-01"},
    )
    assert_valid_run(run)
    capture_id = run.custom()["value"]["inboxItemId"]
    http = entry_spans(sink, capture_id, {"POST capture"})["POST capture"]
    assert (http.trace_id, http.parent_id) == (trace_id, parent_id)
    # The work the stream started stays in the request's trace, under its span.
    spans = sink.spans(trace_id)
    assert the_span(spans, "store capture", http)
    assert the_span(spans, "classify", http)
    assert the_span(spans, "file capture", http).attributes["capture.outcome"] == "CLASSIFIED"


def test_logs_carry_capture_and_user_but_never_the_text(client, fake, sink, devhost_log) -> None:
    marker = f"zanzibar-{uuid.uuid4().hex[:12]}"
    capture_id = queued_capture(client, fake, f"book the {marker} ferry tickets")
    entry_spans(sink, capture_id, {"classify_worker"})  # the worker is done with it
    log_path = devhost_log[1]

    def lines_about_it() -> list[str]:
        lines = log_path.read_text().splitlines()
        return [line for line in lines if f"capture_id={capture_id}" in line]

    # The request's deferral and the worker's filing, each tagged with capture and user.
    lines = eventually(lambda: (found := lines_about_it()) and len(found) >= 2 and found)
    assert any(" shared.services.pipeline WARNING " in line for line in lines), lines
    assert any(" shared.services.filing INFO " in line for line in lines), lines
    assert all("user_id=dev" in line for line in lines), lines
    assert marker not in log_path.read_text()


def test_capture_text_is_logged_only_when_asked(app_env, monkeypatch, caplog) -> None:
    from shared import tracing
    from shared.settings import get_settings

    logger = logging.getLogger("tests.capture_text")
    try:
        for setting, logged in (("false", False), ("true", True)):
            monkeypatch.setenv("LOG_CAPTURE_TEXT", setting)
            get_settings.cache_clear()
            caplog.clear()
            with caplog.at_level(logging.INFO, logger=logger.name):
                tracing.log_capture_text(logger, "text", "c-1", "call the dentist")
            assert ("call the dentist" in caplog.text) is logged
    finally:
        get_settings.cache_clear()


def test_importing_the_app_loads_no_telemetry_sdk() -> None:
    # Cold start: the SDK, exporters and azure-monitor load on the first invocation, if ever.
    probe = (
        "import json, sys, function_app\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith("
        "('opentelemetry.sdk', 'opentelemetry.exporter', 'azure.monitor')))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []


def ancestors(span: SpanRecord, by_id: dict[str, SpanRecord]) -> list[SpanRecord]:
    chain = []
    while span.parent_id in by_id:
        span = by_id[span.parent_id]
        chain.append(span)
    return chain
