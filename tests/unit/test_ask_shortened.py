"""A question's word held by a capture's shortening of it (services/ask_words.shortened, used
by the offline answer's weights): "surg" for "surgery", "approx" for "approximately", and a
question's word that begins a capture's long one ("complete" for "completion"); not a short
word that merely begins another ("cat", "category"), a stop word, or a short capture word
where the question's is short too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.domain.classification import Bucket
from shared.services import ask_offline
from shared.services.ask import AskLimits, answer_of, ask, new_question
from shared.services.ask_words import shortened, stem, stems_of
from shared.services.filing import file_capture
from tests.fakes import USER, Fakes, text_item

MON = datetime(2026, 11, 23, 9, tzinfo=UTC)
NOW = MON + timedelta(days=7)


def _held(question_word: str, capture: str) -> bool:
    return stem(question_word) in shortened([stem(question_word)], stems_of(capture))


@pytest.mark.parametrize(
    ("question_word", "capture"),
    [
        ("surgery", "surg 2 reopening pushed to weds"),
        ("approximately", "approx 3 hrs"),
        ("accommodation", "accom booked for the 12th"),
        ("university", "univ open day on sat"),
        ("physio", "physiotherapy on tues"),  # the question's shortening, the capture's long word
        ("complete", "completion is the 22nd"),
    ],
)
def test_a_shortening_holds_the_word(question_word: str, capture: str) -> None:
    assert _held(question_word, capture)


@pytest.mark.parametrize(
    ("question_word", "capture"),
    [
        ("category", "the cat was sick"),  # 3 letters is not a shortening
        ("passport", "did I pass?"),  # "pass" is stemmed "pas"
        ("overtime", "it's over"),  # a stop word
        ("renew", "the lease renewal letter"),  # the reverse needs a long capture word
        ("cash", "the cashier"),  # the reverse needs a long capture word
        ("surgery", "the surgeon rang"),  # neither begins the other
    ],
)
def test_a_word_that_only_begins_another_is_no_shortening(question_word: str, capture: str) -> None:
    assert not _held(question_word, capture)


def test_a_word_held_in_full_is_not_counted_again() -> None:
    assert shortened([stem("surgery")], stems_of("surgery and surg 2")) == set()


async def _file(fakes: Fakes, text: str, bucket: Bucket, day: int, title: str) -> str:
    item = fakes.repo.seed(text_item(text, created_at=MON + timedelta(days=day, hours=1)))
    filed = await file_capture(item, item.picked(bucket, title), fakes.repo, fakes.outbox)
    return filed.id


async def _cited(fakes: Fakes, text: str) -> list[str]:
    done = await answer_of(ask(USER, new_question(text), NOW, AskLimits(), fakes.adapters))
    return [c.capture_id for c in done.answer.citations]


async def test_a_capture_that_shortens_the_questions_word_answers_it(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    surg = await _file(
        fakes, "Lech says surg 2 reopening pushed to weds 16th dec", Bucket.PROJECTS, 1, "Refit"
    )
    await _file(fakes, "Gym reopening on Monday.", Bucket.ADMIN, 0, "Gym")
    question = "when is the surgery reopening?"
    assert await _cited(fakes, question) == [surg]
    # Without it "surgery" is a word no capture holds, and "reopening" does not say which.
    monkeypatch.setattr(ask_offline, "PREFIX_CREDIT", 0.0)
    assert await _cited(fakes, question) != [surg]
