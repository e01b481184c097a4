"""The fakes' own promises beyond the repository's (whose contract is checked against Cosmos in
tests/integration/test_repository_contract.py): the ports' methods as the protocols declare
them, at-least-once delivery, create-only uploads, scripted answers, injected faults, and the
unit tests' shut-off network."""

from __future__ import annotations

import asyncio
import inspect
import socket
import subprocess
from datetime import timedelta

import pytest

from shared.domain import ports
from shared.domain.classification import Bucket
from shared.domain.documents import utcnow
from shared.domain.errors import ClassifierUnavailable, StorageUnavailable, VoiceNoteTooLarge
from shared.domain.messages import ClassifyJob
from tests.fakes import (
    USER,
    FakeCaptureRepository,
    FakePushSender,
    FakePushSubscriptions,
    FakeQueues,
    Fakes,
    FakeVoiceNotes,
    ScriptedClassifier,
    ScriptedTranscriber,
    guess,
    new_id,
    text_item,
)


@pytest.mark.parametrize(
    ("port", "fake"),
    [
        (ports.CaptureRepository, FakeCaptureRepository),
        (ports.CaptureQueues, FakeQueues),
        (ports.VoiceNoteStore, FakeVoiceNotes),
        (ports.Classifier, ScriptedClassifier),
        (ports.Transcriber, ScriptedTranscriber),
        (ports.PushSubscriptions, FakePushSubscriptions),
        (ports.PushSender, FakePushSender),
    ],
)
def test_each_fake_has_its_ports_methods_as_declared(port: type, fake: type) -> None:
    methods = [name for name in vars(port) if not name.startswith("_")]
    assert methods
    for name in methods:
        declared, faked = getattr(port, name), getattr(fake, name, None)
        assert faked is not None, f"{fake.__name__} lacks {name}"
        # Parameters by name, kind and default (the annotations are strings here).
        shape = [
            (p.name, p.kind, p.default) for p in inspect.signature(declared).parameters.values()
        ]
        assert shape == [
            (p.name, p.kind, p.default) for p in inspect.signature(faked).parameters.values()
        ], f"{fake.__name__}.{name}"
        # Awaited as the protocol's is, or iterated with `async for` (CaptureRepository.newest).
        if inspect.iscoroutinefunction(declared):
            assert inspect.iscoroutinefunction(faked), f"{fake.__name__}.{name}"
        else:
            assert inspect.isasyncgenfunction(faked), f"{fake.__name__}.{name}"


def test_the_bundle_is_the_services_adapters(unit_settings, offline: list[str]) -> None:
    fakes = Fakes()
    bundle = fakes.adapters
    assert isinstance(bundle, ports.Adapters)
    assert (bundle.repo, bundle.classifier, bundle.queues, bundle.voice, bundle.transcriber) == (
        fakes.repo,
        fakes.classifier,
        fakes.queues,
        fakes.voice,
        fakes.transcriber,
    )
    push = fakes.push
    assert isinstance(push, ports.PushAdapters)
    assert (push.subscriptions, push.sender) == (fakes.subscriptions, fakes.sender)


def job(n: int = 0) -> ClassifyJob:
    return ClassifyJob(capture_id=new_id(), user_id=f"user-{n}")


async def chunks(*parts: bytes):
    for part in parts:
        yield part


async def test_deliver_hands_each_pending_job_over_once_as_a_copy(fakes: Fakes) -> None:
    sent = [job(n) for n in range(3)]
    for j in sent:
        await fakes.queues.enqueue_classify(j)
    taken: list[ClassifyJob] = []

    async def handler(j: ClassifyJob) -> str:
        taken.append(j)
        return j.capture_id

    assert await fakes.queues.deliver(handler) == [j.capture_id for j in sent]
    assert taken == sent and all(a is not b for a, b in zip(taken, sent, strict=True))
    assert not fakes.queues.pending and await fakes.queues.deliver(handler) == []


async def test_deliver_twice_is_a_duplicate_delivery(fakes: Fakes) -> None:
    await fakes.queues.enqueue_classify(job())
    calls: list[str] = []

    async def handler(j: ClassifyJob) -> None:
        calls.append(j.capture_id)

    await fakes.queues.deliver(handler, twice=True)
    assert len(calls) == 2 and calls[0] == calls[1]
    assert len(fakes.queues.delivered) == 2


async def test_deliver_twice_concurrently_runs_both_at_once(fakes: Fakes) -> None:
    await fakes.queues.enqueue_classify(job())
    both = asyncio.Barrier(2)

    async def handler(j: ClassifyJob) -> bool:
        await asyncio.wait_for(both.wait(), timeout=5)  # never passes if run one by one
        return True

    assert await fakes.queues.deliver(handler, twice=True, concurrently=True) == [True, True]


