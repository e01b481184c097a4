"""The capture rules every door follows (services/capture.new_text_capture): trimmed, not
empty, within the limit, and named by the request so that a retry lands on the same capture."""

import pytest

from shared.domain.errors import Invalid
from shared.domain.ids import capture_id_for
from shared.services.capture import InRun, new_text_capture


def test_a_capture_outside_a_run_is_its_own_thread_and_run() -> None:
    capture = new_text_capture("u", "  hello ", "k", 10)
    assert capture.text == "hello" and capture.capture_key == "k"
    assert capture.thread_id == capture.run_id == capture.capture_id == capture_id_for("u", "k")
    first, again = (new_text_capture("u", "hello", None, 10) for _ in range(2))
    assert first.capture_id != again.capture_id  # no key: every request is new


def test_a_run_names_its_capture_unless_an_idempotency_key_does() -> None:
    run = new_text_capture("u", "hi", None, 10, run=InRun("t", "r", answers_in_thread=True))
    assert (run.thread_id, run.run_id, run.capture_key, run.answers_in_thread) == (
        "t",
        "r",
        "r",
        True,
    )
    keyed = new_text_capture("u", "hi", "k", 10, run=InRun("t", "r"))
    assert keyed.capture_key == "k"


@pytest.mark.parametrize(
    ("text", "code"), [(" \n ", "EMPTY_CAPTURE"), ("x" * 11, "CAPTURE_TOO_LONG")]
)
def test_what_no_door_takes(text: str, code: str) -> None:
    with pytest.raises(Invalid) as refused:
        new_text_capture("u", text, None, 10)
    assert refused.value.code == code
