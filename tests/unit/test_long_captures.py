"""Issue 39: a long capture is kept whole. The classifier reads its start and its end (decided
once, in shared/domain/classification.py); what is stored, filed and shown is never cut
silently, and what is too long is refused with a code, never shortened."""

from __future__ import annotations

import json
from datetime import date

import pytest

from shared.agui.input import parse_answer, parse_capture_input
from shared.domain.capture import Status
from shared.domain.classification import (
    EXCERPT_GAP,
    EXCERPT_HEAD_CHARS,
    EXCERPT_TAIL_CHARS,
    Bucket,
    excerpt_to_classify,
)
from shared.domain.digest import Digest, DigestEntry, digest_note
from shared.domain.documents import utcnow
from shared.domain.errors import Invalid
from shared.domain.interrupts import MAX_ANSWER_CHARS
from shared.domain.push import notification_for
from shared.http.edge import problem_for
from shared.http.problems import Problem
from shared.http.requests import parse_plain_capture
from shared.services.capture import TextCapture
from shared.services.filing import classify_and_file, file_capture
from shared.services.follow_up import answer_question
from shared.services.pipeline import capture_text
from tests.fakes import USER, Fakes, guess, new_id, text_item


def long_text(chars: int = 20_000) -> str:
    """Words numbered in order, so that any cut shows where it was."""
    words = " ".join(f"w{n}" for n in range(chars // 3 + 1))
    return words[: chars - 1].rstrip() + "."


def test_a_short_text_is_read_whole() -> None:
    text = "x " * 2000
    assert excerpt_to_classify(text) == text


def test_a_long_text_is_read_by_its_start_and_end_at_words_with_a_visible_gap() -> None:
    text = long_text()
    excerpt = excerpt_to_classify(text)
    head, tail = excerpt.split(EXCERPT_GAP)
    assert len(excerpt) <= EXCERPT_HEAD_CHARS + EXCERPT_TAIL_CHARS + len(EXCERPT_GAP)
    assert text.startswith(head) and text.endswith(tail)
    assert text[len(head)] == " " and text[-len(tail) - 1] == " "  # whole words
    assert excerpt_to_classify(excerpt) == excerpt


async def test_a_long_capture_is_stored_and_filed_whole_and_classified_on_an_excerpt(
    fakes: Fakes,
) -> None:
    text = long_text()
    fakes.classifier.then(guess(Bucket.IDEAS, 0.9, "Long idea"))
    key = f"k-{new_id()}"
    capture = TextCapture(user_id=USER, thread_id="t", run_id=key, text=text, capture_key=key)
    [_ async for _ in capture_text(capture, fakes.adapters)]
    item = await fakes.repo.get(USER, capture.capture_id)
    assert item is not None and item.status is Status.FILED and item.text == text
    filed = await fakes.repo.get_filed(USER, Bucket.IDEAS, item.id)
    assert filed is not None and filed.text == text
    assert fakes.classifier.texts == [excerpt_to_classify(text)]


async def test_an_answer_to_a_long_capture_is_classified_with_an_excerpt_of_both(
    fakes: Fakes,
) -> None:
    text = long_text()
    item = fakes.repo.seed(text_item(text))
    unclear = guess(None, 0.1, "Unclear", question="What did you mean?")
    item = await file_capture(item, item.classified(unclear), fakes.repo, fakes.outbox)
    fakes.classifier.then(guess(None, 0.1, "Still unclear"), guess(Bucket.IDEAS, 0.9, "Idea"))
    said = TextCapture(user_id=USER, thread_id="t", run_id="f-1", text="notes", capture_key="f-1")
    [_ async for _ in answer_question(item, said, fakes.adapters)]
    stored = await fakes.repo.get(USER, item.id)
    assert stored is not None and stored.text == text and stored.filed_bucket is Bucket.IDEAS
    assert fakes.classifier.texts == ["notes", excerpt_to_classify("notes\n" + text)]


def test_an_answer_longer_than_an_answer_is_refused_not_cut(unit_settings) -> None:
    def follow_up(words: str) -> bytes:
        message = {"id": "m", "role": "user", "content": words}
        return json.dumps({"threadId": "t", "runId": "r", "messages": [message]}).encode()

    answer, _ = parse_answer(follow_up("x" * MAX_ANSWER_CHARS), "application/json", USER)
    assert answer.text == "x" * MAX_ANSWER_CHARS
    with pytest.raises(Problem) as refused:
        parse_answer(follow_up("x" * (MAX_ANSWER_CHARS + 1)), "application/json", USER)
    assert (refused.value.status, refused.value.code) == (422, "ANSWER_TOO_LONG")


async def test_the_worker_classifies_on_the_same_excerpt(fakes: Fakes) -> None:
    text = long_text(50_000)
    item = fakes.repo.seed(text_item(text))
    fakes.classifier.then(guess(Bucket.PROJECTS, 0.9, "Plan"))
    await classify_and_file(item, fakes.repo, fakes.classifier, fakes.outbox)
    assert fakes.classifier.texts == [excerpt_to_classify(text)]


def plain(text: str) -> bytes:
    return json.dumps({"text": text}).encode()


def test_both_doors_take_a_capture_of_max_capture_chars_and_refuse_one_more(
    unit_settings,
) -> None:
    limit = unit_settings().max_capture_chars
    assert limit == 100_000
    text = long_text(limit)
    assert parse_plain_capture(plain(text), "application/json", USER, None).text == text
    run = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "m", "role": "user", "content": text}],
    }
    asked = parse_capture_input(json.dumps(run).encode(), "application/json", USER, None).asked
    assert isinstance(asked, TextCapture) and asked.text == text
    for door in (
        lambda: parse_plain_capture(plain(text + "x"), "application/json", USER, None),
        lambda: parse_capture_input(
            json.dumps(
                {**run, "messages": [{"id": "m", "role": "user", "content": text + "x"}]}
            ).encode(),
            "application/json",
            USER,
            None,
        ),
    ):
        with pytest.raises(Invalid) as refused:  # the one rule, below both doors
            door()
        problem = problem_for(refused.value)
        assert (problem.status, problem.code) == (422, "CAPTURE_TOO_LONG")


def test_the_text_routes_body_limit_holds_a_capture_of_the_limit(unit_settings) -> None:
    """Room for the text as UTF-8 twice (a resume repeats it), 4 bytes a character at most."""
    settings = unit_settings()
    widest = "\U0001f600" * settings.max_capture_chars
    body = json.dumps({"text": widest}, ensure_ascii=False).encode()
    assert 2 * len(body) <= settings.max_text_body_bytes


def test_a_notification_of_a_long_capture_shows_its_cut() -> None:
    item = text_item(long_text()).model_copy(update={"title": None})
    settled = item.classified(guess(Bucket.IDEAS, 0.9, "x")).model_copy(update={"title": None})
    note = notification_for(settled)
    assert note is not None and note.body.endswith("…")


def test_the_digest_note_shows_where_it_is_cut() -> None:
    day = date(2026, 11, 27)
    title = "Renew the passport and the driving licence before the trip to Lisbon " * 2
    entry = DigestEntry(
        id="a", bucket=Bucket.ADMIN, title=title[:120], due_date=day, created_at=utcnow()
    )
    digest = Digest(
        date=day,
        time_zone="Europe/London",
        due=[entry] * 3,
        questions=[],
        next_actions=[],
        follow_ups=[],
        yesterday=[],
        review_day=False,
    )
    note = digest_note(digest, reminders=True)
    assert note is not None and len(note.body) <= 300 and note.body.endswith("…")
