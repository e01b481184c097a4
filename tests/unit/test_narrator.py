"""shared/agui/narrator.py: a capture's domain progress, stages and resume results told as the
AG-UI runs clients rely on (docs/contract.md), each a valid run, whatever the door."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

import pytest
from ag_ui_validate.pytest_plugin import assert_valid_agui

from shared.agui import narrator
from shared.agui.events import Conversation
from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.errors import Conflict, Invalid
from shared.domain.progress import (
    Answered,
    Deferred,
    Refiling,
    Settled,
    Stage,
    StageReached,
    Stopped,
    Stored,
)
from tests.fakes import Fakes, guess, text_item, voice_item

LIVE_OUTCOME = [
    "RUN_STARTED",
    "STEP_STARTED",
    "STEP_FINISHED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "CUSTOM",
    "RUN_FINISHED",
]
ASKED = [*LIVE_OUTCOME[:-1], "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]


async def stream(*steps: Any) -> AsyncIterator[Any]:
    for step in steps:
        yield step


async def told(events: AsyncIterator[Any]) -> list[dict]:
    run = [e.model_dump(mode="json", by_alias=True, exclude_none=True) async for e in events]
    assert_valid_agui(run, max_warnings=0)
    return run


def types(run: Iterable[dict]) -> list[str]:
    return [e["type"] for e in run]


def filed(confidence: float = 0.9) -> InboxItem:
    bucket = Bucket.PEOPLE if confidence >= 0.3 else None
    return text_item().classified(guess(bucket, confidence, "Call Sarah", question="Who?"))


async def live(fakes: Fakes, *progress: Any, conversation: Conversation | None = None) -> list:
    events = narrator.capture_run(
        "t", "r", stream(*progress), conversation or Conversation(), fakes.outbox.delivered
    )
    return await told(events)


async def test_a_settled_capture_is_told_with_its_outcome(fakes: Fakes) -> None:
    item = fakes.repo.seed(filed())
    run = await live(fakes, Stored(text_item()), Settled(item))
    assert types(run) == LIVE_OUTCOME
    assert run[1]["stepName"] == "Classifier"
    assert run[-2]["name"] == "CLASSIFIED" and run[-1]["result"]["bucket"] == "People"


async def test_a_deferred_capture_finishes_queued(fakes: Fakes) -> None:
    item = text_item(status=Status.QUEUED)
    run = await live(fakes, Stored(item), Deferred(item))
    assert types(run) == ["RUN_STARTED", "STEP_STARTED", "STEP_FINISHED", "RUN_FINISHED"]
    assert run[-1]["result"] == {"status": "queued", "inboxItemId": item.id}


@pytest.mark.parametrize("stored", [False, True])
async def test_a_refusal_is_a_run_error_with_its_code(fakes: Fakes, stored: bool) -> None:
    refused = Conflict("used", "IDEMPOTENCY_KEY_REUSED")
    progress = (Stored(text_item()), refused) if stored else (refused,)
    run = await live(fakes, *progress)
    steps = ["STEP_STARTED", "STEP_FINISHED"] if stored else []
    assert types(run) == ["RUN_STARTED", *steps, "RUN_ERROR"]
    assert run[-1]["code"] == "IDEMPOTENCY_KEY_REUSED"


async def test_a_question_ends_an_interrupt_aware_run_with_an_interrupt(fakes: Fakes) -> None:
    item = fakes.repo.seed(filed(0.1))
    said = ({"id": "m1", "role": "user", "content": "zq"},)
    run = await live(
        fakes,
        Stored(text_item()),
        Settled(item),
        conversation=Conversation(interrupts=True, messages=said),
    )
    assert types(run) == ASKED
    assert run[-1]["outcome"]["type"] == "interrupt"
    assert run[-2]["messages"][0] == said[0]


async def test_a_feed_replays_a_voice_note_through_both_steps(fakes: Fakes) -> None:
    item = fakes.repo.seed(voice_item(status=Status.RECEIVED, text="Call Sarah"))
    settled = item.classified(guess(Bucket.PEOPLE, 0.9, "Call Sarah"))
    stages = stream(StageReached(item, Stage.CLASSIFYING), StageReached(settled, Stage.SETTLED))
    run = await told(narrator.feed_run(item, stages, fakes.outbox.delivered))
    assert types(run) == [
        "RUN_STARTED",
        "STEP_STARTED",
        "STEP_FINISHED",
        "STEP_STARTED",
        *LIVE_OUTCOME[2:],
    ]
    assert [e["stepName"] for e in run if e["type"] == "STEP_STARTED"] == [
        "Transcription",
        "Classifier",
    ]
    assert run[0]["runId"] == item.run_id


async def test_a_feed_in_a_callers_run_tells_that_run(fakes: Fakes) -> None:
    item = fakes.repo.seed(filed())
    stages = stream(StageReached(item, Stage.SETTLED))
    run = await told(narrator.feed_run(item, stages, fakes.outbox.delivered, run_id="R"))
    assert run[0]["threadId"] == run[-1]["threadId"] == item.thread_id
    assert run[0]["runId"] == run[-1]["runId"] == "R"


async def test_a_feed_that_stops_ends_in_its_error(fakes: Fakes) -> None:
    item = text_item()
    stages = stream(StageReached(item, Stage.CLASSIFYING), Stopped("TIMEOUT", "later"))
    run = await told(narrator.feed_run(item, stages, fakes.outbox.delivered))
    # As the feed always did: a run that errors may leave its step open.
    assert types(run) == ["RUN_STARTED", "STEP_STARTED", "RUN_ERROR"]
    assert run[-1]["code"] == "TIMEOUT"


async def resumed(fakes: Fakes, result: Any) -> list[dict]:
    async def work() -> Any:
        if isinstance(result, Exception):
            raise result
        return result

    run = narrator.resume_run("t", "r", work, Conversation(interrupts=True), fakes.outbox.delivered)
    return await told(run)


async def test_a_resume_tells_the_answer_it_carried_out(fakes: Fakes) -> None:
    item = fakes.repo.seed(filed())
    assert (
        types(await resumed(fakes, Answered(item, with_outcome=True)))
        == LIVE_OUTCOME[:1] + (LIVE_OUTCOME[3:])
    )
    kept = await resumed(fakes, Answered(item, with_outcome=False))
    assert types(kept) == ["RUN_STARTED", "RUN_FINISHED"]
    assert kept[-1]["result"] == {"status": "filed", "inboxItemId": item.id}


async def test_a_resume_that_files_again_is_told_as_a_live_run(fakes: Fakes) -> None:
    item = fakes.repo.seed(filed())
    run = await resumed(fakes, Refiling(stream(Stored(text_item()), Settled(item))))
    assert types(run) == LIVE_OUTCOME


async def test_a_refused_resume_is_a_run_error(fakes: Fakes) -> None:
    run = await resumed(fakes, Invalid("answer them all", "PARTIAL_RESUME"))
    assert types(run) == ["RUN_STARTED", "RUN_ERROR"] and run[-1]["code"] == "PARTIAL_RESUME"
