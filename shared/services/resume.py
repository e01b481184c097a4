"""Resume an interrupted thread (AG-UI 1.0's rules, told in domain terms): the user's answers to
the questions its captures asked. An answer is a follow-up, a bucket is the user's pick,
`cancelled` closes the question and leaves the capture as it is. The rules are checked before
anything changes, each refusal a `Refused` with its code; a replayed resume answers again
without filing twice. What the last answer did is returned for the door to tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from shared.domain.capture import InboxItem
from shared.domain.errors import Conflict, Invalid, NotFound
from shared.domain.interrupts import (
    AnswerPayload,
    BucketPayload,
    InterruptRecord,
    parse_payload,
    response_of,
)
from shared.domain.ports import Adapters, CaptureRepository
from shared.domain.progress import Answered, Refiling, Resumed
from shared.services.bucket_pick import pick_bucket
from shared.services.capture import TextCapture
from shared.services.follow_up import answer_question
from shared.services.retry_stale import on_latest


class ResumeAnswer(BaseModel):
    """One entry of RunAgentInput.resume."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None


class ResumeRequest(BaseModel):
    user_id: str
    thread_id: str
    run_id: str
    answers: list[ResumeAnswer]


@dataclass(frozen=True)
class _Step:
    """One answer, checked: carried out on the capture's open question, or told again
    (`replay`) when this very answer closed it already."""

    item: InboxItem
    answer: ResumeAnswer
    payload: AnswerPayload | BucketPayload | None
    replay: bool


async def resume(request: ResumeRequest, adapters: Adapters) -> Resumed:
    """Carry out every answer; every one but the last quietly, and the last one's result is
    returned. Raises Invalid or Conflict, before anything changes when a rule is broken."""
    steps = await _plan(request, adapters.repo)
    for step in steps[:-1]:
        done = await _carry_out(step, request, adapters)
        if isinstance(done, Refiling):
            async for _ in done.progress:
                pass
    return await _carry_out(steps[-1], request, adapters)


async def _plan(request: ResumeRequest, repo: CaptureRepository) -> list[_Step]:
    """Check the resume against the thread's questions; nothing changes if one check fails."""
    on_thread = await repo.on_thread(request.user_id, request.thread_id)
    asked: dict[str, tuple[InboxItem, InterruptRecord]] = {
        record.id: (item, record) for item in on_thread for record in item.interrupts
    }
    steps: list[_Step] = []
    ids = [a.interrupt_id for a in request.answers]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise Invalid(f"The resume answers {twice} more than once.", "DUPLICATE_ANSWER")
    for answer in request.answers:
        if answer.interrupt_id not in asked:
            raise Invalid(
                f"This thread asked no question {answer.interrupt_id!r}.", "UNKNOWN_INTERRUPT_ID"
            )
        item, record = asked[answer.interrupt_id]
        payload = None
        if answer.status == "resolved":
            payload = parse_payload(record.takes, answer.payload)
            if payload is None:
                raise Invalid(
                    f"The answer to {record.id!r} does not fit its responseSchema.",
                    "INVALID_PAYLOAD",
                )
        if not record.is_open and not _same_answer(record, answer, payload):
            raise Conflict(f"The question {record.id!r} was answered already.", "INTERRUPT_CLOSED")
        steps.append(_Step(item, answer, payload, replay=not record.is_open))
    # A capture the resume answers for is answered, even if its answer (replayed now) has
    # since led to a new question of its own.
    answered = {step.item.id for step in steps}
    missing = [i.open_interrupt.id for i in on_thread if i.open_interrupt and i.id not in answered]
    if missing:
        raise Invalid(
            f"The resume must answer every open question of the thread; missing: {missing}.",
            "PARTIAL_RESUME",
        )
    if not steps:
        raise Invalid("This thread has no question to answer.", "NOTHING_TO_RESUME")
    return steps


def _same_answer(
    record: InterruptRecord, answer: ResumeAnswer, payload: AnswerPayload | BucketPayload | None
) -> bool:
    return record.closed_with(answer.status, response_of(payload) if payload else None)


async def _carry_out(step: _Step, request: ResumeRequest, adapters: Adapters) -> Resumed:
    item, run_id = step.item, request.run_id
    if step.replay:
        current = await adapters.repo.get(item.user_id, item.id)
        if current is None or current.is_deleted:
            raise _deleted()
        return Answered(current, with_outcome=True)
    if step.answer.status == "cancelled":
        return Answered(await _cancel(item, step.answer.interrupt_id, adapters.repo), False)
    if isinstance(step.payload, BucketPayload):
        try:
            picked = await pick_bucket(
                item.user_id,
                item.id,
                step.payload.bucket,
                adapters,
                answering=step.answer.interrupt_id,
            )
        except NotFound as missing:
            # Gone since the plan read it: told as the conflict it is for this resume.
            raise Conflict(missing.message, missing.code or "CONFLICT") from None
        return Answered(picked, with_outcome=True)
    assert isinstance(step.payload, AnswerPayload)
    answer = TextCapture(
        user_id=item.user_id,
        thread_id=item.thread_id,
        run_id=run_id,
        text=step.payload.answer,
        capture_key=run_id,
    )
    return Refiling(answer_question(item, answer, adapters, answering=step.answer.interrupt_id))


async def _cancel(item: InboxItem, interrupt_id: str, repo: CaptureRepository) -> InboxItem:
    async def attempt(item: InboxItem) -> InboxItem:
        if item.is_deleted:
            raise _deleted()
        question = item.interrupt(interrupt_id)
        if question is not None and not question.is_open:
            if question.closed_with("cancelled", None):
                return item  # this very cancel, taken already
            raise Conflict(
                f"The question {interrupt_id!r} was answered already.", "INTERRUPT_CLOSED"
            )
        return await repo.save(item.interrupt_cancelled())

    return await on_latest(item, repo, attempt, gone=_deleted, busy=_busy)


def _deleted() -> Conflict:
    return Conflict("This capture was deleted.", "CAPTURE_DELETED")


def _busy() -> Conflict:
    return Conflict("This capture keeps changing. Please try again.", "CONFLICT")
