"""The capture's lifecycle as a pure state machine: every status against every transition."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from shared.domain.capture import Clarification, InboxItem, Status
from shared.domain.classification import Bucket, Classification
from shared.domain.errors import IllegalTransition
from shared.domain.interrupts import InterruptKind, InterruptRecord
from shared.domain.outcomes import SAY_AGAIN_QUESTION, FailureCode, Outcome

S = Status
GUESS = Classification(bucket=Bucket.PEOPLE, confidence=0.92, title="Call Sarah")
ANSWER = Clarification(run_id="run-2", text="It's about Sarah's budget")

TRANSITIONS: dict[str, Callable[[InboxItem], InboxItem]] = {
    "start_transcribing": InboxItem.start_transcribing,
    "transcribed": lambda item: item.transcribed("call Sarah"),
    "queued": InboxItem.queued,
    "classified": lambda item: item.classified(GUESS),
    "picked": lambda item: item.picked(Bucket.ADMIN, "Tiles"),
    "reopened": lambda item: item.reopened(ANSWER),
    "failed (audio)": lambda item: item.failed(FailureCode.AUDIO_UNDECODABLE),
    "failed (classify)": lambda item: item.failed(FailureCode.CLASSIFY_FAILED),
    "tombstoned": InboxItem.tombstoned,
    "interrupt_cancelled": InboxItem.interrupt_cancelled,
}

SETTLED = {S.FILED, S.NEEDS_REVIEW, S.NEEDS_CLARIFICATION, S.UNRESOLVED}

# For each transition, the statuses it may start from and the status it leads to. Every
# (status, transition) pair not listed must raise IllegalTransition.
EXPECTED: dict[str, dict[Status, Status]] = {
    "start_transcribing": {S.AWAITING_UPLOAD: S.TRANSCRIBING, S.TRANSCRIBING: S.TRANSCRIBING},
    "transcribed": {S.TRANSCRIBING: S.RECEIVED},
    "queued": {S.RECEIVED: S.QUEUED, S.QUEUED: S.QUEUED, S.FAILED: S.QUEUED},
    "classified": {s: S.FILED for s in (S.RECEIVED, S.QUEUED, S.FAILED)},
    "picked": {s: S.FILED for s in (S.RECEIVED, S.QUEUED, S.FAILED, *SETTLED)},
    "reopened": {S.NEEDS_CLARIFICATION: S.RECEIVED, S.NEEDS_REVIEW: S.RECEIVED},
    "failed (audio)": {S.AWAITING_UPLOAD: S.FAILED, S.TRANSCRIBING: S.FAILED},
    "failed (classify)": {S.RECEIVED: S.FAILED, S.QUEUED: S.FAILED},
    "tombstoned": {s: S.DELETING for s in Status if s is not S.DELETING},
    "interrupt_cancelled": {
        S.NEEDS_CLARIFICATION: S.NEEDS_CLARIFICATION,
        S.NEEDS_REVIEW: S.NEEDS_REVIEW,
    },
}
# The statuses in which a capture waits for the user's answer to a question.
ASKING = {S.NEEDS_CLARIFICATION: InterruptKind.ANSWER, S.NEEDS_REVIEW: InterruptKind.BUCKET}


def capture(status: Status, text: str | None = "call Sarah about the budget") -> InboxItem:
    return InboxItem(
        id="c-1",
        user_id="dev",
        source="voice",
        text=text,
        thread_id="t-1",
        run_id="run-1",
        status=status,
        audio_blob="dev/c-1.m4a",
        interrupts=[InterruptRecord(id="c-1:1", kind=ASKING[status])] if status in ASKING else [],
    )


@pytest.mark.parametrize("transition", list(TRANSITIONS))
@pytest.mark.parametrize("status", list(Status))
def test_every_status_against_every_transition(status: Status, transition: str) -> None:
    before = capture(status)
    allowed = EXPECTED[transition]
    if status not in allowed:
        with pytest.raises(IllegalTransition):
            TRANSITIONS[transition](before)
        return
    after = TRANSITIONS[transition](before)
    assert after.status is allowed[status]
    assert before.status is status, "a transition returns a copy and leaves the capture alone"
    assert after.updated_at >= before.updated_at and after.id == before.id


@pytest.mark.parametrize(
    ("confidence", "rounds", "status", "outcome", "bucket"),
    [
        (0.92, 0, S.FILED, Outcome.CLASSIFIED, Bucket.PEOPLE),
        (0.6, 0, S.FILED, Outcome.CLASSIFIED, Bucket.PEOPLE),
        (0.45, 0, S.NEEDS_REVIEW, Outcome.LOW_CONFIDENCE, Bucket.PEOPLE),
        (0.1, 0, S.NEEDS_CLARIFICATION, Outcome.MISUNDERSTOOD, None),
        (0.1, 1, S.NEEDS_CLARIFICATION, Outcome.MISUNDERSTOOD, None),
        (0.1, 2, S.UNRESOLVED, Outcome.UNRESOLVED, None),
    ],
)
def test_classified_applies_the_thresholds_and_the_rounds_limit(
    confidence: float, rounds: int, status: Status, outcome: Outcome, bucket: Bucket | None
) -> None:
    answers = [Clarification(run_id=f"r{n}", text=f"answer {n}") for n in range(rounds)]
    item = capture(S.QUEUED).model_copy(update={"clarifications": answers})
    guess = GUESS.model_copy(update={"confidence": confidence})
    after = item.classified(guess)
    assert (after.status, after.outcome, after.filed_bucket) == (status, outcome, bucket)
    assert after.chosen_by == ("classifier" if bucket else None)
    asks = outcome in (Outcome.LOW_CONFIDENCE, Outcome.MISUNDERSTOOD)
    assert bool(after.question_text) is asks and after.confidence == confidence


def test_a_silent_voice_note_is_asked_again() -> None:
    silent = Classification(bucket=None, confidence=0.0, title="Empty", question=SAY_AGAIN_QUESTION)
    after = capture(S.RECEIVED, text="").classified(silent)
    assert after.status is S.NEEDS_CLARIFICATION and after.question_text == SAY_AGAIN_QUESTION


def test_picked_files_where_the_user_says_and_clears_a_failure() -> None:
    failed = capture(S.QUEUED).failed(FailureCode.CLASSIFY_FAILED)
    after = failed.picked(Bucket.ADMIN, "Tiles")
    assert (after.filed_bucket, after.chosen_by, after.confidence) == (Bucket.ADMIN, "user", 1.0)
    assert after.outcome is Outcome.CLASSIFIED and after.error is None and not after.question_text


@pytest.mark.parametrize("status", [S.AWAITING_UPLOAD, S.TRANSCRIBING, S.DELETING])
def test_only_words_can_be_picked(status: Status) -> None:
    assert not capture(status).may_be_picked()
    assert not capture(S.FAILED, text=None).may_be_picked()  # an undecodable voice note
    with pytest.raises(IllegalTransition):
        capture(S.FAILED, text=None).picked(Bucket.ADMIN, "x")


def test_reopened_keeps_the_words_and_starts_a_new_run_of_the_thread() -> None:
    asked = capture(S.QUEUED).classified(GUESS.model_copy(update={"confidence": 0.1}))
    after = asked.reopened(ANSWER)
    assert after.text == asked.text and after.clarifications == [ANSWER]
    assert after.run_id == "run-2" and after.thread_id == "t-1"
    assert after.outcome is None and after.question_text is None
    assert after.text_to_classify() == f"{ANSWER.text}\n{asked.text}"


@pytest.mark.parametrize("code", list(FailureCode))
@pytest.mark.parametrize("status", list(Status))
def test_a_failure_overwrites_only_a_capture_waiting_for_that_work(
    status: Status, code: FailureCode
) -> None:
    waiting = (
        {S.RECEIVED, S.QUEUED}
        if code is FailureCode.CLASSIFY_FAILED
        else {S.AWAITING_UPLOAD, S.TRANSCRIBING}
    )
    item = capture(status)
    assert item.may_fail_with(code) is (status in waiting)
    if status in waiting:
        assert item.failed(code).error is code
    else:
        with pytest.raises(IllegalTransition):
            item.failed(code)


def test_the_tombstone_keeps_no_words_of_the_users() -> None:
    asked = capture(S.QUEUED).classified(GUESS.model_copy(update={"confidence": 0.1}))
    after = asked.reopened(ANSWER).tombstoned()
    assert after.is_deleted and after.status is S.DELETING
    assert (after.text, after.title, after.question_text, after.clarifications) == (
        None,
        None,
        None,
        [],
    )


@pytest.mark.parametrize("status", list(Status))
def test_the_predicates(status: Status) -> None:
    item = capture(status)
    assert item.is_deleted is (status is S.DELETING)
    assert item.is_settled is (status in SETTLED)
    assert item.awaits_audio is (status in {S.AWAITING_UPLOAD, S.TRANSCRIBING})
    assert item.may_be_classified() is (status in {S.RECEIVED, S.QUEUED, S.FAILED})
    assert not capture(status, text="").may_be_classified()


@pytest.mark.parametrize(
    ("confidence", "kind"), [(0.45, InterruptKind.BUCKET), (0.1, InterruptKind.ANSWER), (0.9, None)]
)
def test_an_outcome_that_asks_opens_one_question_with_an_id_of_its_round(
    confidence: float, kind: InterruptKind | None
) -> None:
    after = capture(S.QUEUED).classified(GUESS.model_copy(update={"confidence": confidence}))
    if kind is None:
        assert after.open_interrupt is None and after.interrupts == []
        return
    assert after.open_interrupt is not None and after.open_interrupt.kind is kind
    assert after.open_interrupt.id == "c-1:1"


def test_an_answer_resolves_the_question_and_the_next_round_asks_anew() -> None:
    asked = capture(S.QUEUED).classified(GUESS.model_copy(update={"confidence": 0.1}))
    reopened = asked.reopened(ANSWER)
    assert reopened.open_interrupt is None
    (closed,) = reopened.interrupts
    assert closed.status == "resolved" and closed.response == {"answer": ANSWER.text}
    again = reopened.classified(GUESS.model_copy(update={"confidence": 0.45}))
    assert [i.id for i in again.interrupts] == ["c-1:1", "c-1:2"]
    assert again.open_interrupt is not None and again.open_interrupt.kind is InterruptKind.BUCKET


def test_a_pick_resolves_the_question_with_the_bucket() -> None:
    review = capture(S.QUEUED).classified(GUESS.model_copy(update={"confidence": 0.45}))
    picked = review.picked(Bucket.ADMIN, "Tiles")
    assert picked.open_interrupt is None
    assert picked.interrupts[-1].status == "resolved"
    assert picked.interrupts[-1].response == {"bucket": "Admin"}


def test_a_cancelled_question_leaves_the_capture_as_it_is() -> None:
    review = capture(S.QUEUED).classified(GUESS.model_copy(update={"confidence": 0.45}))
    kept = review.interrupt_cancelled()
    assert kept.open_interrupt is None and kept.interrupts[-1].status == "cancelled"
    assert (kept.status, kept.filed_bucket) == (review.status, review.filed_bucket)
    with pytest.raises(IllegalTransition):
        kept.interrupt_cancelled()  # nothing is open any more