async def test_a_job_whose_handler_fails_is_delivered_again_later(fakes: Fakes) -> None:
    first, second = job(1), job(2)
    await fakes.queues.enqueue_classify(first)
    await fakes.queues.enqueue_classify(second)

    async def model_down(j: ClassifyJob) -> None:
        raise ClassifierUnavailable("503")

    with pytest.raises(ClassifierUnavailable):
        await fakes.queues.deliver(model_down)
    assert [s.job for s in fakes.queues.pending] == [first, second]


async def test_jobs_not_due_yet_and_jobs_sent_meanwhile_stay_pending(fakes: Fakes) -> None:
    now, later = job(1), job(2)
    await fakes.queues.enqueue_classify(now)
    await fakes.queues.enqueue_classify(later, delay_s=120)
    follow_on = job(3)

    async def handler(j: ClassifyJob) -> None:
        await fakes.queues.enqueue_classify(follow_on, delay_s=1)

    await fakes.queues.deliver(handler, max_delay_s=5)
    assert [s.job for s in fakes.queues.pending] == [later, follow_on]
    assert fakes.queues.delivered == [now]


async def test_uploads_create_once_and_stop_at_the_limit(fakes: Fakes) -> None:
    voice = fakes.voice
    assert await voice.upload("dev/a.m4a", chunks(b"ab", b"cd"), "audio/mp4", 10) == 4
    assert await voice.upload("dev/a.m4a", chunks(b"xyz"), "audio/mp4", 10) == 3
    assert voice.blobs["dev/a.m4a"] == b"abcd"  # the first upload stands
    with pytest.raises(VoiceNoteTooLarge):
        await voice.upload("dev/b.m4a", chunks(b"123456", b"789"), "audio/mp4", 8)
    assert not await voice.exists("dev/b.m4a")  # nothing committed
    await voice.delete("dev/a.m4a")
    await voice.delete("dev/a.m4a")
    assert voice.blobs == {}


async def test_an_upload_url_names_its_blob_on_a_loopback_host(fakes: Fakes) -> None:
    expires = utcnow() + timedelta(minutes=5)
    url = await fakes.voice.upload_url("dev/x.m4a", expires)
    assert url.startswith("http://127.0.0.1:10000/") and "/voice-notes/dev/x.m4a?" in url
    assert fakes.voice.upload_urls == {"dev/x.m4a": expires}


async def test_scripted_models_answer_in_order_then_refuse(fakes: Fakes) -> None:
    fakes.classifier.then(guess(Bucket.IDEAS, 0.9), ClassifierUnavailable("down"))
    assert (await fakes.classifier.classify("a")).bucket is Bucket.IDEAS
    with pytest.raises(ClassifierUnavailable):
        await fakes.classifier.classify("b")
    with pytest.raises(AssertionError, match="no answer scripted"):
        await fakes.classifier.classify("c")
    assert fakes.classifier.texts == ["a", "b", "c"]


async def test_faults_and_hooks_apply_to_the_next_call_only(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())
    order: list[str] = []
    fakes.repo.before_next("get", lambda: order.append("hook"))
    fakes.repo.fail_next("get", StorageUnavailable("Cosmos answered 503"))
    assert fakes.repo.armed == ["get"]
    with pytest.raises(StorageUnavailable):
        await fakes.repo.get(USER, item.id)
    assert order == ["hook"] and fakes.repo.armed == []
    assert await fakes.repo.get(USER, item.id) == item
    for not_a_port_method in ("sav", "stored", "_write"):
        with pytest.raises(ValueError, match="no port method"):
            fakes.repo.fail_next(not_a_port_method, StorageUnavailable("typo"))
    fakes.repo.before_next("newest", lambda: None)  # an async generator is one


async def test_a_hooks_own_calls_do_not_use_up_what_was_armed(fakes: Fakes) -> None:
    item = fakes.repo.seed(text_item())

    async def concurrent_writer() -> None:
        await fakes.repo.save(fakes.repo.stored(USER, item.id))  # not the armed save

    fakes.repo.before_next("save", concurrent_writer)
    fakes.repo.fail_next("save", StorageUnavailable("Cosmos answered 503"))
    with pytest.raises(StorageUnavailable):
        await fakes.repo.save(item)
    assert fakes.repo.calls == ["save", "save"]


def test_unit_tests_cannot_open_a_connection_or_start_a_process(offline: list[str]) -> None:
    with socket.socket() as s, pytest.raises(AssertionError, match="connect"):
        s.connect(("127.0.0.1", 9))
    with pytest.raises(AssertionError, match="process"):
        subprocess.run(["true"], check=False)
    assert offline == ["connect", "start a process"]
    offline.clear()  # seen: the fixture would fail the test for them at teardown
